#!/usr/bin/env bash
# bench/syscount.sh - what counting syscalls costs the counted program: a
# loop of getppid calls (tests/workloads/toolwork getppid N, which times its
# own loop) bare, under `ember syscount` (counting mode: one counter per
# syscalls:sys_enter_* tracepoint, nothing recorded), under `ember syscount
# -P` and `-L` (every raw_syscalls sys_enter, and sys_exit for -L, recorded
# and read back through the replay), under `perf stat -e
# raw_syscalls:sys_enter` (one counter, nothing recorded) and `perf trace
# -s` (perf's own syscall summary), in the same run.  A benchmark, not a
# test: it asserts nothing.
#
# Each row runs REPEAT times in turn with the others and keeps its best
# loop time (load only ever slows a run down); the slowdown is that time
# over bare's, and "vs perf stat" over perf stat's.  The wall time of the
# whole command (the tool's start and its summary too) is beside it, then
# what ember counted of the workload's calls (getppid's row; -P: the
# process's, its start-up's calls too) and the events it lost at the ring.
# A getppid takes some 5 us bare on this VM and 60 under perf trace (a
# run of 2000 calls), so the default of 150000 calls keeps the whole run
# near a minute (2000000 took over 150 s).
#
#   EMBER=./ember WORKLOADS=build/workloads bench/syscount.sh
#   CALLS=150000 REPEAT=3  (defaults)
set -u
: "${CALLS:=150000}" "${REPEAT:=3}"
. "$(dirname "$0")/lib.sh"
bench_setup syscount toolwork
W=$WORKLOADS/toolwork

ROWS=(bare ember emberP emberL perfstat perftrace)
declare -A LABEL=(
	[bare]="bare"
	[ember]="ember syscount (counters)"
	[emberP]="ember syscount -P (samples)"
	[emberL]="ember syscount -L (samples)"
	[perfstat]="perf stat -e raw_syscalls:sys_enter"
	[perftrace]="perf trace -s"
)

# run ROW: the command of that row on the workload.
run() {
	case $1 in
	bare) "$W" getppid "$CALLS" ;;
	ember) "$EMBER" syscount -- "$W" getppid "$CALLS" ;;
	emberP) "$EMBER" syscount -P -- "$W" getppid "$CALLS" ;;
	emberL) "$EMBER" syscount -L -- "$W" getppid "$CALLS" ;;
	perfstat) "$PERF" stat -e raw_syscalls:sys_enter -- "$W" getppid "$CALLS" ;;
	perftrace) "$PERF" trace -s -- "$W" getppid "$CALLS" ;;
	esac
}

# counted ROW: the workload's calls ember's summary shows (last run).
counted() {
	case $1 in
	ember | emberL) awk '$1 == "getppid" { print $2 }' "$T/$1.out" ;;
	emberP) awk '$2 == "toolwork" { print $3 }' "$T/$1.out" ;;
	esac
}

declare -A LOOP BESTWALL LOST COUNTED
for ((i = 0; i < REPEAT; i++)); do
	for r in "${ROWS[@]}"; do
		bench_run "$r" run "$r"
		# Counting mode's counters are closed by a child after the
		# output (some 7 s of kernel grace periods): let it finish
		# before the next row runs.
		while pgrep -x ember-close >/dev/null; do sleep 0.2; done
		# The workload's line is on stdout or, under a tool, stderr.
		loop=$(cat "$T/$r.out" "$T/$r.err" | awk '/^toolwork: getppid/ { print $(NF - 1) }')
		LOOP[$r]=$(bench_best min "${loop:-0}" "${LOOP[$r]:-}")
		BESTWALL[$r]=$(bench_best min "$WALL" "${BESTWALL[$r]:-}")
		lost=$(grep -o '[0-9]* events lost' "$T/$r.err" | head -1 | cut -d' ' -f1)
		LOST[$r]=${lost:-0}
		COUNTED[$r]=$(counted "$r")
	done
done

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "failed" }'
}
printf '%-38s %9s %9s %12s %9s %9s %s\n' "getppid x $CALLS, best of $REPEAT" "loop (s)" \
	"slowdown" "vs perf stat" "wall (s)" "counted" "lost (last run)"
for r in "${ROWS[@]}"; do
	ours=; case $r in ember*) ours=1 ;; esac
	printf '%-38s %9.3f %9s %12s %9.3f %9s %s\n' "${LABEL[$r]}" "${LOOP[$r]}" \
		"$(ratio "${LOOP[$r]}" "${LOOP[bare]}")" "$(ratio "${LOOP[$r]}" "${LOOP[perfstat]}")" \
		"${BESTWALL[$r]}" "${ours:+${COUNTED[$r]:-?}}" "${ours:+${LOST[$r]}}"
done
