#!/usr/bin/env bash
# tests/e2e/record-ratio.sh - `ember record -F 4999 -g` on the known-ratio
# workload (tests/workloads/ratio.c): perf reads ember's file, perf's
# per-symbol percentages match the workload's design within 3 points, the
# frame-pointer call chains go through the intermediate function, ~2 s of
# CPU at 4999 Hz gives 9000-11000 samples, and the end line's counts agree
# with what perf finds in the file.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
require_perf record-ratio

W=$WORKLOADS/ratio
F=$TMP/ratio.data
"$W" --design >"$TMP/design" || { fail ratio-design "ratio --design failed"; exit 0; }

# 4999 Hz for 2 s: about 10,000 samples, so chance moves the 50% leaf by
# half a point (one standard deviation); the 3 allowed are six of them.
run_ember rec record -F 4999 -g -o "$F" -- "$W" 2
if [ "$RC" -ne 0 ]; then
	fail ratio-record "exit $RC: $(head -c 400 "$TMP/rec.err")"
	exit 0
fi
pass ratio-record

if why=$(perf_reads "$F"); then pass ratio-perf-reads; else fail ratio-perf-reads "$why"; fi

# Self percentages per symbol against the design.
"$PERF" report -i "$F" --stdio --no-children --sort sym 2>/dev/null >"$TMP/self"
"$PERF" report -i "$F" --stdio --children --sort sym 2>/dev/null >"$TMP/children"
while read -r kind sym want; do
	if [ "$kind" = self ]; then got=$(self_pct "$TMP/self" "$sym")
	else got=$(self_pct "$TMP/children" "$sym"); fi
	if within "$got" "$want" 3; then
		pass "ratio-$kind-$sym"
	else
		fail "ratio-$kind-$sym" "perf says ${got}%, design ${want}% (tolerance 3)"
	fi
done <"$TMP/design"

# The chain of a leaf_a sample is leaf_a <- mid_ab <- work <- main: the
# intermediate frame must be there (perf script prints callees first).
"$PERF" script -i "$F" -F ip,sym 2>/dev/null >"$TMP/script"
chain=$(awk 'NF == 0 { if (c != "") print c; c = ""; next }
	{ c = c (c == "" ? "" : " ") $2 } END { if (c != "") print c }' "$TMP/script" |
	grep -m1 '^leaf_a ')
if [[ "$chain" == "leaf_a mid_ab work main"* ]]; then
	pass ratio-callchain
else
	fail ratio-callchain "first leaf_a chain is '$(head -c 80 <<<"${chain:-none}")', want 'leaf_a mid_ab work main ...'"
fi

# 2 s of CPU at 4999 Hz: 9998 samples expected.
n=$(perf_stat "$F" SAMPLE)
if [ "$n" -ge 9000 ] && [ "$n" -le 11000 ]; then
	pass ratio-sample-count
else
	fail ratio-sample-count "perf counts $n samples for 2 s CPU at -F 4999, want 9000-11000"
fi

# The end line agrees with the file.
if parse_end_line "$TMP/rec.err"; then
	pass end-line-format
	if [ "$EL_N" -eq "$n" ]; then pass end-line-samples-match-perf
	else fail end-line-samples-match-perf "end line says $EL_N samples, perf counts $n"; fi
	check end-line-file-name [ "$EL_FILE" = "$F" ]
	size=$(stat -c %s "$F")
	if awk -v mb="$EL_MB" -v s="$size" 'BEGIN { a = s / 1048576; b = s / 1e6;
		ok = (mb - a < 0.01 + a * 0.05 && a - mb < 0.01 + a * 0.05) ||
		     (mb - b < 0.01 + b * 0.05 && b - mb < 0.01 + b * 0.05); exit !ok }'; then
		pass end-line-megabytes
	else
		fail end-line-megabytes "end line says $EL_MB MB, file has $size bytes"
	fi
	check end-line-no-lost [ "$EL_M" -eq 0 ]
else
	fail end-line-format "no 'ember record: N samples, M lost, X MB written to FILE' line in: $(tail -c 300 "$TMP/rec.err")"
fi
