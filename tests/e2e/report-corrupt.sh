# report-corrupt.sh - damaged inputs: files cut short at 20 offsets and 20
# copies with flipped bytes each give a clear error or a partial report,
# never a crash, a hang or a sanitizer report.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

if ! have_perf; then
	skip report-corrupt "perf (linux-perf) is not installed"
	exit 0
fi
perf record -q -B -o "$TMP/good.data" -F 999 -g -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
size=$(stat -c %s "$TMP/good.data")

# judge NAME FILE: exit 0 (partial or whole report) or 1 with one line that
# names an offset; no signal, no sanitizer output, done within 20 s.
judge() {
	local name=$1 file=$2 rc
	timeout 20 "$EMBER" report -i "$file" --stdio >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if grep -q -e AddressSanitizer -e 'runtime error' -e LeakSanitizer "$TMP/err"; then
		echo "$name: sanitizer report: $(grep -m1 -e Sanitizer -e 'runtime error' "$TMP/err")"
		return 1
	fi
	case $rc in
	0) return 0 ;;
	1) grep -q 'offset' "$TMP/err" && return 0
	   echo "$name: exit 1 without naming an offset: $(head -c 200 "$TMP/err")"; return 1 ;;
	124) echo "$name: hung"; return 1 ;;
	*) echo "$name: exit $rc: $(head -c 200 "$TMP/err")"; return 1 ;;
	esac
}

bad=0 msgs=""
RANDOM=4242   # the same damage every run
for i in $(seq 1 20); do
	cut=$(( (RANDOM * 32768 + RANDOM) % size ))
	head -c "$cut" "$TMP/good.data" >"$TMP/cut.data"
	if ! m=$(judge "cut at $cut" "$TMP/cut.data"); then bad=$((bad + 1)); msgs+="$m; "; fi
done
if [ $bad -eq 0 ]; then pass "20 truncated files"; else fail "20 truncated files" "$msgs"; fi

bad=0 msgs=""
for i in $(seq 1 20); do
	cp "$TMP/good.data" "$TMP/flip.data"
	for j in 1 2 3 4; do
		at=$(( (RANDOM * 32768 + RANDOM) % size ))
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="$TMP/flip.data" bs=1 seek="$at" conv=notrunc status=none
	done
	if ! m=$(judge "flip copy $i" "$TMP/flip.data"); then bad=$((bad + 1)); msgs+="$m; "; fi
done
if [ $bad -eq 0 ]; then pass "20 files with flipped bytes"; else fail "20 files with flipped bytes" "$msgs"; fi

# A zero-filled file and a file that is not perf.data at all.
head -c 4096 /dev/zero >"$TMP/zero.data"
"$EMBER" report -i "$TMP/zero.data" >/dev/null 2>"$TMP/err"; rc=$?
check "zero-filled file: exit 1 naming the offset" \
	test "$rc" -eq 1 -a "$(grep -c 'offset 0: not a perf.data file' "$TMP/err")" -eq 1
"$EMBER" report -i /nonexistent.data >/dev/null 2>"$TMP/err"; rc=$?
check "missing file: exit 1 naming it" test "$rc" -eq 1 -a "$(grep -c '/nonexistent.data' "$TMP/err")" -eq 1

# A feature table entry pointing outside the file: the views skip that
# section, and verify names it with the entry's offset (it said "0
# problems" before).
cp "$TMP/good.data" "$TMP/feat.data"
entry=$(python3 - "$TMP/feat.data" <<'PY'
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    data_off, data_size = struct.unpack_from('<QQ', f.read(56), 40)
    table = data_off + data_size
    f.seek(table)
    off, size = struct.unpack('<QQ', f.read(16))
    f.seek(table)
    f.write(struct.pack('<QQ', off + (1 << 40), size))
print(table)
PY
)
"$EMBER" verify "$TMP/feat.data" >"$TMP/verify.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "offset $entry: 1 feature section lies outside the file" "$TMP/verify.out"; then
	pass "verify names a feature section outside the file (offset $entry)"
else
	fail verify-feature-outside "exit $rc: $(head -c 300 "$TMP/verify.out")"
fi
