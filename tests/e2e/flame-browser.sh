# flame-browser.sh - an ember flame SVG works in a real browser: headless
# Chromium, driven from a file:// URL, zooms on a click, searches with
# Ctrl-F (nested matches counted once), and resets; a screenshot is kept
# in $BUILD/tests/flame-browser.png.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	skip flame-browser "chromium is not installed (Debian package chromium; 'make deps')"
	exit 0
fi

# Known shares: 1040 samples; leaf_a|mid_ab covers all but leaf_c's 200,
# and the mid_ab inside leaf_a must not be counted twice: 80.8%.
cat >"$TMP/b.folded" <<'STACKS'
ratio;main;work;mid_ab;leaf_a 500
ratio;main;work;mid_ab;leaf_b 300
ratio;main;work;leaf_c 200
ratio;main;work;mid_ab;leaf_a;mid_ab 40
STACKS
"$EMBER" flame --folded "$TMP/b.folded" -o "$TMP/b.svg" --subtitle "browser test"
mkdir -p "$BUILD/tests"
timeout -k 5 120 python3 "$TOP/tests/e2e-flame-browser.py" "$chromium" "$TMP/b.svg" \
	"$BUILD/tests/flame-browser.png" 'leaf_a|mid_ab' 80.8 2>"$TMP/browser.err"
rc=$?
[ $rc -le 1 ] || echo "FAIL: flame-browser: driver exited $rc: $(tail -3 "$TMP/browser.err")"
