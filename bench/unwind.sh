#!/usr/bin/env bash
# bench/unwind.sh - DWARF unwinding beside perf, in one run: on one
# --call-graph dwarf recording of at least 50k samples (the known-ratio
# workload built -O2 -fomit-frame-pointer), the wall time of
# `ember report --stdio` with each unwinder (with the fast path in front,
# and without it: EMBER_UNWIND_FAST=0) and of `perf report --stdio`,
# unwinding throughput, and whether the top-20 children percentages are
# the same.  Then the cost of -g's leaf-repair snapshot: the workload's
# speed and the file size under `record --call-graph fp` with and without it.
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
