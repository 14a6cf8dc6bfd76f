#!/usr/bin/env bash
# tests/e2e/unwind-nocfi.sh - --call-graph dwarf through code with no CFI:
# tests/workloads/nocfi.c's hot function is hand-written asm with a
# standard frame and no FDE, so a CFI walk cannot step out of it and the
# fast path goes on by frame pointer.  At least 95% of its samples must
# reach main through mid with each backend behind the fast path.  With the
# fast path off (EMBER_UNWIND_FAST=0) a backend alone stops in asm_hot or
# guesses on by frame pointer itself (libdw 0.188 and libunwind 1.6 both
# do, and get there too: the figures say); libdw's fallback is the same
# step as the fast path's, so each chain it gives must be the fast path's
# or a first part of it (libunwind's guesses are its own: not checked).
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-report-lib.sh"

if ! need_root; then skip unwind-nocfi "needs root to record"; exit 0; fi
W=$WORKLOADS/nocfi
if [ ! -x "$W" ]; then fail nocfi-build "$W is not built (make workloads)"; exit 0; fi

# The ground truth: no FDE (.eh_frame or .debug_frame) covers asm_hot.
read -r lo hi < <(nm -S "$W" | awk '$4 == "asm_hot" { print $1, $2 }')
if [ -z "${lo:-}" ]; then fail nocfi-symbol "no asm_hot in $W"; exit 0; fi
start=$((16#$lo)) end=$((16#$lo + 16#$hi)) covered=0 fdes=0
while IFS=. read -r s _ e; do
	fdes=$((fdes + 1))
	[ $((16#$s)) -lt $end ] && [ $((16#$e)) -gt $start ] && covered=$((covered + 1))
done < <(readelf --debug-dump=frames "$W" 2>/dev/null | grep -o 'FDE .*pc=[0-9a-f.]*' | sed 's/.*pc=//')
if [ "$fdes" -eq 0 ]; then fail nocfi-fdes "readelf lists no FDE in $W"; exit 0; fi
if [ "$covered" -eq 0 ]; then
	pass "nocfi-no-fde (none of $fdes FDEs covers asm_hot at $(printf '%#x' $start), $((end - start)) bytes)"
else
	fail nocfi-no-fde "$covered FDEs cover asm_hot: the test proves nothing"; exit 0
fi

start_spinner 20
if ! "$EMBER" record -q --call-graph dwarf -F 999 -o "$TMP/nocfi.data" -- "$W" 2 \
	>"$TMP/rec" 2>&1; then
	fail nocfi-record "$(head -c 300 "$TMP/rec")"; exit 0
fi

# reach FOLDED: "TOTAL GOOD", the samples whose user leaf is asm_hot and
# how many of them go asm_hot <- mid <- main (kernel frames, marked _[k],
# may follow the leaf).
reach() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
	       while (k > 0 && f[k] ~ /_\[k\]$/) k--
	       if (k < 1 || f[k] != "asm_hot") next
	       t += n; if (k > 2 && f[k - 1] == "mid" && f[k - 2] == "main") g += n }
	     END { print t + 0, g + 0 }' "$1"
}

# chains FILE UNWINDER: one line per sample, its symbols leaf first.
chains() {
	"$EMBER" script -i "$1" --unwinder "$2" -F ip,sym 2>/dev/null |
		awk 'NF == 0 { if (c != "") print c; c = ""; next }
		     { sub(/^[ \t]*[0-9a-f]+ /, ""); c = c (c == "" ? "" : " ") $0 }
		     END { if (c != "") print c }'
}

for unw in libdw libunwind; do
	"$EMBER" collapse -i "$TMP/nocfi.data" --unwinder $unw --annotate >"$TMP/fast.$unw" 2>&1
	EMBER_UNWIND_FAST=0 "$EMBER" collapse -i "$TMP/nocfi.data" --unwinder $unw --annotate \
		>"$TMP/slow.$unw" 2>&1
	read -r total good < <(reach "$TMP/fast.$unw")
	read -r stotal sgood < <(reach "$TMP/slow.$unw")
	spct=$((stotal ? sgood * 100 / stotal : 0))
	if [ "$total" -gt 500 ] && [ $((good * 100)) -ge $((total * 95)) ]; then
		pass "nocfi-$unw-reaches-main ($good of $total asm_hot samples reach main through mid, $((good * 100 / total))%; without the fast path $sgood of $stotal, $spct%)"
	else
		fail "nocfi-$unw-reaches-main" "$good of $total asm_hot samples reach main through mid; first: $(grep -m1 'asm_hot' "$TMP/fast.$unw" | head -c 200)"
	fi
	[ $unw = libdw ] || continue
	# libdw alone never contradicts the fast path: each chain is the
	# fast path's, or a first part of it where libdw stopped.
	chains "$TMP/nocfi.data" $unw >"$TMP/cf.$unw"
	EMBER_UNWIND_FAST=0 chains "$TMP/nocfi.data" $unw >"$TMP/cs.$unw"
	read -r n same shorter other < <(paste -d '\n' "$TMP/cf.$unw" "$TMP/cs.$unw" | awk '
		NR % 2 { f = $0; next }
		{ n++; if ($0 == f) s++; else if (index(f, $0 " ") == 1) p++; else o++ }
		END { print n + 0, s + 0, p + 0, o + 0 }')
	if [ "$n" -gt 500 ] && [ "$other" -eq 0 ] && [ "$n" -eq "$(wc -l <"$TMP/cf.$unw")" ]; then
		pass "nocfi-$unw-backend-agrees ($same of $n chains the same without the fast path, $shorter shorter)"
	else
		fail "nocfi-$unw-backend-agrees" "$other of $n chains differ without the fast path: $(diff "$TMP/cf.$unw" "$TMP/cs.$unw" | head -4 | head -c 300)"
	fi
done
