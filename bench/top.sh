#!/usr/bin/env bash
# bench/top.sh - ember top -a beside perf top -a at the same rate, in one
# run (a benchmark, not a test: it asserts nothing).
#
# While the spin workload keeps every CPU busy, each of `ember top --stdio
# -a -F F -d 1` and `perf top --stdio -a -F F -d 1` runs around one spin
# run: the workload's throughput loss against an unrecorded baseline, and
# the tool's own CPU time (user+sys: its recording, its reading and its
# screens), at each rate of RATES.  Each configuration runs REPEAT times
# (baseline, ember and perf in turn); the best throughput counts, CPU time
# is a mean.  Output goes to files (a terminal's speed is not measured).
#
#   EMBER=./ember WORKLOADS=build/workloads bench/top.sh
#   SECONDS_PER_RUN=4 RATES="999 4000" REPEAT=3  (defaults)
set -u
: "${SECONDS_PER_RUN:=4}" "${RATES:=999 4000}" "${REPEAT:=3}"
. "$(dirname "$0")/lib.sh"
bench_setup top spin

# measure NAME TOOL... : the tool runs from before to after one spin run,
# then gets SIGINT; sets RATE and CPU.
measure() {
	local name=$1; shift
	local secs
	secs=$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { print s + 2 }')
	bash -c 'timeout -s INT "$0" "$@" >"'"$T/$name.out"'" 2>"'"$T/$name.err"'" </dev/null
		times >"'"$T/$name.times"'"' "$secs" "$@" &
	local pid=$!
	sleep 1
	RATE=$(spin_rate)
	wait "$pid"
	CPU=$(cpu_of "$T/$name.times")
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
loss() { awk -v r="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - r) * 100 / b }'; }

echo "bench/top.sh: $NCPU CPUs busy with spin, ${SECONDS_PER_RUN}s per run; $("$EMBER" --version); $("$PERF" --version)" >&2
declare -A BEST CPUSUM
base=0
for ((rep = 0; rep < REPEAT; rep++)); do
	for f in $RATES; do
		b=$(spin_rate)
		base=$(awk -v a="$base" -v b="$b" 'BEGIN { print (b > a ? b : a) }')
		echo "  baseline: $b units/s" >&2
		for tool in ember perf; do
			if [ "$tool" = ember ]; then measure "ember-$f" "$EMBER" top --stdio -a -F "$f" -d 1
			else measure "perf-$f" "$PERF" top --stdio -a -F "$f" -d 1; fi
			echo "  $tool top -F $f: $RATE units/s, cpu ${CPU}s" >&2
			BEST[$tool-$f]=$(awk -v a="${BEST[$tool-$f]:-0}" -v b="$RATE" 'BEGIN { print (b > a ? b : a) }')
			CPUSUM[$tool-$f]=$(awk -v a="${CPUSUM[$tool-$f]:-0}" -v b="$CPU" 'BEGIN { print a + b }')
		done
	done
done

printf '\n%-28s %12s %12s %12s\n' "metric (top -a, busy)" ember perf ember/perf
for f in $RATES; do
	er=${BEST[ember-$f]} pr=${BEST[perf-$f]}
	ec=$(awk -v s="${CPUSUM[ember-$f]}" -v n="$REPEAT" 'BEGIN { printf "%.3f", s / n }')
	pc=$(awk -v s="${CPUSUM[perf-$f]}" -v n="$REPEAT" 'BEGIN { printf "%.3f", s / n }')
	printf '%-28s %11s%% %11s%% %12s\n' "-F $f throughput loss" "$(loss "$er" "$base")" \
		"$(loss "$pr" "$base")" ""
	printf '%-28s %11ss %11ss %12s\n' "-F $f own CPU (mean)" "$ec" "$pc" "$(ratio "$ec" "$pc")"
done
printf '%-28s %12s\n' "baseline throughput" "$base units/s (best)"
