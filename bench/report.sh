#!/usr/bin/env bash
# bench/report.sh - ember report/script beside perf report/script on the
# same recording of at least 500k samples with callchains: wall time and
# peak memory (max RSS) of each, and the ratios.  Not a test.
#
#   EMBER=./ember WORKLOADS=build/workloads bench/report.sh [FILE]
# Without FILE it records one with perf (-a -g, both CPUs busy, ~30 s) and
# keeps it in /tmp/ember-bench-report.data for later runs.
set -u
: "${EMBER:=./ember}" "${WORKLOADS:=build/workloads}"
file=${1:-/tmp/ember-bench-report.data}

if [ ! -s "$file" ]; then
	echo "recording $file with perf (about 30 s)..." >&2
	"$WORKLOADS/spin" 2 32 >/dev/null &
	perf record -q -o "$file" -c 100000 -a -g -- sleep 30 >/dev/null 2>&1
	wait
fi
samples=$(perf report -i "$file" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')
echo "file: $file ($(du -h "$file" | cut -f1), $samples samples)"

# measure NAME CMD...: prints "seconds max_rss_kib" of one run, output discarded.
measure() {
	/usr/bin/time -f "%e %M" -o /tmp/ember-bench.time "$@" >/dev/null 2>&1
	cat /tmp/ember-bench.time
}

printf "%-28s %10s %12s\n" "command" "seconds" "max RSS MiB"
row() {
	local name=$1; shift
	read -r secs rss < <(measure "$@")
	printf "%-28s %10.2f %12.1f\n" "$name" "$secs" "$(echo "$rss / 1024" | bc -l)"
	eval "${name//[^a-z]/_}_s=$secs; ${name//[^a-z]/_}_m=$rss"
}
row "perf report --stdio" perf report -i "$file" --stdio
row "ember report --stdio" "$EMBER" report -i "$file" --stdio
row "perf script" perf script -i "$file"
row "ember script" "$EMBER" script -i "$file"

ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo
echo "report: ember is $(ratio "$perf_report___stdio_s" "$ember_report___stdio_s")x faster, peak memory $(ratio "$ember_report___stdio_m" "$perf_report___stdio_m") of perf's"
echo "script: ember is $(ratio "$perf_script_s" "$ember_script_s")x faster, peak memory $(ratio "$ember_script_m" "$perf_script_m") of perf's"
