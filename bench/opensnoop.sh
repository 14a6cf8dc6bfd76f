#!/usr/bin/env bash
# bench/opensnoop.sh - what naming every open costs the traced program and
# the machine: a loop of 100,000 opens and closes of /etc/hostname, its
# path in a heap buffer (tests/workloads/toolwork openloop, which times
# its own loop and CPU), bare; under `ember opensnoop` (live: the path
# probes at libc's syscall instructions fetch each path, every line
# printed); under `ember record --tool opensnoop` (the same events into a
# file); under bpftrace's opensnoop one-liner (sys_enter_openat with
# str(args->filename), each line printed); and, for the floor any uprobe
# pays, a bare uprobe at libc's open64 counted by perf stat (perf probe,
# removed at the end), in the same run.  A benchmark,
# not a test: it asserts nothing.
#
# Each row runs REPEAT times in turn with the others and keeps its best
# loop time; the slowdown is that over bare's, and "vs bpftrace" over the
# one-liner's.  The tracer's CPU is the CPU of the whole row (tracer and
# workload, `times`) less the workload's own; "named" counts the lines
# naming /etc/hostname (of the workload's opens).
#
#   EMBER=./ember WORKLOADS=build/workloads bench/opensnoop.sh
#   OPENS=100000 REPEAT=3  (defaults)
set -u
: "${OPENS:=100000}" "${REPEAT:=3}"
. "$(dirname "$0")/lib.sh"
bench_setup opensnoop toolwork
W=$WORKLOADS/toolwork
BPFTRACE=$(command -v bpftrace || true)

ROWS=(bare ember record ${BPFTRACE:+bpftrace} uprobe)
LIBC=$(ldd "$W" | awk '/libc.so/ { print $3 }')
"$PERF" probe -q -x "$LIBC" -a ember_bench_open=open64 >/dev/null 2>&1 ||
	ROWS=("${ROWS[@]/uprobe/}")
trap '"$PERF" probe -q -d "probe_libc:ember_bench_open" >/dev/null 2>&1; rm -rf "$T"' EXIT
declare -A LABEL=(
	[bare]="bare"
	[ember]="ember opensnoop (live)"
	[record]="ember record --tool opensnoop"
	[bpftrace]="bpftrace opensnoop one-liner"
	[uprobe]="a bare uprobe on open64 (perf stat)"
)

# The one-liner in the background until the workload is done; it prints
# "Attaching 1 probe..." once attached.
bpftrace_row() {
	"$BPFTRACE" -e 'tracepoint:syscalls:sys_enter_openat /comm == "toolwork"/ {
		printf("%d %s %s\n", pid, comm, str(args->filename)); }' >"$T/bt.lines" 2>&1 &
	local bt=$!
	for _ in $(seq 100); do grep -q Attaching "$T/bt.lines" 2>/dev/null && break; sleep 0.1; done
	"$W" openloop "$OPENS"
	kill -INT "$bt"
	wait "$bt"
}

run() {
	case $1 in
	bare) "$W" openloop "$OPENS" ;;
	ember) "$EMBER" opensnoop -- "$W" openloop "$OPENS" ;;
	record) "$EMBER" record --tool opensnoop -o "$T/rec.data" -- "$W" openloop "$OPENS" ;;
	bpftrace) bpftrace_row ;;
	uprobe) "$PERF" stat -e probe_libc:ember_bench_open -- "$W" openloop "$OPENS" ;;
	esac
}

named() {
	case $1 in
	ember) grep -c ' 0 /etc/hostname$' "$T/ember.out" ;;
	record) "$EMBER" opensnoop -i "$T/rec.data" 2>/dev/null | grep -c ' 0 /etc/hostname$' ;;
	bpftrace) grep -c ' toolwork /etc/hostname$' "$T/bt.lines" ;;
	esac
}

declare -A LOOP TRACER NAMED
for ((i = 0; i < REPEAT; i++)); do
	for r in ${ROWS[@]}; do
		bench_run "$r" run "$r"
		line=$(cat "$T/$r.out" "$T/$r.err" | grep '^toolwork: .* opens in')
		loop=$(echo "$line" | awk '{ print $5 }')
		own=$(echo "$line" | awk '{ print $8 }')
		LOOP[$r]=$(bench_best min "${loop:-0}" "${LOOP[$r]:-}")
		tracer=$(awk -v c="$CPU" -v o="${own:-0}" 'BEGIN { printf "%.3f", c - o }')
		TRACER[$r]=$(bench_best min "$tracer" "${TRACER[$r]:-}")
		NAMED[$r]=$(named "$r")
	done
done

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'
}
printf '%-34s %9s %9s %12s %14s %s\n' "open x $OPENS, best of $REPEAT" "loop (s)" "slowdown" \
	"vs bpftrace" "tracer CPU (s)" "named (last run)"
for r in ${ROWS[@]}; do
	printf '%-34s %9.3f %9s %12s %14s %s\n' "${LABEL[$r]}" "${LOOP[$r]}" \
		"$(ratio "${LOOP[$r]}" "${LOOP[bare]}")" "$(ratio "${LOOP[$r]}" "${LOOP[bpftrace]:-0}")" \
		"$([ "$r" = bare ] && echo - || echo "${TRACER[$r]}")" "${NAMED[$r]:-}"
done
