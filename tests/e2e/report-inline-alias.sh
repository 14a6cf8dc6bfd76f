#!/usr/bin/env bash
# report-inline-alias.sh - inline frames add frames, never rename one: a
# loop of libc's clock_gettime (an alias, __GI___clock_gettime in libc's
# DWARF, with nothing inlined at its call into the vDSO) recorded with -g
# shows clock_gettime as one function in report, at perf's share on the
# same file and --no-inline's, every function's row is --no-inline's,
# and the pprof export names it once.
# parallel-safe: records only its own process and compares shares of it (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root; then skip report-inline-alias "needs root to record"; exit 0; fi
# Without libc's debug info there are no inline frames in libc to check.
libc=$(ldd "$WORKLOADS/clockloop" 2>/dev/null | awk '$1 ~ /^libc\.so/ { print $3; exit }')
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
if [ -z "$bid" ] || [ ! -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ]; then
	skip report-inline-alias "no debug info for $libc (Debian's libc6-dbg; make deps)"
	exit 0
fi

if ! "$EMBER" record -q -g -F 999 -o "$TMP/c.data" -- "$WORKLOADS/clockloop" 1 \
	>"$TMP/rec.out" 2>&1; then
	fail report-inline-alias-record "$(head -c 300 "$TMP/rec.out")"
	exit 0
fi

# rows REPORT: "SYMBOL CHILDREN SELF" per user-space row of a
# --children --sort sym -g none table.
rows() {
	awk '$3 == "[.]" { c = $1; s = $2; sub(/%/, "", c); sub(/%/, "", s)
		$1 = $2 = $3 = ""; sub(/^ +/, ""); print $0 "\t" c "\t" s }' "$1"
}
report() {   # report OUT ARGS...
	local out=$1; shift
	"$EMBER" report -i "$TMP/c.data" --stdio --children --sort sym -g none "$@" \
		>"$TMP/$out.txt" 2>"$TMP/$out.err"
	rows "$TMP/$out.txt" >"$TMP/$out.rows"
}
report inl
report noinl --no-inline
sym=$(awk -F'\t' '$1 ~ /^clock_gettime/ { print $1; exit }' "$TMP/noinl.rows")
got=$(awk -F'\t' -v s="$sym" '$1 == s { print $2; exit }' "$TMP/inl.rows")
want=$(awk -F'\t' -v s="$sym" '$1 == s { print $2; exit }' "$TMP/noinl.rows")

# By construction nearly every sample is in clock_gettime or under it.
if [ -n "$sym" ] && [ -n "$got" ] && within "$got" "$want" 0.01 &&
   awk -v g="$got" 'BEGIN { exit !(g >= 70) }'; then
	pass "report-inline-alias-children ($sym: ${got}% children, --no-inline ${want}%)"
else
	fail report-inline-alias-children "${sym:-no clock_gettime row}: ${got:-none}% children, --no-inline ${want:-none}%; $(grep -i clock_gettime "$TMP/inl.rows" | tr '\t\n' ' ')"
fi

fake=$(grep -c 'clock_gettime.* (inlined)' "$TMP/inl.rows")
if [ "$fake" -eq 0 ]; then
	pass "report-inline-alias-no-fake-frame (no clock_gettime '(inlined)' row)"
else
	fail report-inline-alias-no-fake-frame "$(grep 'clock_gettime.* (inlined)' "$TMP/inl.rows" | tr '\t\n' ' ')"
fi

# Sibling aliases (__libc_start_main's, any other): every function of the
# --no-inline table keeps its row, children and self, when inline frames
# are added.
diff=$(awk -F'\t' 'NR == FNR { c[$1] = $2; s[$1] = $3; next }
	!($1 in c) || c[$1] != $2 || s[$1] != $3 { print $1 " " $2 "/" $3 " vs " c[$1] "/" s[$1] }' \
	"$TMP/inl.rows" "$TMP/noinl.rows" | head -3)
if [ -z "$diff" ] && [ -s "$TMP/noinl.rows" ]; then
	pass "report-inline-alias-rows-kept ($(wc -l <"$TMP/noinl.rows") functions: same children and self with inline frames)"
else
	fail report-inline-alias-rows-kept "--no-inline row vs the default's: ${diff:-no rows}"
fi

# perf on the same file.
if have_perf; then
	perf report -i "$TMP/c.data" --stdio --children --sort sym -g none >"$TMP/perf.txt" 2>/dev/null
	rows "$TMP/perf.txt" >"$TMP/perf.rows"
	p=$(awk -F'\t' -v s="$sym" '$1 == s { print $2; exit }' "$TMP/perf.rows")
	if [ -n "$p" ] && [ -n "$got" ] && within "$got" "$p" 0.05; then
		pass "report-inline-alias-perf ($sym: ember ${got}%, perf ${p}% children)"
	else
		fail report-inline-alias-perf "$sym: ember ${got:-none}%, perf ${p:-none}%"
	fi
else
	skip report-inline-alias-perf "perf (linux-perf) is not installed"
fi

# pprof: one function for clock_gettime, its cum% the report's children.
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1 &&
   "$EMBER" export -f pprof -i "$TMP/c.data" -o "$TMP/c.pb.gz" 2>"$TMP/pb.err"; then
	go tool pprof -top -cum -nodecount=1000 "$TMP/c.pb.gz" 2>/dev/null >"$TMP/pb.top"
	cum=$(awk -v s="$sym" '$NF == s { sub(/%/, "", $5); print $5; exit }' "$TMP/pb.top")
	other=$(awk '$NF ~ /^(__GI_)?_*clock_gettime/ { n++ } END { print n + 0 }' "$TMP/pb.top")
	if [ -n "$cum" ] && [ "$other" -eq 1 ] && within "$cum" "$got" 0.05; then
		pass "report-inline-alias-pprof ($sym: cum ${cum}%, the only libc clock_gettime function)"
	else
		fail report-inline-alias-pprof "$sym cum ${cum:-none}% (report ${got:-none}%), $other libc clock_gettime functions: $(grep clock_gettime "$TMP/pb.top" | tr -s ' \n' ' ')"
	fi
else
	skip report-inline-alias-pprof "go tool pprof is not here, or the export failed: $(head -c 200 "$TMP/pb.err" 2>/dev/null)"
fi
