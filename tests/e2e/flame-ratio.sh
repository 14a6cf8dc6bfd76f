# flame-ratio.sh - ember collapse folds a recording as stackcollapse-perf.pl
# folds `perf script` of it, and ember flame draws the known-ratio design:
# leaf towers of 50/30/20 percent, byte-identical reruns, a neutral
# self-diff, and bad folded input reported, not fatal.
source "$TOP/tests/e2e-lib.sh"
PY="python3 $TOP/tests/e2e-flame.py"

if ! have_perf; then
	skip flame-ratio "perf (linux-perf) is not installed"
	exit 0
fi

# Keep both CPUs busy so idle CPUs do not drop samples (DESIGN.md quirks).
"$WORKLOADS/spin" 1 10 >/dev/null 2>&1 &
spinner=$!
trap 'kill $spinner 2>/dev/null; rm -rf "$TMP"' EXIT

# perf_record ARGS...: perf record, retried: perf here sometimes aborts
# on exit and leaves a file it cannot read itself.
perf_record() {
	local i
	for i in 1 2 3; do
		perf record -q "$@" >/dev/null 2>&1 && return 0
	done
	return 1
}

# collapse_agrees NAME FILE [EMBER-OPTS] [-- FOLD-OPTS]: the same lines.
collapse_agrees() {
	local name=$1 file=$2; shift 2
	local eopts=() popts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do eopts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	popts=("$@")
	# Name the fields so pid/tid are there for --pid/--tid, as the
	# folding rules' documentation asks.
	# A sample of a task already leaving (do_exit) has tid -1: perf script
	# prints "5060/-1", which the folding rules cannot parse, so they name
	# its stack after the whole header line ("comm__5060/-1___TIME:"),
	# where ember names the comm (":-1").  Such samples are left out of
	# both sides.
	perf script -i "$file" -F comm,pid,tid,time,period,event,ip,sym,symoff,dso 2>/dev/null |
		$PY fold "${popts[@]}" | grep -v '^[^;]*/-1_' >"$TMP/$name.perf"
	"$EMBER" collapse -i "$file" "${eopts[@]}" 2>"$TMP/$name.err" | grep -v '^:-1[;-]' |
		LC_ALL=C sort >"$TMP/$name.ember"
	LC_ALL=C sort -o "$TMP/$name.perf" "$TMP/$name.perf"
	local n
	n=$(wc -l <"$TMP/$name.perf")
	if [ "$n" -gt 0 ] && cmp -s "$TMP/$name.ember" "$TMP/$name.perf"; then
		pass "$name: collapse equals folded perf script ($n stacks)"
	else
		fail "$name: collapse equals folded perf script" \
			"$(diff "$TMP/$name.ember" "$TMP/$name.perf" | head -6) $(head -c 300 "$TMP/$name.err")"
	fi
}

# 2.5 CPU-seconds at 3333 Hz: about 8,300 samples, so chance moves the 50%
# tower by 0.55 points (one standard deviation), under a third of the 2 allowed.
perf_record -o "$TMP/ratio.data" -F 3333 -g -- "$WORKLOADS/ratio" 2.5
collapse_agrees ratio "$TMP/ratio.data"
collapse_agrees ratio-annotate "$TMP/ratio.data" --annotate -- --annotate
collapse_agrees ratio-pid "$TMP/ratio.data" --pid -- --pid
collapse_agrees ratio-tid "$TMP/ratio.data" --tid -- --tid
collapse_agrees ratio-period "$TMP/ratio.data" --weight period -- --period

# The graph: leaf towers as designed, within 2 points.
"$EMBER" flame -i "$TMP/ratio.data" -o "$TMP/ratio.svg" 2>"$TMP/flame.err"
if why=$($PY svg "$TMP/ratio.svg" leaf_a=50,leaf_b=30,leaf_c=20,mid_ab=80,work=100 2); then
	pass "ratio: SVG well-formed, towers match the design ($why)"
else
	fail "ratio: SVG well-formed, towers match the design" "$why $(head -c 300 "$TMP/flame.err")"
fi

# One step (replay to tree) and two (collapse, then parse) draw the same.
"$EMBER" collapse -i "$TMP/ratio.data" >"$TMP/ratio.folded" 2>/dev/null
"$EMBER" flame --folded - -o "$TMP/two-step.svg" <"$TMP/ratio.folded" 2>/dev/null
check "ratio: data file and folded text give byte-identical SVGs" \
	cmp -s "$TMP/ratio.svg" "$TMP/two-step.svg"
"$EMBER" flame -i "$TMP/ratio.data" -o "$TMP/again.svg" 2>/dev/null
check "ratio: a rerun is byte-identical" cmp -s "$TMP/ratio.svg" "$TMP/again.svg"

# Options reach the SVG.
"$EMBER" flame -i "$TMP/ratio.data" -o "$TMP/opts.svg" --title "T&T" --subtitle sub \
	--width 800 --height 20 --minwidth 1% --countname ms --colors io --hash \
	--inverted --reverse 2>"$TMP/opts.err"
if $PY svg "$TMP/opts.svg" all=100 0.1 >/dev/null &&
   grep -q 'width="800"' "$TMP/opts.svg" && grep -q '>T&amp;T</text>' "$TMP/opts.svg" &&
   grep -q 'data-inverted="1"' "$TMP/opts.svg" && grep -q ' ms, ' "$TMP/opts.svg"; then
	pass "options: title, width, inverted, reverse, countname"
else
	fail "options: title, width, inverted, reverse, countname" "$(head -c 300 "$TMP/opts.err")"
fi

# A profile against itself is all neutral; data files and text both work.
"$EMBER" flame --diff "$TMP/ratio.data" "$TMP/ratio.folded" -o "$TMP/self.svg" 2>"$TMP/self.err"
if why=$($PY neutral "$TMP/self.svg" '#dcdcdc'); then
	pass "diff: a profile against itself is neutral ($why)"
else
	fail "diff: a profile against itself is neutral" "$why $(head -c 300 "$TMP/self.err")"
fi
grep -v leaf_b "$TMP/ratio.folded" >"$TMP/less.folded"
"$EMBER" flame --diff "$TMP/ratio.folded" "$TMP/less.folded" -o "$TMP/less.svg" 2>/dev/null
"$EMBER" flame --diff "$TMP/ratio.folded" "$TMP/less.folded" --negate -o "$TMP/neg.svg" 2>/dev/null
if grep -q '<title>leaf_a[^<]*change +' "$TMP/less.svg" && ! grep -q '<title>leaf_b' "$TMP/less.svg" &&
   grep -q '<title>leaf_b[^<]*change -' "$TMP/neg.svg"; then
	pass "diff: growth and loss shown; --negate shows what vanished"
else
	fail "diff: growth and loss shown; --negate shows what vanished" "see $TMP/less.svg"
fi

# Bad folded input: reported with a line number, the good lines drawn.
printf 'a;b 3\nnot a stack\na;c 2\n' >"$TMP/mixed.folded"
"$EMBER" flame --folded "$TMP/mixed.folded" -o "$TMP/mixed.svg" 2>"$TMP/mixed.err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'line 2' "$TMP/mixed.err" && grep -q '<title>c (2 samples' "$TMP/mixed.svg"; then
	pass "bad lines: skipped with a warning naming the line"
else
	fail "bad lines: skipped with a warning naming the line" "rc $rc: $(cat "$TMP/mixed.err")"
fi
# Random bytes without digits: no line can end in a count.
head -c 20000 /dev/urandom | tr -d "0-9" >"$TMP/junk"
"$EMBER" flame --folded "$TMP/junk" -o "$TMP/junk.svg" 2>"$TMP/junk.err"
rc=$?
if [ $rc -eq 1 ] && grep -q '^ember flame: ' "$TMP/junk.err"; then
	pass "junk input: exit 1 with a message"
else
	fail "junk input: exit 1 with a message" "rc $rc: $(tail -2 "$TMP/junk.err")"
fi
"$EMBER" flame --width 5 --folded "$TMP/mixed.folded" 2>/dev/null
check "usage: a bad --width exits 2" test $? -eq 2

# A system-wide recording: many processes, kernel frames, unknown files.
perf_record -o "$TMP/all.data" -F 999 -a -g -- sleep 1
collapse_agrees system-wide "$TMP/all.data" --annotate -- --annotate

# ember's own recordings, once ember record can make them.
if "$EMBER" record -F 3333 -g -o "$TMP/ember.data" -- "$WORKLOADS/ratio" 2.5 >/dev/null 2>"$TMP/rec.err" &&
   perf script -i "$TMP/ember.data" >/dev/null 2>&1; then
	# ember's -g recordings carry the leaf-repair snapshot, which perf
	# script does not use: equal with --no-leaf-fix; by default the same
	# samples, some with a caller the frame-pointer walk had skipped.
	collapse_agrees ember-record "$TMP/ember.data" --no-leaf-fix
	"$EMBER" collapse -i "$TMP/ember.data" >"$TMP/fixed.folded" 2>/dev/null
	sum() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
	check "ember-record: leaf repair keeps every sample ($(sum "$TMP/fixed.folded") = $(sum "$TMP/ember-record.perf"))" \
		test "$(sum "$TMP/fixed.folded")" = "$(sum "$TMP/ember-record.perf")" -a \
		"$(sum "$TMP/fixed.folded")" -gt 0
	"$EMBER" flame -i "$TMP/ember.data" -o "$TMP/ember.svg" 2>/dev/null
	if why=$($PY svg "$TMP/ember.svg" leaf_a=50,leaf_b=30,leaf_c=20 2); then
		pass "ember-record: towers match the design ($why)"
	else
		fail "ember-record: towers match the design" "$why"
	fi
else
	skip ember-record "ember record -g cannot make a file perf reads yet: $(head -c 200 "$TMP/rec.err")"
fi
