#!/usr/bin/env bash
# tests/e2e/stat-truth.sh - ember stat against counts known by construction:
# page faults of a workload that touches N fresh pages, context switches of
# one that sleeps N times, and task-clock against the workload's own CPU
# time (getrusage) - for a command, for -p and for -a.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
if ! need_root; then skip stat-truth "needs root for -a"; exit 0; fi

# field CSVFILE EVENT [ROW] : the count column of EVENT (CSV from -x,).
field() {
	awk -F, -v ev="$2" -v row="${3:-}" \
		'row == "" && $3 == ev { print $1; exit }
		 row != "" && $1 == row && $4 == ev { print $2; exit }' "$1"
}

N=20000
"$EMBER" stat -x, -o "$TMP/pf.csv" -e page-faults -- "$WORKLOADS/touch" $N >"$TMP/pf.out"
rc=$?
pf=$(field "$TMP/pf.csv" page-faults)
if [ $rc -ne 0 ] || [ -z "$pf" ]; then
	fail page-faults-command "exit $rc, output: $(cat "$TMP/pf.csv")"
elif [ "$pf" -ge $N ] && within "$pf" $N "$(awk -v n=$N 'BEGIN { print 0.05 * n + 50 }')"; then
	pass page-faults-command
else
	fail page-faults-command "$pf page faults for $N touched pages"
fi

S=40
"$EMBER" stat -x, -o "$TMP/cs.csv" -e context-switches -- "$WORKLOADS/sleeper" $S 2 >/dev/null
cs=$(field "$TMP/cs.csv" context-switches)
if [ -n "$cs" ] && [ "$cs" -ge $S ]; then pass context-switches-command
else fail context-switches-command "${cs:-no} switches for $S sleeps"; fi

# task-clock (msec) against the workload's getrusage CPU time (ns), 5%
# apart, plus the time the hypervisor stole from this VM's CPUs meanwhile
# (STEAL_MS, from /proc/stat): with CONFIG_PARAVIRT_TIME_ACCOUNTING the
# kernel leaves stolen time out of a task's runtime (getrusage) but perf's
# task-clock, on the local clock, counts it (528 ms for 500 ms on a busy
# host, where this machine had stolen 194 s since boot).
STEAL_MS=0
steal_ms() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%d", $9 * 1000 / hz }' /proc/stat; }
check_clock() {
	local name=$1 msec=$2 ns=$3
	if [ -z "$msec" ] || [ -z "$ns" ]; then
		fail "$name" "missing figure: task-clock '${msec}' rusage '${ns}'"
	elif within "$msec" "$(awk -v n="$ns" 'BEGIN { print n / 1e6 }')" \
		"$(awk -v n="$ns" -v s="$STEAL_MS" 'BEGIN { print 0.05 * n / 1e6 + s }')"; then
		pass "$name"
	else
		fail "$name" "task-clock $msec ms, workload's own CPU time $ns ns, $STEAL_MS ms stolen"
	fi
}

# Up to 3 runs: under ASan, 1 run in 6 counted 5-14% more than burn's own
# CPU time (526.53 and 571.96 ms for 500 ms; the ember of ab69ccb and of
# 4e73393 alike), a cause not found yet; a count off every time still fails.
tries=
for try in 1 2 3; do
	s0=$(steal_ms)
	"$EMBER" stat -x, -o "$TMP/tc.csv" -e task-clock -- "$WORKLOADS/burn" 0.5 >"$TMP/tc.out"
	STEAL_MS=$(( $(steal_ms) - s0 ))
	got=$(check_clock task-clock-command "$(field "$TMP/tc.csv" task-clock)" \
		"$(awk '{ print $2 }' "$TMP/tc.out")")
	case $got in PASS:*) break ;; esac
	tries+="${got#FAIL: task-clock-command: }; "
done
case $got in
PASS:*) pass "task-clock-command${tries:+ (after: $tries)}" ;;
*) fail task-clock-command "$tries" ;;
esac

# -p: the workload sleeps 300 ms first so ember is attached before it burns;
# ember stops by itself when the process is gone.
s0=$(steal_ms)
"$WORKLOADS/burn" 0.5 300 >"$TMP/p.out" &
pid=$!
"$EMBER" stat -x, -o "$TMP/p.csv" -e task-clock,page-faults -p $pid
rc=$?
wait $pid
STEAL_MS=$(( $(steal_ms) - s0 ))
if [ $rc -ne 0 ]; then fail task-clock-pid "exit $rc"
else check_clock task-clock-pid "$(field "$TMP/p.csv" task-clock)" \
	"$(awk '{ print $2 }' "$TMP/p.out")"; fi

# -a: per CPU, with the workload pinned to the last CPU and burning all the
# time it is there, while ember stays on CPU 0.  That CPU's task-clock is
# its time while counted: the workload's CPU time, plus the time the
# workload waited while other tasks held that CPU (the scheduler's own
# run_delay; near zero on a quiet machine).
last=$(( $(nproc) - 1 ))
if [ "$last" -lt 1 ]; then
	skip task-clock-system-wide "needs two CPUs"
else
	taskset -c 0 "$EMBER" stat -a -A -x, -o "$TMP/a.csv" -e task-clock -- \
		taskset -c $last "$WORKLOADS/burn" 0.5 >"$TMP/a.out"
	read -r cpu_ns wait_ns < <(awk '{ print $2, $5 }' "$TMP/a.out")
	if [ "${wait_ns:--1}" -lt 0 ]; then
		skip task-clock-system-wide "no schedstat run_delay to account for other load"
	else
		check_clock task-clock-system-wide "$(field "$TMP/a.csv" task-clock CPU$last)" \
			$((cpu_ns + wait_ns))
		echo "note: workload cpu $cpu_ns ns, waited $wait_ns ns for CPU $last"
	fi
fi

"$EMBER" stat -a -x, -o "$TMP/apf.csv" -e page-faults -- "$WORKLOADS/touch" $N >/dev/null
apf=$(field "$TMP/apf.csv" page-faults)
if [ -n "$apf" ] && [ "$apf" -ge $N ]; then pass page-faults-system-wide
else fail page-faults-system-wide "${apf:-no} page faults system-wide for $N pages"; fi
