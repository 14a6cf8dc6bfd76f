#!/usr/bin/env bash
# tests/e2e/report-srcline.sh - source lines: `ember script -F ...,srcline`
# puts file:line under each frame.  On the known-ratio workload every line
# of its own functions falls inside that function's body in ratio.c (the
# truth, read from the source), and equals perf script's line for the same
# frame; -F +srcline / -F -field edit the default fields as in perf.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-report-lib.sh"

if ! need_root; then skip srcline "needs root to record"; exit 0; fi

SRC=$TOP/tests/workloads/ratio.c
cp "$WORKLOADS/ratio" "$TMP/ratio"
if ! "$EMBER" record -q -g -F 999 -o "$TMP/r.data" -- "$TMP/ratio" 1 >"$TMP/rec" 2>&1; then
	fail srcline-record "$(head -c 300 "$TMP/rec")"; exit 0
fi
"$EMBER" script -i "$TMP/r.data" -F comm,tid,ip,sym,srcline >"$TMP/e.out" 2>"$TMP/e.err"

# pairs FILE: "sym file:line" for each frame of the workload's functions.
FUNCS='^(leaf_a|leaf_b|leaf_c|mid_ab|work|main)$'
pairs() {
	awk -v f="$FUNCS" '
		/^\t/ { sym = $2; want = sym ~ f; next }
		/^  / { if (want) print sym, $1; want = 0; next }
		{ want = 0 }' "$1"
}
pairs "$TMP/e.out" >"$TMP/e.pairs"
n=$(wc -l <"$TMP/e.pairs")
if [ "$n" -lt 500 ]; then
	fail srcline-present "only $n workload frames carry a source line ($(head -c 200 "$TMP/e.err"))"
	exit 0
fi
pass srcline-present

# The truth: each function's body spans from its definition line to the
# first "}" in column 0 after it.
for fn in leaf_a leaf_b leaf_c mid_ab work main; do
	awk -v fn="$fn" '
		!start && $0 ~ ("[ *]" fn "\\(") && $0 !~ /;[ \t]*$/ { start = NR }
		start && /^}/ { print fn, start, NR; exit }' "$SRC"
done >"$TMP/bodies"
bad=$(awk 'NR == FNR { lo[$1] = $2; hi[$1] = $3; next }
	{ split($2, p, ":"); if (p[1] != "ratio.c" || p[2] < lo[$1] || p[2] > hi[$1]) print }' \
	"$TMP/bodies" "$TMP/e.pairs" | head -3)
if [ -z "$bad" ] && [ "$(wc -l <"$TMP/bodies")" -eq 6 ]; then
	pass srcline-in-function
else
	fail srcline-in-function "lines outside their function: $bad (bodies: $(tr '\n' ' ' <"$TMP/bodies"))"
fi

if have_perf; then
	perf script -i "$TMP/r.data" -F comm,tid,ip,sym,srcline >"$TMP/p.out" 2>/dev/null
	pairs "$TMP/p.out" >"$TMP/p.pairs"
	if [ -s "$TMP/p.pairs" ] && cmp -s "$TMP/e.pairs" "$TMP/p.pairs"; then
		pass srcline-as-perf
	else
		fail srcline-as-perf "$(diff "$TMP/e.pairs" "$TMP/p.pairs" | head -4 | tr '\n' ' ')"
	fi
else
	skip srcline-as-perf "perf is not installed"
fi

# +srcline adds to the default layout: without its lines it is the default.
"$EMBER" script -i "$TMP/r.data" >"$TMP/default.out" 2>/dev/null
"$EMBER" script -i "$TMP/r.data" -F +srcline 2>/dev/null | grep -v '^  [^ ]' >"$TMP/plus.out"
check srcline-plus cmp -s "$TMP/default.out" "$TMP/plus.out"
"$EMBER" script -i "$TMP/r.data" -F -cpu,-time >"$TMP/minus.out" 2>/dev/null
check srcline-minus-field test -s "$TMP/minus.out" -a "$(grep -c '\[00[01]\]' "$TMP/minus.out")" -eq 0

"$EMBER" script -i "$TMP/r.data" -F +bogus >/dev/null 2>"$TMP/bad.err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] && grep -q "bogus" "$TMP/bad.err"; then
	pass srcline-bad-field
else
	fail srcline-bad-field "exit $rc: $(head -c 200 "$TMP/bad.err")"
fi
