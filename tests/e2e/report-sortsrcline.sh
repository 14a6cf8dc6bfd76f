#!/usr/bin/env bash
# tests/e2e/report-sortsrcline.sh - `ember report --sort srcline`: rows by
# source line.  On the known-ratio workload each leaf's rows lie inside its
# body in ratio.c (read from the source) and add up to its design share;
# the rows with a file:line equal perf report's on the same file; with
# --children a caller's rows are the lines of its calls; call graphs still
# hang under the rows; an unknown key exits 2 naming the known keys.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root; then skip sortsrcline "needs root to record"; exit 0; fi

SRC=$TOP/tests/workloads/ratio.c
if ! "$EMBER" record -q -F 4999 -g -o "$TMP/r.data" -- "$WORKLOADS/ratio" 1 >"$TMP/rec" 2>&1; then
	fail sortsrcline-record "$(head -c 300 "$TMP/rec")"; exit 0
fi
report() { "$EMBER" report -i "$TMP/r.data" --stdio "$@" 2>>"$TMP/err"; }

# The truth: each function's body, "name first last", from its definition
# line to the first "}" in column 0 after it, or the definition line alone
# when the whole function is on it (the leaves).
for fn in leaf_a leaf_b leaf_c mid_ab work; do
	awk -v fn="$fn" '
		!start && $0 ~ ("[ *]" fn "\\(") && $0 !~ /;[ \t]*$/ {
			start = NR
			if ($0 ~ /}[ \t]*$/) { print fn, start, NR; exit }
		}
		start && /^}/ { print fn, start, NR; exit }' "$SRC"
done >"$TMP/bodies"
if [ "$(wc -l <"$TMP/bodies")" -ne 5 ]; then
	fail sortsrcline-source "cannot find the function bodies in $SRC: $(tr '\n' ' ' <"$TMP/bodies")"
	exit 0
fi
# The design shares: "self leaf_a 50", "children mid_ab 80", ...
"$WORKLOADS/ratio" --design >"$TMP/design"

# rows FILE: "key percent" for each row of a one-key --no-children table.
rows() { awk '/^ +[0-9.]+%  / { sub(/%/, "", $1); print $2, $1 }' "$1"; }

# (a) Each leaf has rows, all inside its body, adding up to its design
# share (3 points: 5,000 samples make that several standard deviations).
report --no-children --sort srcline -g none >"$TMP/e.txt"
rows "$TMP/e.txt" >"$TMP/e.rows"
sums=$(awk 'FILENAME == ARGV[1] { lo[$1] = $2; hi[$1] = $3; next }
	FILENAME == ARGV[2] { if ($1 == "self") want[$2] = $3; next }
	{ n = split($1, p, ":"); if (n != 2 || p[1] != "ratio.c") next
	  for (f in want) if (p[2] >= lo[f] && p[2] <= hi[f]) { got[f] += $2; rows[f]++ } }
	END { for (f in want) printf "%s %d %.2f %d\n", f, rows[f], got[f], want[f] }' \
	"$TMP/bodies" "$TMP/design" "$TMP/e.rows")
bad=$(echo "$sums" | awk '$2 < 1 || $3 - $4 > 3 || $4 - $3 > 3')
if [ "$(echo "$sums" | wc -l)" -eq 3 ] && [ -z "$bad" ]; then
	pass "sortsrcline-leaf-lines ($(echo "$sums" | awk '{ printf "%s %s%% ", $1, $3 }'))"
else
	fail sortsrcline-leaf-lines "leaf rows (name rows got% design%): $(echo "$sums" | tr '\n' ';') $(head -c 200 "$TMP/err")"
fi

# With sym,srcline every row of a leaf lies inside that leaf's body.
report --no-children --sort sym,srcline -g none >"$TMP/es.txt"
out=$(awk 'FILENAME == ARGV[1] { lo[$1] = $2; hi[$1] = $3; next }
	/^ +[0-9.]+%  / && ($3 in lo) && $3 ~ /^leaf_/ {
		seen[$3]++; split($4, p, ":")
		if (p[1] != "ratio.c" || p[2] < lo[$3] || p[2] > hi[$3]) print "outside:", $3, $4 }
	END { if (length(seen) != 3) print "leaves seen:", length(seen) }' "$TMP/bodies" "$TMP/es.txt")
if [ -z "$out" ]; then
	pass sortsrcline-sym-lines
else
	fail sortsrcline-sym-lines "$(echo "$out" | head -3 | tr '\n' ' ')"
fi

# (b) The rows with a file:line equal perf's, share for share.  perf's
# addr2line names another file than libdw for a few lines of glibc built
# with DWARF 5 (ld.so's handle_amd: dl-get-cpu-features.c:321, where the
# line table says dl-cacheinfo.h:321); outside ratio.c the line number
# and share are compared, not the file name.
if have_perf; then
	perf report -i "$TMP/r.data" --stdio --no-children --sort srcline -g none \
		>"$TMP/p.txt" 2>/dev/null
	rows "$TMP/p.txt" >"$TMP/p.rows"
	lined() {
		awk '$1 ~ /^[^?][^:]*:[0-9]+$/ {
			if ($1 !~ /^ratio\.c:/) sub(/^[^:]*:/, "(other file):", $1); print }' "$1" |
			sort
	}
	lined "$TMP/e.rows" >"$TMP/e.lined"
	lined "$TMP/p.rows" >"$TMP/p.lined"
	n=$(grep -c '^ratio\.c:' "$TMP/e.lined")
	if [ "$n" -ge 3 ] && cmp -s "$TMP/e.lined" "$TMP/p.lined"; then
		pass "sortsrcline-as-perf ($(wc -l <"$TMP/e.lined") rows, $n in ratio.c)"
	else
		fail sortsrcline-as-perf "ember vs perf: $(diff "$TMP/e.lined" "$TMP/p.lined" | head -6 | tr '\n' ' ')"
	fi
else
	skip sortsrcline-as-perf "perf is not installed"
fi

# --children: a caller's rows are the lines of its calls, inside its body;
# each sample has mid_ab and work once in its chain, so their rows add up
# to their design shares, and mid_ab's row at the line calling leaf_a
# carries leaf_a's.
report --children --sort sym,srcline -g none >"$TMP/c.txt"
call_a=$(grep -n 'return leaf_a(' "$SRC" | cut -d: -f1)
out=$(awk -v call_a="$call_a" '
	FILENAME == ARGV[1] { lo[$1] = $2; hi[$1] = $3; next }
	FILENAME == ARGV[2] { if ($1 == "children") want[$2] = $3; if ($2 == "leaf_a") want_a = $3; next }
	/^ +[0-9.]+%  / && ($4 in want) {
		split($5, p, ":"); sub(/%/, "", $1); got[$4] += $1
		if (p[1] != "ratio.c" || p[2] < lo[$4] || p[2] > hi[$4]) print "outside:", $4, $5
		if ($4 == "mid_ab" && p[2] == call_a) at_a = $1 }
	END {
		for (f in want) {
			d = got[f] - want[f]
			if (d > 3 || d < -3) print f, got[f] "% (design " want[f] "%)"
		}
		d = at_a - want_a
		if (d > 3 || d < -3) print "mid_ab at line " call_a ": " at_a "% (leaf_a " want_a "%)"
	}' "$TMP/bodies" "$TMP/design" "$TMP/c.txt")
if [ -n "$call_a" ] && [ -z "$out" ]; then
	pass sortsrcline-children-callers
else
	fail sortsrcline-children-callers "$(echo "$out" | head -3 | tr '\n' ' ')"
fi

# The call graph still hangs under a srcline row: leaf_a's line row has
# leaf_a's callers (default graph, callees first without children).
report --no-children --sort srcline >"$TMP/g.txt"
a_line=$(awk '$1 == "leaf_a" { print $2 }' "$TMP/bodies")
tree=$(awk -v row="ratio.c:$a_line" '
	/^ +[0-9.]+%  / { inrow = ($2 == row); next }
	inrow' "$TMP/g.txt" | tr -d ' |-' | grep -v '^$' | tr '\n' ' ')
case "$tree" in
*leaf_a*mid_ab*work*main*) pass sortsrcline-graph ;;
*) fail sortsrcline-graph "tree under ratio.c:$a_line: $tree" ;;
esac

# (c) An unknown key: usage error, one line naming it and the known keys.
"$EMBER" report -i "$TMP/r.data" --stdio --sort sym,bogus >/dev/null 2>"$TMP/bad.err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] &&
	grep -q "bogus" "$TMP/bad.err" && grep -q "srcline" "$TMP/bad.err"; then
	pass sortsrcline-bad-key
else
	fail sortsrcline-bad-key "exit $rc: $(head -c 200 "$TMP/bad.err")"
fi
