#!/usr/bin/env bash
# tests/e2e/record-targets.sh - what gets recorded: -p PID follows threads
# the process creates after ember attached, and stops when it exits;
# -t TID records that thread only; -C LIST records those CPUs only.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
require_perf record-targets

# -p: late-threads waits for SIGUSR1 before starting two busy threads
# (late-0, late-1) for 1 s of CPU each; its main thread does no work.
"$WORKLOADS/late-threads" -1 2 1 >"$TMP/late.out" &
lpid=$!
SPIN_PIDS+=("$lpid")
for _ in $(seq 50); do grep -q 'pid' "$TMP/late.out" && break; sleep 0.05; done
run_bg() { timeout -k 5 30 "$EMBER" "$@" >"$TMP/p.out" 2>"$TMP/p.err" </dev/null; echo $? >"$TMP/p.rc"; }
run_bg record -F 999 -g -p "$lpid" -o "$TMP/p.data" &
rpid=$!
sleep 0.7
kill -USR1 "$lpid"
wait "$rpid"
rc=$(cat "$TMP/p.rc")
if [ "$rc" -eq 124 ]; then
	fail pid-follows-new-threads "ember -p did not stop when the process exited"
elif [ "$rc" -ne 0 ]; then
	fail pid-follows-new-threads "exit $rc: $(head -c 300 "$TMP/p.err")"
else
	"$PERF" script -i "$TMP/p.data" -F comm,tid,sym 2>/dev/null >"$TMP/p.txt"
	bad=0
	for t in late-0 late-1; do
		n=$(awk -v c="$t" '$1 == c' "$TMP/p.txt" | grep -c .)
		# Each thread ran 1 s of CPU at 999 Hz: 999 samples; zero when
		# threads created later are not followed.
		if [ "$n" -lt 500 ]; then
			fail pid-follows-new-threads "thread $t has $n samples, want >= 500 (1 s at 999 Hz)"; bad=1
		fi
	done
	# By process id: a thread sampled before it named itself still
	# carries the main thread's comm.
	others=$("$PERF" script -i "$TMP/p.data" -F pid 2>/dev/null | awk -v p="$lpid" '$1 != p' | grep -c .)
	[ "$bad" -eq 0 ] && pass pid-follows-new-threads
	if [ "$others" -eq 0 ]; then pass pid-only-that-process
	else fail pid-only-that-process "$others samples from threads outside the process"; fi
fi

# -t: spin with two threads; record only the second thread's tid.
"$WORKLOADS/spin" 2 2.5 >/dev/null &
spid=$!
SPIN_PIDS+=("$spid")
tids=()
for _ in $(seq 50); do
	mapfile -t tids < <(ls "/proc/$spid/task" 2>/dev/null | sort -n)
	[ "${#tids[@]}" -ge 3 ] && break
	sleep 0.05
done
if [ "${#tids[@]}" -lt 3 ]; then
	fail tid-only "spin did not start its threads"
else
	tid=${tids[2]}
	run_ember t record -F 999 -t "$tid" -o "$TMP/t.data" --duration 1
	if [ "$RC" -ne 0 ]; then
		fail tid-only "exit $RC: $(head -c 300 "$TMP/t.err")"
	else
		"$PERF" script -i "$TMP/t.data" -F tid 2>/dev/null | awk '{print $1}' | sort | uniq -c >"$TMP/t.tids"
		if [ "$(wc -l <"$TMP/t.tids")" -eq 1 ] && [ "$(awk '{print $2}' "$TMP/t.tids")" = "$tid" ] &&
			[ "$(awk '{print $1}' "$TMP/t.tids")" -ge 300 ]; then
			pass tid-only
		else
			fail tid-only "want >= 300 samples (1 s of a spinning thread at 999 Hz, shared CPUs) all from tid $tid; got: $(tr '\n' ' ' <"$TMP/t.tids")"
		fi
	fi
fi
stop_spinners

# -C: a spinner on each CPU, record only the last CPU.
last=$((NCPU - 1))
busy_all 2
run_ember c record -F 999 -C "$last" -o "$TMP/c.data" -- sleep 1
stop_spinners
if [ "$RC" -ne 0 ]; then
	fail cpu-list-only "exit $RC: $(head -c 300 "$TMP/c.err")"
else
	"$PERF" script -i "$TMP/c.data" -F cpu 2>/dev/null | tr -d '[] ' | sort | uniq -c >"$TMP/c.cpus"
	if [ "$(wc -l <"$TMP/c.cpus")" -eq 1 ] && [ "$(awk '{print $2 + 0}' "$TMP/c.cpus")" -eq "$last" ] &&
		[ "$(awk '{print $1}' "$TMP/c.cpus")" -ge 500 ]; then
		pass cpu-list-only
	else
		fail cpu-list-only "want >= 500 samples all on CPU $last; got: $(tr '\n' ' ' <"$TMP/c.cpus")"
	fi
fi

# A command pinned to one CPU: the recorder's drain thread keeps off that
# CPU while it runs (it would take its turns there otherwise), and keeps
# its own CPUs when the command is not pinned.  Read from the recorder's
# threads' Cpus_allowed_list while a 1.5 s command runs.
if [ "$NCPU" -lt 2 ]; then
	skip drain-keeps-off-pinned-command "one CPU: nowhere else to go"
else
	# allowed CPUS_OF_PID: every thread's Cpus_allowed_list, one per line
	allowed_lists() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '$1 == "Cpus_allowed_list:" { print $2 }' | sort -u; }
	mine=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' /proc/self/status)
	"$EMBER" record -F 99 -o "$TMP/k.data" -- taskset -c "$last" "$WORKLOADS/spin" 1 1.5 >/dev/null 2>"$TMP/k.err" &
	kpid=$!
	sleep 0.8
	pinned=$(allowed_lists "$kpid" | tr '\n' ' ')
	wait "$kpid"
	"$EMBER" record -F 99 -o "$TMP/k2.data" -- "$WORKLOADS/spin" 1 1.5 >/dev/null 2>"$TMP/k2.err" &
	kpid=$!
	sleep 0.8
	free_run=$(allowed_lists "$kpid" | tr '\n' ' ')
	wait "$kpid"
	# No thread of ember's (the drain is the main one with one NUMA node)
	# may run on $last; none is confined when the command is free.
	has_cpu() {   # has_cpu CPU "LIST LIST...": a list that includes CPU
		awk -v c="$1" '{ for (i = 1; i <= NF; i++) { n = split($i, part, ",")
			for (j = 1; j <= n; j++) { m = split(part[j], r, "-")
				if (c >= r[1] && c <= (m > 1 ? r[2] : r[1])) found = 1 } } }
			END { exit !found }' <<<"$2"; }
	if [ -z "$pinned" ] || has_cpu "$last" "$pinned"; then
		fail drain-keeps-off-pinned-command "command on CPU $last, recorder threads allowed: $pinned"
	elif [ "$free_run" != "$mine " ]; then
		fail drain-keeps-off-pinned-command "free command, recorder threads allowed '$free_run', want '$mine'"
	else
		pass drain-keeps-off-pinned-command
	fi
fi
