#!/usr/bin/env bash
# bench/record.sh - ember record beside perf record, measured in the same run
# (a benchmark, not a test: it asserts nothing).
#
# At -F 99, 999 and 4999 with -a and frame-pointer call chains (ember's
# --call-graph fp beside perf's -g; bench/online.sh measures ember's -g,
# which unwinds with CFI), while the spin workload keeps every CPU busy,
# for each recorder: the workload's throughput loss against an
# unrecorded baseline, the recorder's own CPU time (user+sys), samples lost,
# and file size.  Then the start-to-exit time of `record -- true` (perf also
# with --no-bpf-event: its side-band thread otherwise waits ~1 s at exit).
# One table with the ratio ember/perf.  Takes about two minutes.
#
# Other load on the machine only ever lowers the workload's throughput, so
# each configuration runs REPEAT times (baseline, ember and perf in turn,
# the rates round-robin) and the best throughput counts; CPU time and file size are means over the
# runs, lost a total.  A run whose recorder fails is left out and reported.
#
#   EMBER=./ember WORKLOADS=build/workloads bench/record.sh
#   SECONDS_PER_RUN=2 RATES="99 999 4999" REPEAT=3 TRUE_RUNS=5  (defaults)
set -u
: "${SECONDS_PER_RUN:=2}" "${RATES:=99 999 4999}" "${TRUE_RUNS:=5}" "${REPEAT:=3}"
. "$(dirname "$0")/lib.sh"
bench_setup record spin

lost_in() {
	"$PERF" script -i "$1" --show-lost-events -F comm 2>/dev/null |
		awk '/PERF_RECORD_LOST / { s += $NF } END { print s + 0 }'
}

# measure NAME RECORDER... : record -a -g system-wide around one spin run;
# sets RATE, CPU, LOST, MB.  The recorder gets a head start so its set-up
# is not charged to the workload, and outlives the workload.
measure() {
	local name=$1; shift
	local out=$T/$name.data
	bash -c '"$@" >/dev/null 2>"'"$T/$name.err"'"; s=$?; times >"'"$T/$name.times"'"; exit $s' \
		_ "$@" -o "$out" -- sleep "$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { print s + 1.5 }')" &
	local rpid=$! rc
	sleep 0.8
	RATE=$(spin_rate)
	wait "$rpid"; rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "bench/record.sh: $name exited $rc (run not counted): $(grep -v '^\[' "$T/$name.err" | head -c 200)" >&2
		rm -f "$out"
		return 1
	fi
	CPU=$(cpu_of "$T/$name.times")
	LOST=$(lost_in "$out")
	MB=$(awk -v s="$(stat -c %s "$out" 2>/dev/null || echo 0)" 'BEGIN { printf "%.2f", s / 1048576 }')
	rm -f "$out"
}

# start_to_exit RECORDER... : median wall ms of TRUE_RUNS runs of `... -- true`.
start_to_exit() {
	local i t0 t1
	for ((i = 0; i < TRUE_RUNS; i++)); do
		t0=$(date +%s%N)
		"$@" -o "$T/true.data" -- true >/dev/null 2>&1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
	rm -f "$T/true.data" "$T/true.data.old"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
loss() { awk -v r="$1" -v b="$2" 'BEGIN { if (r == "-") print "-"; else printf "%.1f", (b - r) * 100 / b }'; }

echo "bench/record.sh: $NCPU CPUs busy with spin, ${SECONDS_PER_RUN}s per run; $("$EMBER" --version); $("$PERF" --version)" >&2
declare -A R N
base=0 bmin=
# Repetitions are the outer loop so that each configuration's runs are
# spread over the whole benchmark, not bunched into one slow spell.
for ((rep = 0; rep < REPEAT; rep++)); do
	for f in $RATES; do
		b=$(spin_rate)
		echo "  baseline: $b units/s" >&2
		base=$(awk -v a="$base" -v b="$b" 'BEGIN { print (b > a ? b : a) }')
		bmin=$(awk -v a="${bmin:-$b}" -v b="$b" 'BEGIN { print (b < a ? b : a) }')
		for tool in ember perf; do
			if [ "$tool" = ember ]; then measure "ember-$f" "$EMBER" record -F "$f" -a --call-graph fp || continue
			else measure "perf-$f" "$PERF" record -F "$f" -a -g || continue; fi
			echo "  $tool -F $f: $RATE units/s, cpu ${CPU}s, lost $LOST, ${MB} MB" >&2
			N[$tool-$f]=$((${N[$tool-$f]:-0} + 1))
			# best rate; sums of cpu, lost and MB
			R[$tool-$f]=$(awk -v o="${R[$tool-$f]:-0 0 0 0}" -v r="$RATE" -v c="$CPU" -v l="$LOST" -v m="$MB" \
				'BEGIN { split(o, v, " "); if (r > v[1]) v[1] = r
					printf "%s %s %s %s", v[1], v[2] + c, v[3] + l, v[4] + m }')
		done
	done
done
for f in $RATES; do
	for tool in ember perf; do
		R[$tool-$f]=$(awk -v o="${R[$tool-$f]:-0 0 0 0}" -v n="${N[$tool-$f]:-0}" 'BEGIN { split(o, v, " ")
			if (n == 0) { print "- - - -"; exit }
			printf "%s %.3f %d %.2f", v[1], v[2] / n, v[3], v[4] / n }')
	done
done

t_ember=$(start_to_exit "$EMBER" record)
t_perf=$(start_to_exit "$PERF" record)
t_perf_nobpf=$(start_to_exit "$PERF" record --no-bpf-event)

printf '\n%-24s %12s %12s %12s\n' "metric (-a -g, busy)" ember perf ember/perf
for f in $RATES; do
	read -r er ec el em <<<"${R[ember-$f]}"
	read -r pr pc pl pm <<<"${R[perf-$f]}"
	el_=$(loss "$er" "$base"); pl_=$(loss "$pr" "$base")
	printf '%-24s %12s %12s %12s\n' "-F $f units/s (best)" "$er" "$pr" "$(ratio "$er" "$pr")"
	# A ratio of two losses within the noise (< 1%) means nothing.
	lr=$(awk -v p="$pl_" 'BEGIN { exit !(p >= 1) }' && ratio "$el_" "$pl_" || echo "n/a")
	printf '%-24s %11s%% %11s%% %12s\n' "-F $f throughput loss" "$el_" "$pl_" "$lr"
	printf '%-24s %11ss %11ss %12s\n' "-F $f recorder CPU" "$ec" "$pc" "$(ratio "$ec" "$pc")"
	printf '%-24s %12s %12s %12s\n' "-F $f lost (all runs)" "$el" "$pl" "$(ratio "$el" "$pl")"
	printf '%-24s %9s MB %9s MB %12s\n' "-F $f file size" "$em" "$pm" "$(ratio "$em" "$pm")"
done
printf '%-24s %9s ms %9s ms %12s\n' "record -- true" "$t_ember" "$t_perf" "$(ratio "$t_ember" "$t_perf")"
printf '%-24s %12s %9s ms %12s\n' "  (--no-bpf-event)" "" "$t_perf_nobpf" "$(ratio "$t_ember" "$t_perf_nobpf")"
printf '%-24s %12s\n' "baseline throughput" "$base units/s (best of $((REPEAT * $(wc -w <<<"$RATES"))) runs; worst $bmin: other load on the machine)"
ne= np=
for f in $RATES; do ne+="${ne:+/}${N[ember-$f]:-0}"; np+="${np:+/}${N[perf-$f]:-0}"; done
printf '%-24s %12s %12s\n' "runs counted (per -F)" "$ne" "$np"
