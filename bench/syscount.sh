#!/usr/bin/env bash
# bench/syscount.sh - what counting syscalls costs the counted program: a
# loop of getppid calls (tests/workloads/toolwork getppid N) timed bare,
# under `ember syscount` (every sys_enter and sys_exit recorded and read
# back through the replay), under `ember syscount -L` (the same events,
# timed), under `perf stat -e raw_syscalls:sys_enter` (counted in the
# kernel, nothing recorded) and `perf trace -s` (perf's own syscall
# summary), in the same run.  A benchmark, not a test: it asserts nothing.
#
# Each row runs REPEAT times in turn with the others and keeps its best
# wall time (load only ever slows a run down); the slowdown is that time
# over bare's.  Events lost at the ring are reported beside ember's rows.
#
#   EMBER=./ember WORKLOADS=build/workloads bench/syscount.sh
#   CALLS=2000000 REPEAT=3  (defaults)
set -u
: "${EMBER:=./ember}" "${WORKLOADS:=build/workloads}" "${PERF:=perf}"
: "${CALLS:=2000000}" "${REPEAT:=3}"
EMBER=$(realpath "$EMBER"); WORKLOADS=$(realpath "$WORKLOADS")
W=$WORKLOADS/toolwork
for need in "$EMBER" "$W"; do
	[ -x "$need" ] || { echo "bench/syscount.sh: $need missing (make; make workloads)" >&2; exit 2; }
done
command -v "$PERF" >/dev/null || { echo "bench/syscount.sh: Linux perf missing (make deps)" >&2; exit 2; }

T=$(mktemp -d /tmp/ember-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

ROWS=(bare ember emberL perfstat perftrace)
declare -A LABEL=(
	[bare]="bare"
	[ember]="ember syscount"
	[emberL]="ember syscount -L"
	[perfstat]="perf stat -e raw_syscalls:sys_enter"
	[perftrace]="perf trace -s"
)

# run ROW: the command of that row on the workload.
run() {
	case $1 in
	bare) "$W" getppid "$CALLS" ;;
	ember) "$EMBER" syscount -- "$W" getppid "$CALLS" ;;
	emberL) "$EMBER" syscount -L -- "$W" getppid "$CALLS" ;;
	perfstat) "$PERF" stat -e raw_syscalls:sys_enter -- "$W" getppid "$CALLS" ;;
	perftrace) "$PERF" trace -s -- "$W" getppid "$CALLS" ;;
	esac
}

declare -A BEST LOST
for r in "${ROWS[@]}"; do BEST[$r]=; LOST[$r]=; done
for ((i = 0; i < REPEAT; i++)); do
	for r in "${ROWS[@]}"; do
		start=$(date +%s.%N)
		run "$r" >"$T/$r.out" 2>"$T/$r.err"
		end=$(date +%s.%N)
		t=$(echo "$end - $start" | bc -l)
		if [ -z "${BEST[$r]}" ] || [ "$(echo "$t < ${BEST[$r]}" | bc -l)" = 1 ]; then
			BEST[$r]=$t
		fi
		lost=$(grep -o '[0-9]* events lost' "$T/$r.err" | head -1 | cut -d' ' -f1)
		LOST[$r]=${lost:-0}
	done
done

printf '%-40s %10s %9s %s\n' "getppid x $CALLS" "best (s)" "slowdown" "lost (last run)"
for r in "${ROWS[@]}"; do
	printf '%-40s %10.3f %8.2fx %s\n' "${LABEL[$r]}" "${BEST[$r]}" \
		"$(echo "${BEST[$r]} / ${BEST[bare]}" | bc -l)" \
		"$([ "$r" = ember ] || [ "$r" = emberL ] && echo "${LOST[$r]}")"
done
