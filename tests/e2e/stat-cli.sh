#!/usr/bin/env bash
# tests/e2e/stat-cli.sh - ember stat's behaviour on this machine (no
# hardware PMU): <not supported> and exit statuses, --tlb refused, usage
# errors, groups, CSV, JSON, -I, -r, -A, --per-node, --per-thread,
# --duration, and ember list.
# parallel-safe: checks exit statuses and readable files, not counts or timing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

# run NAME ARGS... : ember stat into $TMP/NAME.{out,err}; status in RC.
run() {
	local name=$1; shift
	"$EMBER" stat "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	RC=$?
}

run hw -e cycles,instructions -- true
if [ "$RC" -eq 0 ] && [ "$(grep -c '<not supported>' "$TMP/hw.err")" -eq 2 ] &&
	grep -q 'cycles' "$TMP/hw.err"; then pass cycles-not-supported
else fail cycles-not-supported "exit $RC: $(cat "$TMP/hw.err")"; fi

run tlb --tlb -- true
if [ "$RC" -eq 1 ] && [ "$(wc -l <"$TMP/tlb.err")" -eq 1 ] &&
	grep -q '^ember stat: --tlb: .*no hardware PMU' "$TMP/tlb.err"; then pass tlb-no-pmu
else fail tlb-no-pmu "exit $RC: $(cat "$TMP/tlb.err")"; fi
run ipc --ipc -- true
check ipc-no-pmu [ "$RC" -eq 1 ]

run status -- sh -c 'exit 3'
check exit-status-is-the-command-s [ "$RC" -eq 3 ]
run missing -- /nonexistent/command
if [ "$RC" -eq 2 ] && [ "$(wc -l <"$TMP/missing.err")" -eq 1 ] &&
	grep -q "^ember stat: /nonexistent/command: command not found .*: check the path" "$TMP/missing.err"
then pass missing-command; else fail missing-command "exit $RC: $(cat "$TMP/missing.err")"; fi
run missing-in-path -- no-such-command-anywhere
if [ "$RC" -eq 2 ] && grep -q "^ember stat: no-such-command-anywhere: command not found: check the name or PATH" \
	"$TMP/missing-in-path.err"
then pass missing-command-in-path; else fail missing-command-in-path "exit $RC: $(cat "$TMP/missing-in-path.err")"; fi
# Found, but exec fails (its interpreter is missing): a runtime error
# naming the command.
printf '#!/nonexistent/interpreter\n' >"$TMP/broken"; chmod +x "$TMP/broken"
run broken -- "$TMP/broken"
if [ "$RC" -eq 1 ] && grep -q "^ember stat: cannot run '$TMP/broken'" "$TMP/broken.err"
then pass exec-failure; else fail exec-failure "exit $RC: $(cat "$TMP/broken.err")"; fi

for bad in "" "-r 0 -- true" "-A -- true" "--per-thread -- true" \
	"-p 1 -- true" "-e nosuchevent -- true" "-I 5 -- true" "--bogus -- true" \
	"-p 999999999" "-t 999999999 -e cs"; do
	# shellcheck disable=SC2086
	run usage $bad
	if [ "$RC" -eq 2 ] && [ "$(wc -l <"$TMP/usage.err")" -eq 1 ] &&
		grep -q '^ember stat: ' "$TMP/usage.err"; then :
	else fail "usage-error" "'$bad': exit $RC: $(cat "$TMP/usage.err")"; bad_seen=1; fi
done
[ -z "${bad_seen:-}" ] && pass usage-errors

# A group read at once: its members share the leader's times.
run group -x, -e '{task-clock,page-faults,context-switches}' -- "$WORKLOADS/touch" 3000
if [ "$RC" -eq 0 ] && awk -F, 'NF != 7 { bad = 1 } { rt[NR] = $4 }
	END { exit bad || NR != 3 || rt[1] != rt[2] || rt[2] != rt[3] }' "$TMP/group.err"
then pass group-csv; else fail group-csv "$(cat "$TMP/group.err")"; fi

run json --json -e task-clock,page-faults,cycles -- true
if python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["event"] for r in rows] == ["task-clock", "page-faults", "cycles"]
assert rows[0]["unit"] == "msec" and rows[0]["metric-unit"] == "CPUs utilized"
assert rows[2]["counter-value"] == "<not supported>"
assert float(rows[1]["counter-value"]) > 0
' "$TMP/json.err" 2>"$TMP/json.py"; then pass json
else fail json "$(cat "$TMP/json.py" "$TMP/json.err")"; fi

# -I 100 over ~450 ms: 4 full intervals and the last part, times rising.
run interval -I 100 -x, -e task-clock,page-faults -- "$WORKLOADS/sleeper" 3 150
if awk -F, '{ n++; if ($1 + 0 < last) bad = 1; last = $1 + 0 }
	END { exit bad || n < 8 || n > 12 }' "$TMP/interval.err"; then pass interval
else fail interval "$(cat "$TMP/interval.err")"; fi

# -I in text mode repeats the column header every 25 intervals, as perf
# does; CSV has none.  One event, so one line per interval: ~60 intervals
# of 10 ms give headers before intervals 1, 26 and 51.
run header -I 10 -e task-clock -- "$WORKLOADS/sleeper" 6 100
if awk '/^#/ { if (n % 25 != 0) bad = 1; h++; next }
	/task-clock/ { n++ }
	END { exit bad || n < 40 || h != int((n + 24) / 25) }' "$TMP/header.err"
then pass interval-header-every-25
else fail interval-header-every-25 "$(grep -c '^#' "$TMP/header.err") headers: $(head -c 300 "$TMP/header.err")"; fi
run header-csv -I 10 -x, -e task-clock -- "$WORKLOADS/sleeper" 6 100
check interval-csv-no-header [ "$(grep -c '^#' "$TMP/header-csv.err")" -eq 0 -a \
	"$(grep -c task-clock "$TMP/header-csv.err")" -ge 40 ]

run repeat -r 3 -e page-faults -- "$WORKLOADS/touch" 1000
if grep -q "(3 runs)" "$TMP/repeat.err" && grep -q ' +- .* seconds time elapsed' "$TMP/repeat.err"
then pass repeat; else fail repeat "$(cat "$TMP/repeat.err")"; fi

if need_root; then
	ncpu=$(nproc)
	run percpu -a -A -x, -e cpu-clock -- sleep 0.1
	check per-cpu [ "$(grep -c '^CPU[0-9]*,' "$TMP/percpu.err")" -eq "$ncpu" ]
	run pernode -a --per-node -x, -e cpu-clock -- sleep 0.1
	check per-node [ "$(grep -c "^N0,$ncpu," "$TMP/pernode.err")" -eq 1 ]
	start=$(date +%s%N)
	run duration -a -x, -e cpu-clock --duration 0.3
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	if [ "$RC" -eq 0 ] && [ "$ms" -ge 290 ] && [ "$ms" -lt 1500 ]; then pass duration
	else fail duration "exit $RC after $ms ms"; fi
else
	skip per-cpu "needs root"
fi

"$WORKLOADS/spin" 2 0.6 >/dev/null &
pid=$!
sleep 0.1
run perthread -p $pid --per-thread -x, -e task-clock
wait $pid
if [ "$(grep -c "^spin-[0-9]*,.*task-clock" "$TMP/perthread.err")" -eq 3 ]; then pass per-thread
else fail per-thread "$(cat "$TMP/perthread.err")"; fi

# -t on a thread that is not its process's leader: stat stops when that
# thread ends (here after 0.8 s), not when the process does (after 8 s).
"$WORKLOADS/short-thread" 800 8000 >"$TMP/st.out" &
wpid=$!
for _ in $(seq 50); do grep -q tid "$TMP/st.out" && break; sleep 0.05; done
tid=$(awk '/tid/ { print $3 }' "$TMP/st.out")
start=$(date +%s%N)
timeout -k 2 20 "$EMBER" stat -t "$tid" -x, -e task-clock >"$TMP/tid.out" 2>"$TMP/tid.err"
RC=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
alive=no; kill -0 $wpid 2>/dev/null && alive=yes
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
if [ "$RC" -eq 0 ] && [ "$ms" -lt 3000 ] && [ $alive = yes ] &&
	awk -F, '$3 == "task-clock" && $1 > 100 { ok = 1 } END { exit !ok }' "$TMP/tid.err"
then pass tid-thread-exit
else fail tid-thread-exit "tid '$tid': exit $RC after $ms ms, process alive: $alive: $(head -c 300 "$TMP/tid.err")"; fi

"$EMBER" list >"$TMP/list.out" 2>&1
if grep -q '^  task-clock .*Software event' "$TMP/list.out" &&
	grep -q 'dTLB-load-misses .*Hardware cache event' "$TMP/list.out" &&
	grep -q 'sched:sched_switch .*Tracepoint event' "$TMP/list.out" &&
	grep -q '^Precise sampling.*none' "$TMP/list.out" &&
	grep -q -- '--tlb' "$TMP/list.out"; then pass list
else fail list "$(head -c 600 "$TMP/list.out")"; fi
