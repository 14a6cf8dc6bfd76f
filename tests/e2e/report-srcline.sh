#!/usr/bin/env bash
# tests/e2e/report-srcline.sh - source lines: `ember script -F ...,srcline`
# puts file:line under each frame.  On the known-ratio workload every line
# of its own functions falls inside that function's body in ratio.c (the
# truth, read from the source), and equals perf script's line for the same
# frame; -F +srcline / -F -field edit the default fields as in perf.  In an
# inline chain the outer frame's line is the call site (as perf shows it),
# and collapse/flame --srcline name frames "NAME file:line".
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
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

# ---- inline chains: the outer frame's line is the call site ---------------
# tests/workloads/inlined.c built -O2: spin_inner is inlined into
# outer_loop, so one address has two source frames.  The inner one's line
# is the address's own (inside spin_inner's body); outer_loop's is the line
# where it calls spin_inner, from DW_AT_call_line, as perf prints it.
ISRC=$TOP/tests/workloads/inlined.c
if ! cc -O2 -g -fomit-frame-pointer -o "$TMP/inlined" "$ISRC" 2>"$TMP/cc"; then
	fail inline-build "$(head -c 300 "$TMP/cc")"; exit 0
fi
if ! "$EMBER" record -q --call-graph dwarf -F 999 -o "$TMP/i.data" -- "$TMP/inlined" 0.5 \
	>"$TMP/irec" 2>&1; then
	fail inline-record "$(head -c 300 "$TMP/irec")"; exit 0
fi
"$EMBER" script -i "$TMP/i.data" -F ip,sym,srcline >"$TMP/ie.out" 2>/dev/null
# "sym line" per frame of the workload's functions, "(inlined)" marks
# dropped (perf puts it after the line, ember after the name).
ipairs() {
	awk '/^\t/ { sym = $2; want = sym ~ /^(spin_inner|outer_loop|main)$/; next }
		/^  / { if (want) print sym, $1; want = 0; next }
		{ want = 0 }' "$1"
}
ipairs "$TMP/ie.out" >"$TMP/ie.pairs"
call=$(awk '/^__attribute__.*outer_loop\(/ { in_f = 1 } in_f && /spin_inner\(/ { print NR; exit }' "$ISRC")
body=$(awk '/spin_inner\(uint64_t x\)/ { s = NR } s && /^}/ { print s, NR; exit }' "$ISRC")
read -r lo hi <<<"$body"
inner=$(awk -v lo="$lo" -v hi="$hi" '$1 == "spin_inner" { split($2, p, ":"); t++
	if (p[1] == "inlined.c" && p[2] >= lo && p[2] <= hi) g++ } END { print g + 0, t + 0 }' "$TMP/ie.pairs")
outer=$(awk -v c="inlined.c:$call" 'prev == "spin_inner" && $1 == "outer_loop" { t++; if ($2 == c) g++ }
	{ prev = $1 } END { print g + 0, t + 0 }' "$TMP/ie.pairs")
read -r ig it <<<"$inner"
read -r og ot <<<"$outer"
if [ -n "$call" ] && [ "$it" -ge 300 ] && [ "$ig" -eq "$it" ] && [ "$ot" -eq "$it" ] && [ "$og" -eq "$ot" ]; then
	pass "inline-srcline ($it samples: spin_inner in lines $lo-$hi, outer_loop at its call, line $call)"
else
	fail inline-srcline "spin_inner frames $ig of $it in lines $lo-$hi; outer_loop under them $og of $ot at line ${call:-?}"
fi

if have_perf; then
	perf script -i "$TMP/i.data" -F ip,sym,srcline 2>/dev/null >"$TMP/ip.out"
	ipairs "$TMP/ip.out" >"$TMP/ip.pairs"
	if [ -s "$TMP/ip.pairs" ] && cmp -s "$TMP/ie.pairs" "$TMP/ip.pairs"; then
		pass "inline-srcline-as-perf ($(wc -l <"$TMP/ip.pairs") frames)"
	else
		fail inline-srcline-as-perf "$(diff "$TMP/ie.pairs" "$TMP/ip.pairs" | head -4 | tr '\n' ' ')"
	fi
else
	skip inline-srcline-as-perf "perf is not installed"
fi

# collapse --srcline: the same stacks and counts as without it, each frame
# with a known line followed by it; the hot stack ends in the call site and
# the inlined body.
"$EMBER" collapse -i "$TMP/i.data" >"$TMP/plain.folded" 2>/dev/null
"$EMBER" collapse -i "$TMP/i.data" --srcline >"$TMP/src.folded" 2>/dev/null
# Stacks that differ only by a line merge again once the lines are gone.
sed -E 's/ [A-Za-z0-9_.+-]+\.[A-Za-z]+:[0-9]+(;| [0-9]+$)/\1/g' "$TMP/src.folded" |
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); c[$0] += n } END { for (s in c) print s, c[s] }' |
	sort >"$TMP/stripped"
sed -E 's/ ;/;/g; s/ ( [0-9]+)$/\1/' "$TMP/plain.folded" | sort >"$TMP/plain.sorted"
hot=$(grep -c ";outer_loop inlined.c:$call;spin_inner inlined.c:[0-9]* [0-9]*$" "$TMP/src.folded")
if [ -s "$TMP/stripped" ] && cmp -s "$TMP/stripped" "$TMP/plain.sorted" && [ "$hot" -ge 1 ]; then
	pass "collapse-srcline ($(wc -l <"$TMP/src.folded") stacks, as without --srcline)"
else
	fail collapse-srcline "hot stacks with lines: $hot; $(diff "$TMP/stripped" "$TMP/plain.sorted" | head -4 | tr '\n' ' ')"
fi
"$EMBER" flame -i "$TMP/i.data" --srcline -o "$TMP/src.svg" 2>/dev/null
check flame-srcline grep -q "outer_loop inlined.c:$call" "$TMP/src.svg"
