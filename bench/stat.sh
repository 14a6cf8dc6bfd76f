#!/usr/bin/env bash
# bench/stat.sh - wall time of a short workload bare, under `ember stat` and
# under `perf stat`, measured in the same run (a benchmark: asserts nothing).
#
# Each workload runs RUNS times per tool, the tools interleaved round by
# round so that drift in machine load hits all three alike; the table gives
# the mean wall time per run, the overhead over bare, and ember's overhead
# as a ratio of perf's (target: at most 1).
#
#   EMBER=./ember WORKLOADS=build/workloads bench/stat.sh
#   RUNS=30 (default)
set -u
: "${EMBER:=./ember}" "${WORKLOADS:=build/workloads}" "${PERF:=perf}" "${RUNS:=30}"
EMBER=$(realpath "$EMBER"); WORKLOADS=$(realpath "$WORKLOADS")
for need in "$EMBER" "$WORKLOADS/touch" "$WORKLOADS/burn"; do
	[ -x "$need" ] || { echo "bench/stat.sh: $need missing (make; make workloads)" >&2; exit 2; }
done
command -v "$PERF" >/dev/null || { echo "bench/stat.sh: Linux perf missing (make deps)" >&2; exit 2; }

# ns_of CMD... : wall nanoseconds of one run of CMD, output discarded.
ns_of() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

# bench NAME CMD... : one table row for CMD.
bench() {
	local name=$1; shift
	local bare=0 ember=0 perf=0
	for ((i = 0; i < RUNS; i++)); do
		bare=$((bare + $(ns_of "$@")))
		ember=$((ember + $(ns_of "$EMBER" stat -- "$@")))
		perf=$((perf + $(ns_of "$PERF" stat -- "$@")))
	done
	awk -v n="$name" -v b="$bare" -v e="$ember" -v p="$perf" -v r="$RUNS" 'BEGIN {
		b /= r * 1e6; e /= r * 1e6; p /= r * 1e6
		ratio = (p - b) > 0 ? (e - b) / (p - b) : 0
		printf "%-22s %9.2f %9.2f %9.2f %11.2f %11.2f %8.2f\n",
		       n, b, e, p, e - b, p - b, ratio }'
}

printf "%-22s %9s %9s %9s %11s %11s %8s\n" workload "bare ms" "ember ms" \
	"perf ms" "ember +ms" "perf +ms" "e/p"
bench "true" true
bench "touch 5000 pages" "$WORKLOADS/touch" 5000
bench "burn 0.05 s" "$WORKLOADS/burn" 0.05
