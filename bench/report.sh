#!/usr/bin/env bash
# bench/report.sh - the reporter beside perf on one recording of at least
# 500k samples with callchains, in one run: wall time and peak memory of
# `ember report --stdio` vs `perf report --stdio`, `ember script` vs
# `perf script`, and `ember flame` (data file to SVG) vs `perf script >
# /dev/null`.  Not a test: it prints a table and the ratios.
#
#   EMBER=./ember bench/report.sh [FILE]
# Without FILE it records one with perf: -a -g at 10 kHz per CPU for about
# 30 s while the machine compiles ember (a busy machine with deep stacks),
# kept in /tmp/ember-bench-compile.data for later runs.
set -u
: "${EMBER:=./ember}"
top=$(cd "$(dirname "$0")/.." && pwd)
file=${1:-/tmp/ember-bench-compile.data}
tmp=$(mktemp -d /tmp/ember-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# A compile loop over a copy of this tree: cc1, as, ld and make.
compile_loop() {
	local src=$tmp/src
	mkdir -p "$src"
	(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src")
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		make -C "$src" -s -B -j2 BUILD="$tmp/build" ember >/dev/null 2>&1
	done
}

if [ ! -s "$file" ]; then
	echo "recording $file with perf while compiling (about 30 s)..." >&2
	compile_loop 32 &
	loop=$!
	sleep 1
	perf record -q -B -o "$file" -c 100000 -a -g -- sleep 30 >/dev/null 2>&1
	wait $loop
fi
samples=$(perf report -i "$file" --stats 2>/dev/null |
	awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
echo "file: $file ($(du -h "$file" | cut -f1), $samples samples)"

# run NAME CMD...: one run, output discarded; sets SECS (wall, from the
# clock in ns: time(1)'s %e has 10 ms steps) and RSS_MB (peak, from time(1)).
run() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$tmp/time" -f "%M" "$@" >/dev/null 2>"$tmp/err"
	t1=$(date +%s%N)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	RSS_MB=$(awk -v k="$(tail -1 "$tmp/time")" 'BEGIN { printf "%.1f", k / 1024 }')
}

# Each command runs five times; the best time counts (the page cache is
# warm for everyone after the first).
best() {
	local name=$1 key=$2 b="" m=""; shift 2
	for i in 1 2 3 4 5; do
		run "$@"
		if [ -z "$b" ] || awk -v a="$SECS" -v b="$b" 'BEGIN { exit !(a < b) }'; then
			b=$SECS; m=$RSS_MB
		fi
	done
	printf "%-34s %8.3f s %9.1f MB\n" "$name" "$b" "$m"
	eval "T_$key=$b; M_$key=$m"
}

printf "%-34s %10s %12s\n" "command" "wall" "peak RSS"
best "perf report --stdio" perf_report perf report -i "$file" --stdio
best "ember report --stdio" ember_report "$EMBER" report -i "$file" --stdio
best "perf script" perf_script perf script -i "$file"
best "ember script" ember_script "$EMBER" script -i "$file"
best "ember flame (data file to SVG)" ember_flame "$EMBER" flame -i "$file" -o "$tmp/f.svg"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "report: ember $(ratio "$T_perf_report" "$T_ember_report")x faster than perf report;" \
	"peak memory $(ratio "$M_ember_report" "$M_perf_report") of perf's"
echo "script: ember $(ratio "$T_perf_script" "$T_ember_script")x faster than perf script;" \
	"peak memory $(ratio "$M_ember_script" "$M_perf_script") of perf's"
echo "flame:  the whole ember pipeline takes $(ratio "$T_ember_flame" "$T_perf_script") of" \
	"perf script's time alone; peak memory $(ratio "$M_ember_flame" "$M_perf_script") of perf script's"

# The small case: 0.2 s of the known-ratio workload, user space only
# (about 200 samples, no kernel frames), where start-up costs dominate:
# kallsyms is read ahead on a thread and dropped unread when no kernel
# address needs it.
small=$tmp/small.data
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/ratio" "$top/tests/workloads/ratio.c" || exit 1
"$EMBER" record -q -e cpu-clock:u -F 999 -g -o "$small" -- "$tmp/ratio" 0.2 >/dev/null 2>&1
echo
echo "small recording: $(perf report -i "$small" --stats 2>/dev/null |
	awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }') samples"
best "perf report --stdio (small)" perf_small perf report -i "$small" --stdio
best "ember report --stdio (small)" ember_small "$EMBER" report -i "$small" --stdio
echo "small: ember $(ratio "$T_perf_small" "$T_ember_small")x faster than perf report"
