#!/usr/bin/env bash
# bench/offcpu.sh - the cost of recording context switches: two threads
# ping-pong a byte over pipes (tests/workloads/pingpong), and its switches
# per second are measured bare, under `ember record --off-cpu` and under
# `perf record -e sched:sched_switch -g`, in the same run.  A benchmark, not
# a test: it asserts nothing.
#
# Other load only ever lowers the rate, so each recorder runs REPEAT times
# in turn with the bare baseline and the best rate counts; file sizes are
# of the last run.  ember --off-cpu records more than sched_switch -g (also
# sched_wakeup(_new) with call chains, for waker stacks, and switch records,
# for switch-ins a per-task recording cannot otherwise see), so perf is
# also run with those same events: the like-for-like row.  perf gets --no-bpf-event and -B (build-id collection
# at exit sometimes aborts perf 6.1 here; it is not part of the cost).
#
#   EMBER=./ember WORKLOADS=build/workloads bench/offcpu.sh
#   SECONDS_PER_RUN=2 REPEAT=3  (defaults)
set -u
: "${EMBER:=./ember}" "${WORKLOADS:=build/workloads}" "${PERF:=perf}"
: "${SECONDS_PER_RUN:=2}" "${REPEAT:=3}"
EMBER=$(realpath "$EMBER"); WORKLOADS=$(realpath "$WORKLOADS")
PP=$WORKLOADS/pingpong
for need in "$EMBER" "$PP"; do
	[ -x "$need" ] || { echo "bench/offcpu.sh: $need missing (make; make workloads)" >&2; exit 2; }
done
command -v "$PERF" >/dev/null || { echo "bench/offcpu.sh: Linux perf missing (make deps)" >&2; exit 2; }

T=$(mktemp -d /tmp/ember-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

# rate_of FILE: the switches/s the workload printed (0 when it did not).
rate_of() {
	awk '/^pingpong:/ { r = $(NF - 1) } END { print r + 0 }' "$1"
}

run_bare() { "$PP" "$SECONDS_PER_RUN" >"$T/bare.out" 2>&1; rate_of "$T/bare.out"; }
run_ember() {
	"$EMBER" record -q --off-cpu -o "$T/ember.data" -- "$PP" "$SECONDS_PER_RUN" \
		>"$T/ember.out" 2>"$T/ember.err"
	rate_of "$T/ember.out"
}
run_perf() {
	"$PERF" record -q -B --no-bpf-event -e sched:sched_switch -g -o "$T/perf.data" -- \
		"$PP" "$SECONDS_PER_RUN" >"$T/perf.out" 2>"$T/perf.err"
	rate_of "$T/perf.out"
}

best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
run_perf_same() {
	"$PERF" record -q -B --no-bpf-event -e sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new \
		--switch-events -g -o "$T/perfsame.data" -- "$PP" "$SECONDS_PER_RUN" \
		>"$T/perfsame.out" 2>"$T/perfsame.err"
	rate_of "$T/perfsame.out"
}

bare=0 ember=0 perf=0 same=0
for i in $(seq "$REPEAT"); do
	bare=$(best "$bare" "$(run_bare)")
	ember=$(best "$ember" "$(run_ember)")
	perf=$(best "$perf" "$(run_perf)")
	same=$(best "$same" "$(run_perf_same)")
done

size_mb() { [ -f "$1" ] && awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }' || echo -; }
slow() { awk -v b="$bare" -v r="$1" 'BEGIN { if (b > 0 && r > 0) printf "%.1f%%", 100 * (1 - r / b); else print "failed" }'; }
events() { "$EMBER" script -i "$1" -F event 2>/dev/null | grep -c 'sched:sched_switch'; }

printf '%-44s %14s %10s %9s %10s\n' "pingpong ${SECONDS_PER_RUN}s, best of $REPEAT" "switches/s" "slowdown" "file MB" "switches"
printf '%-44s %14.0f %10s %9s %10s\n' "bare" "$bare" "-" "-" "-"
printf '%-44s %14.0f %10s %9s %10s\n' "ember record --off-cpu" "$ember" "$(slow "$ember")" \
	"$(size_mb "$T/ember.data")" "$(events "$T/ember.data")"
printf '%-44s %14.0f %10s %9s %10s\n' "perf record -e sched:sched_switch -g" "$perf" "$(slow "$perf")" \
	"$(size_mb "$T/perf.data")" "$(events "$T/perf.data")"
printf '%-44s %14.0f %10s %9s %10s\n' "perf record, the same events as --off-cpu" "$same" "$(slow "$same")" \
	"$(size_mb "$T/perfsame.data")" "$(events "$T/perfsame.data")"
awk -v b="$bare" -v e="$ember" -v p="$perf" -v q="$same" 'BEGIN {
	if (b > 0 && e > 0 && p > 0 && b > p)
		printf "slowdown ratio ember/perf(sched_switch -g): %.2f (target: at most 1)\n", (b - e) / (b - p)
	if (b > 0 && e > 0 && q > 0 && b > q)
		printf "slowdown ratio ember/perf(same events):     %.2f\n", (b - e) / (b - q)
}'
grep -h 'lost' "$T/ember.err" "$T/perf.err" "$T/perfsame.err" 2>/dev/null | head -3
