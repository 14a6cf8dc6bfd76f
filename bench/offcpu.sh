#!/usr/bin/env bash
# bench/offcpu.sh - the cost of recording context switches: two threads
# ping-pong a byte over pipes (tests/workloads/pingpong), and its switches
# per second are measured bare, under `ember record --off-cpu` and under
# `perf record -e sched:sched_switch -g`, in the same run.  A benchmark, not
# a test: it asserts nothing.
#
# Other load only ever lowers the rate, so each recorder runs REPEAT times
# in turn with the bare baseline and the best rate counts; file sizes are
# of the last run.  Beside the rate, the CPU time (user + system, recorder
# and workload together) per round trip, the least of the runs: load
# disturbs it much less than the rate, so its extra over bare is the
# steadier measure of what recording costs.
#
# ember --off-cpu walks frame pointers and keeps a 128-byte stack
# snapshot that restores the caller of the libc wrapper a thread blocked
# in (--no-leaf-fix drops it, a row of its own), beside perf's
# sched_switch -g; with -g it unwinds each switch's user stack with CFI
# while recording (a 16 KB stack copy a switch), beside perf's
# --call-graph dwarf.  ember also records switch records, for the
# switch-ins a per-task recording cannot see in sched_switch, so perf is
# also run with those same events.  The
# higher --off-cpu levels are shown for their cost: =wakeups adds
# sched_wakeup(_new) without call chains (sched lat), =wakers adds their
# call chains (offcpu --wakers).  perf gets --no-bpf-event and -B
# (build-id collection at exit sometimes aborts perf 6.1 here; it is not
# part of the cost).
#
# Both threads are pinned to one CPU (PIN, default 1): every switch is
# then a direct hand-off on that CPU and the rate measures what a switch
# costs.  Unpinned (PIN=), each round trip waits for a cross-CPU wakeup
# (an IPI, ~25 us on these VMs) and the rate mostly measures that noise.
#
#   EMBER=./ember WORKLOADS=build/workloads bench/offcpu.sh
#   SECONDS_PER_RUN=2 REPEAT=3 PIN=1  (defaults)
set -u
: "${SECONDS_PER_RUN:=2}" "${REPEAT:=3}" "${PIN=1}"
. "$(dirname "$0")/lib.sh"
bench_setup offcpu pingpong
PP=$WORKLOADS/pingpong

# The rows: each a name and its label.
ROWS=(bare ember nofix perf same cfi dwarf wakeups wakers)
declare -A LABEL=(
	[bare]="bare"
	[ember]="ember record --off-cpu"
	[nofix]="ember record --off-cpu --no-leaf-fix"
	[cfi]="ember record --off-cpu -g (CFI)"
	[dwarf]="perf record sched_switch --call-graph dwarf"
	[perf]="perf record -e sched:sched_switch -g"
	[same]="perf record, the same events as --off-cpu"
	[wakeups]="ember record --off-cpu=wakeups"
	[wakers]="ember record --off-cpu=wakers"
)

# run_row NAME: the workload under that row's recorder, into $T/NAME.*.
run_row() {
	local perf=("$PERF" record -q -B --no-bpf-event -o "$T/$1.data")
	local pp=("$PP" "$SECONDS_PER_RUN")
	[ -n "$PIN" ] && pp=(taskset -c "$PIN" "${pp[@]}")
	case $1 in
	bare) "${pp[@]}" ;;
	ember) "$EMBER" record -q --off-cpu -o "$T/$1.data" -- "${pp[@]}" ;;
	cfi) "$EMBER" record -q --off-cpu -g -o "$T/$1.data" -- "${pp[@]}" ;;
	nofix) "$EMBER" record -q --off-cpu --no-leaf-fix -o "$T/$1.data" -- "${pp[@]}" ;;
	dwarf) "${perf[@]}" -e sched:sched_switch --call-graph dwarf -- "${pp[@]}" ;;
	wakeups|wakers) "$EMBER" record -q "--off-cpu=$1" -o "$T/$1.data" -- "${pp[@]}" ;;
	perf) "${perf[@]}" -e sched:sched_switch -g -- "${pp[@]}" ;;
	same) "${perf[@]}" -e sched:sched_switch --switch-events -g -- "${pp[@]}" ;;
	esac
}

# measure NAME: one run; prints "switches/s cpu-ns-per-round-trip" (0 0
# when the workload printed nothing).
measure() {
	bench_run "$1" run_row "$1"
	awk -v cpu="$CPU" '/^pingpong:/ { trips = $2; rate = $(NF - 1) }
	     END { if (trips > 0) printf "%.0f %.0f\n", rate, cpu * 1e9 / trips; else print "0 0" }' \
		"$T/$1.out"
}

declare -A RATE CPUNS
for i in $(seq "$REPEAT"); do
	for r in "${ROWS[@]}"; do
		read -r rate cpu < <(measure "$r")
		RATE[$r]=$(bench_best max "$rate" "${RATE[$r]:-}")
		CPUNS[$r]=$(bench_best min "$cpu" "${CPUNS[$r]:-}")
	done
done

size_mb() { [ -f "$1" ] && awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }' || echo -; }
slow() { awk -v b="${RATE[bare]}" -v r="$1" 'BEGIN { if (b > 0 && r > 0) printf "%.1f%%", 100 * (1 - r / b); else print "failed" }'; }
extra() { awk -v b="${CPUNS[bare]}" -v c="$1" 'BEGIN { if (b > 0 && c > 0) printf "+%.0f", c - b; else print "-" }'; }
events() { [ -f "$1" ] && "$EMBER" script -i "$1" -F event 2>/dev/null | grep -c 'sched:sched_switch' || echo -; }

printf '%-42s %11s %9s %11s %8s %8s %9s\n' "pingpong ${SECONDS_PER_RUN}s${PIN:+ on CPU $PIN}, best of $REPEAT" "switches/s" \
	"slowdown" "ns/trip" "extra" "file MB" "switches"
for r in "${ROWS[@]}"; do
	printf '%-42s %11.0f %9s %11.0f %8s %8s %9s\n' "${LABEL[$r]}" "${RATE[$r]}" \
		"$([ "$r" = bare ] && echo - || slow "${RATE[$r]}")" "${CPUNS[$r]}" \
		"$([ "$r" = bare ] && echo - || extra "${CPUNS[$r]}")" \
		"$(size_mb "$T/$r.data")" "$(events "$T/$r.data")"
done
# ratio NAME OF: ember's cost over perf's, by rate and by CPU time.
ratio() {
	awk -v b="${RATE[bare]}" -v e="${RATE[$1]}" -v p="${RATE[$2]}" \
	    -v cb="${CPUNS[bare]}" -v ce="${CPUNS[$1]}" -v cp="${CPUNS[$2]}" -v what="$3" 'BEGIN {
		if (b > 0 && e > 0 && p > 0 && b > p)
			printf "%s slowdown %.2f, extra CPU %.2f", what, (b - e) / (b - p), \
				(cp > cb && ce > 0) ? (ce - cb) / (cp - cb) : 0
	}'
}
echo "$(ratio ember perf "ember/perf(sched_switch -g):") (target: at most 1)"
echo "$(ratio ember same "ember/perf(same events):    ")"
echo "$(ratio nofix perf "ember --no-leaf-fix/perf(sched_switch -g):")"
echo "$(ratio cfi dwarf "ember -g/perf(--call-graph dwarf):")"
# Lost events make a run look cheaper than it was: name the runs that lost.
for f in "$T"/*.err; do
	grep -i 'lost' "$f" 2>/dev/null | sed "s|^|$(basename "$f" .err) (last run): |" | head -2
done
