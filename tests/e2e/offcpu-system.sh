#!/usr/bin/env bash
# offcpu-system.sh - ember offcpu on system-wide recordings (where idle
# CPUs can lose switch events, so repairs may happen and are counted),
# checked against the workload's construction and against
# `perf sched timehist`; and intervals open at the end or begun before.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip offcpu-system "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip offcpu-system "no tracefs"; exit 0; }

# A recording that lost no events (rings can overflow when other tests
# load the machine); big rings, and a few tries.  Other offcpu workloads
# may run at the same time (tests in parallel): the one recorded is told
# apart by its pid.  Load can also stretch the wait for a CPU after each
# wakeup past the tolerance, so a try that misses it is retried too.
F=$TMP/sys.data
sum_of() { awk -v f=";$1;" '{ s = $0; sub(/ [0-9]+$/, "", s); if (index(s ";", f)) t += $NF } END { print t + 0 }' "$TMP/folded"; }
ok= tries=
for try in 1 2 3; do
	"$EMBER" record --off-cpu -a -m 2048 -o "$F" -- "$WORKLOADS/offcpu" >"$TMP/wl.out" 2>"$TMP/rec.err" ||
		continue
	grep -q ' 0 lost' "$TMP/rec.err" || { ok=${ok:-lost}; tries+="try $try lost events; "; continue; }
	wpid=$(awk '{ print $3 }' "$TMP/wl.out")
	"$EMBER" offcpu -i "$F" --folded -p "$wpid" --comm offcpu >"$TMP/folded" 2>"$TMP/folded.err"
	s=$(sum_of sleep_steps); p=$(sum_of pipe_wait)
	ok=1
	within "$s" 800000 24000 && within "$p" 300000 15000 && { ok=good; break; }
	tries+="try $try: sleep_steps $s us, pipe_wait $p us; "
done
[ -n "$ok" ] || { fail "record --off-cpu -a" "$(head -c 300 "$TMP/rec.err")"; exit 0; }
[ "$ok" = lost ] && { skip "offcpu -a" "every recording lost events: $(tail -1 "$TMP/rec.err")"; exit 0; }
if [ "$ok" = good ]; then
	pass "-a: sleep_steps ${s} us (800000 +-3%), pipe_wait ${p} us (300000 +-5%)${tries:+ (after: $tries)}"
else
	fail "-a: attribution" "$tries"
fi
"$EMBER" offcpu -i "$F" >"$TMP/table" 2>&1
rep=$(awk '/^# [0-9]+ repaired/ { print $2 }' "$TMP/table")
check "-a: the footer counts repaired intervals ($rep)" test -n "$rep"

# Per-thread wait against perf sched timehist: its wait time plus
# scheduling delay is the time between switch-out and switch-in.  It needs
# every switch, so both CPUs are kept busy (idle CPUs lose events, and
# timehist then charges the gap as run time); and it can only follow the
# main thread: the pipewriter's last switch-out comes from an exiting task
# whose samples carry no tid, so perf never sees that 300 ms wait end.
if ! have_perf; then
	skip "timehist" "perf is not installed"
else
	"$WORKLOADS/spin" 2 8 >/dev/null 2>&1 &
	spinner=$!
	trap 'kill $spinner 2>/dev/null; rm -rf "$TMP"' EXIT
	sleep 0.2
	"$EMBER" record -q --off-cpu -a -m 2048 -o "$TMP/busy.data" -- "$WORKLOADS/offcpu" >"$TMP/wl.out" 2>&1
	kill $spinner 2>/dev/null
	wpid=$(awk '{ print $3 }' "$TMP/wl.out")
	"$EMBER" offcpu -i "$TMP/busy.data" --threads -p "$wpid" --comm offcpu >"$TMP/threads" 2>/dev/null
	read -r _ tid _ _ _ off _ < <(awk 'NR == 2' "$TMP/threads")
	ref=
	for try in 1 2 3; do
		perf sched timehist -i "$TMP/busy.data" >"$TMP/timehist" 2>"$TMP/timehist.err" &&
			{ ref=$(awk -v t="$tid" '$3 ~ "\\[" t "\\]$" { w += $4 + $5 } END { printf "%.3f", w }' "$TMP/timehist"); break; }
	done
	if [ -z "$ref" ]; then
		skip "timehist" "perf sched timehist failed: $(head -c 200 "$TMP/timehist.err")"
	elif within "${off:-0}" "$ref" "$(awk -v r="$ref" 'BEGIN { print r * 0.05 }')"; then
		pass "main thread off-CPU ${off} ms vs perf sched timehist wait+delay ${ref} ms (within 5%)"
	else
		fail "timehist" "ember ${off:-none} ms, perf sched timehist ${ref} ms"
	fi
fi

# Open at the end and begun before: sleeper sleeps 700 ms twice; the
# recording (system-wide, so events run on to its end) starts 100 ms into
# the first sleep and stops during the second: 300 to 699 ms of that one lie in
# the recording (more when the recorder starts late, as under ASan: 535).
"$WORKLOADS/sleeper" 2 700 >/dev/null &
sl=$!
sleep 0.1
"$EMBER" record -q --off-cpu -a -m 2048 --duration 1 -o "$TMP/p.data" >/dev/null 2>&1
wait "$sl"
"$EMBER" offcpu -i "$TMP/p.data" -p "$sl" >"$TMP/ptable" 2>&1
if grep -Eq '^        [3-6][0-9]{5} us  \(1 interval, 1 open at the end\)$' "$TMP/ptable" &&
   grep -q '^# 1 begun before' "$TMP/ptable" && grep -q '^# 1 open at the end' "$TMP/ptable"; then
	pass "-a with -p filter: the sleep under way at the end is counted to the end and marked; the one begun before is left out and counted"
else
	fail "open/begun-before" "$(tail -c 700 "$TMP/ptable")"
fi
