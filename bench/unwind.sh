#!/usr/bin/env bash
# bench/unwind.sh - DWARF unwinding beside perf, in one run: on one
# --call-graph dwarf recording of at least 50k samples (the known-ratio
# workload built -O2 -fomit-frame-pointer), the wall time of
# `ember report --stdio` with each unwinder (with the fast path in front,
# and without it: EMBER_UNWIND_FAST=0) and of `perf report --stdio`,
# unwinding throughput, and whether the top-20 children percentages are
# the same.  Then the cost of -g's leaf-repair snapshot: the workload's
# speed and the file size under `record --call-graph fp` with and without it.
# And a stock binary, Debian's python3, with and without inline frames.
# Not a test: it prints tables and ratios.
#
#   EMBER=./ember bench/unwind.sh [SECONDS]     (default 12 s at 5 kHz)
set -u
: "${EMBER:=./ember}"
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-12}
tmp=$(mktemp -d /tmp/ember-bench-unw.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -o "$tmp/ratio" \
	"$top/tests/workloads/ratio.c" || exit 1
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/leafy" "$top/tests/workloads/leafy.c" || exit 1
file=$tmp/dwarf.data
"$EMBER" record -q --call-graph dwarf -F 5000 -o "$file" -- "$tmp/ratio" "$secs" >/dev/null
samples=$(perf report -i "$file" --stats 2>/dev/null |
	awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
echo "file: $(du -h "$file" | cut -f1), $samples samples"

# wall SECONDS of a command, its output in $tmp/$1.out
wall() {
	local tag=$1; shift
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$tmp/$tag.out" 2>/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
# the first 20 rows as "children% name" (the whole name: "X (inlined)")
top20() { grep '%' "$1" | grep -v '^#' | head -20 |
	awk '{ p = $1; sub(/^[^]]*\] /, ""); print p, $0 }' | sort; }

t_none=$(wall none "$EMBER" report -i "$file" --stdio --no-children -gnone --sort sym)
t_dw=$(wall libdw "$EMBER" report -i "$file" --stdio --unwinder libdw --children --sort sym -gnone)
t_lu=$(wall libunwind "$EMBER" report -i "$file" --stdio --unwinder libunwind --children --sort sym -gnone)
t_dw0=$(EMBER_UNWIND_FAST=0 wall libdw0 "$EMBER" report -i "$file" --stdio --unwinder libdw --children --sort sym -gnone)
t_lu0=$(EMBER_UNWIND_FAST=0 wall libunwind0 "$EMBER" report -i "$file" --stdio --unwinder libunwind --children --sort sym -gnone)
t_perf=$(wall perf perf report -i "$file" --stdio --children --sort sym -g none)

printf '\n%-34s %8s %14s %10s %s\n' "report --children (same file)" "wall s" "unwind smp/s" "vs perf" "top-20 as perf"
row() {
	local name=$1 t=$2 tag=$3 rate same
	rate=$(awk -v n="$samples" -v t="$t" -v z="$t_none" 'BEGIN { d = t - z; if (d <= 0) d = 0.001; printf "%.0f", n / d }')
	if [ "$tag" = perf ]; then same=-
	elif diff <(top20 "$tmp/$tag.out") <(top20 "$tmp/perf.out") >/dev/null; then same=identical
	else same="differs: $(diff <(top20 "$tmp/$tag.out") <(top20 "$tmp/perf.out") |
		grep '^[<>]' | head -4 | tr '\n' ' ')"; fi
	printf '%-34s %8s %14s %9sx %s\n' "$name" "$t" "$rate" \
		"$(awk -v p="$t_perf" -v t="$t" 'BEGIN { printf "%.1f", p / t }')" "$same"
}
row "ember --unwinder libdw" "$t_dw" libdw
row "ember --unwinder libunwind" "$t_lu" libunwind
row "  libdw, EMBER_UNWIND_FAST=0" "$t_dw0" libdw0
row "  libunwind, EMBER_UNWIND_FAST=0" "$t_lu0" libunwind0
row "perf report" "$t_perf" perf
echo "(no unwinding, ember --no-children -g none: $t_none s; throughput = samples / (wall - that))"

# A stock binary: Debian's python3 (no frame pointers; its DWARF from
# python3.11-dbg, compressed, with deep inline chains) recorded by perf,
# reported with inline frames (their index per CU; the inflated copies of
# the debug files, cold then warm in a fresh cache) and with --no-inline,
# beside perf report --inline.  Best of 3 (wall and user+sys CPU).
# perf --inline may split a function's children row in two (python3's
# _PyRun_AnyFileObject: 99.80% + 0.12%, one 99.93% row with --no-inline
# as in ember): its tree of entries compares inline symbols by name and
# others by address; the top-20 comparison then says "differs".
py=/usr/bin/python3
pyid=$(readelf -n "$(readlink -f "$py")" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$pyid" ] && [ ! -e "/usr/lib/debug/.build-id/${pyid:0:2}/${pyid:2}.debug" ]; then
	echo; echo "(no debug file for $py: apt-get install python3.11-dbg gives it inline frames)"
fi
pyfile=$tmp/py.data
perf record -q --call-graph dwarf -F 999 -o "$pyfile" -- "$py" "$top/tests/workloads/pyloop.py" "$secs" \
	>/dev/null 2>&1
pysamples=$(perf report -i "$pyfile" --stats 2>/dev/null |
	awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
# best wall and CPU seconds of 3 runs of a command: "WALL CPU", output in $tmp/$1.out
best3() {
	local tag=$1; shift
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %U %S' -o "$tmp/$tag.time" "$@" >"$tmp/$tag.out" 2>/dev/null
		awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/$tag.time"
	done | sort -n -k2 | head -1
}
export EMBER_CACHE_DIR=$tmp/cache
/usr/bin/time -f '%e %U %S' -o "$tmp/cold.time" \
	"$EMBER" report -i "$pyfile" --stdio --children -gnone >/dev/null 2>&1
read -r w_cold c_cold < <(awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/cold.time")
read -r w_inl c_inl < <(best3 pyinl "$EMBER" report -i "$pyfile" --stdio --children -gnone)
read -r w_noinl c_noinl < <(best3 pynoinl "$EMBER" report -i "$pyfile" --stdio --children -gnone --no-inline)
read -r w_pyperf c_pyperf < <(best3 pyperf perf report -i "$pyfile" --stdio --children -g none --inline)
unset EMBER_CACHE_DIR
x() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / (b > 0 ? b : 0.01) }'; }
if diff <(top20 "$tmp/pyinl.out") <(top20 "$tmp/pyperf.out") >/dev/null; then same=identical
else same="differs: $(diff <(top20 "$tmp/pyinl.out") <(top20 "$tmp/pyperf.out") |
	grep '^[<>]' | head -4 | tr '\n' ' ')"; fi
echo
echo "stock binary: $py pyloop.py $secs under perf record --call-graph dwarf -F 999:" \
	"$(du -h "$pyfile" | cut -f1), $pysamples samples"
printf '%-40s %8s %8s %10s %12s\n' "report --children -g none" "wall s" "cpu s" "vs perf" "vs no-inline"
pyrow() {
	printf '%-40s %8s %8s %9sx %11sx\n' "$1" "$2" "$3" "$(x "$w_pyperf" "$2")" "$(x "$3" "$c_noinl")"
}
pyrow "ember, inline frames, cache cold" "$w_cold" "$c_cold"
pyrow "ember, inline frames" "$w_inl" "$c_inl"
pyrow "ember --no-inline" "$w_noinl" "$c_noinl"
pyrow "perf report --inline" "$w_pyperf" "$c_pyperf"
echo "(vs perf: perf's wall time / this one's; vs no-inline: CPU time / ember --no-inline's;" \
	"top-20 children with inline frames as perf's: $same)"

# The leaf-repair snapshot: workload speed (rounds per CPU second) and
# file size under --call-graph fp, with and without it, alternating to share noise.
echo
printf '%-22s %14s %10s %10s\n' "record fp (leafy)" "rounds/cpu-s" "samples" "file"
for mode in snapshot --no-leaf-fix snapshot --no-leaf-fix; do
	arg=; [ "$mode" = --no-leaf-fix ] && arg=--no-leaf-fix
	out=$("$EMBER" record --call-graph fp -F 4000 $arg -o "$tmp/g.data" -- "$tmp/leafy" 3 2>"$tmp/g.err")
	rate=$(awk '{ print int($2 / $4) }' <<<"$out")
	n=$(awk '/samples/ { for (i = 1; i <= NF; i++) if ($i ~ /^samples/) print $(i-1) }' "$tmp/g.err")
	printf '%-22s %14s %10s %10s\n' "${mode}" "$rate" "$n" "$(du -h "$tmp/g.data" | cut -f1)"
done
