#!/usr/bin/env bash
# tests/e2e/stop-signals.sh - record and stat stopped by SIGINT, SIGTERM or
# SIGHUP (to ember alone, as kill(1) sends it; HUP as a closed ssh session
# does) finish their output and then end by that signal (130/143/129),
# for a command and for -a --duration alike; a command ended at
# --duration is not a failure (0, as perf stat --timeout);
# one killed by a signal not ours gives 128 + it (common/stop.c); under
# nohup SIGHUP stays ignored.
# parallel-safe: checks exit statuses and readable files, not counts or timing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

# caught PID: true once PID catches SIGHUP (bit 0), SIGINT (bit 1) and
# SIGTERM (bit 14), that is once its stop handlers are in place.
caught() {
	local mask
	mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$mask" ] && (( (0x$mask & 1) && (0x$mask >> 1 & 1) && (0x$mask >> 14 & 1) ))
}

# stop SIG NAME ARGS...: runs ember ARGS with stdout/stderr in
# $TMP/NAME.{out,err}, sends SIG once its handlers are in place and it has
# run a moment, and sets RC to its exit status.
stop() {
	local sig=$1 name=$2; shift 2
	"$EMBER" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	local pid=$! i
	for i in $(seq 1 100); do
		caught $pid && break
		sleep 0.05
	done
	sleep 0.5
	kill -"$sig" $pid
	wait $pid
	RC=$?
}

# readable FILE: ember report reads it whole: exit 0, samples, and no
# warning that it was not closed.
readable() {
	"$EMBER" report -i "$1" --stdio >"$TMP/rep.out" 2>"$TMP/rep.err" &&
		grep -q '^# Samples: [1-9]' "$TMP/rep.out" &&
		! grep -q 'not closed cleanly' "$TMP/rep.err"
}

have_a=1
need_root || have_a=
for sig in INT TERM HUP; do
	want=$((128 + $(kill -l $sig)))
	stop $sig rec-$sig record -q -o "$TMP/rec-$sig.data" -- sleep 10
	check "record -- sleep 10, SIG$sig: ends by it ($RC)" test $RC -eq $want
	check "record -- sleep 10, SIG$sig: the file is complete" readable "$TMP/rec-$sig.data"
	check "record -- sleep 10, SIG$sig: ember verify finds no problem" \
		eval '"$EMBER" verify "$TMP/rec-$sig.data" >/dev/null 2>&1'
	if have_perf; then
		check "record -- sleep 10, SIG$sig: perf report reads it without a warning" \
			eval 'perf report -i "$TMP/rec-$sig.data" --stdio >/dev/null 2>"$TMP/perf.err" &&
			      ! grep -qi "not.*cleanly\|truncat\|corrupt\|WARNING" "$TMP/perf.err"'
	fi
	stop $sig stat-$sig stat -e task-clock -- sleep 10
	check "stat -- sleep 10, SIG$sig: ends by it ($RC)" test $RC -eq $want
	check "stat -- sleep 10, SIG$sig: the table is printed" \
		grep -q 'seconds time elapsed' "$TMP/stat-$sig.err"
	check "stat -- sleep 10, SIG$sig: the count is there" \
		grep -q 'msec task-clock' "$TMP/stat-$sig.err"
	if [ -z "$have_a" ]; then
		skip "-a --duration, SIG$sig" "needs root for system-wide counting"
		continue
	fi
	stop $sig reca-$sig record -q -a --duration 10 -o "$TMP/reca-$sig.data"
	check "record -a --duration 10, SIG$sig: ends by it ($RC)" test $RC -eq $want
	check "record -a --duration 10, SIG$sig: the file is complete" \
		readable "$TMP/reca-$sig.data"
	stop $sig stata-$sig stat -a --duration 10 -e task-clock
	check "stat -a --duration 10, SIG$sig: ends by it ($RC)" test $RC -eq $want
	check "stat -a --duration 10, SIG$sig: the table is printed" \
		grep -q 'seconds time elapsed' "$TMP/stata-$sig.err"
done

# --duration ends the command: its death by our signal is no failure.
"$EMBER" record -q -o "$TMP/dur.data" --duration 0.5 -- sleep 10 2>"$TMP/dur.err"
check "record --duration 0.5 -- sleep 10: exit 0 ($?)" test $? -eq 0
"$EMBER" stat -e task-clock --duration 0.5 -- sleep 10 2>"$TMP/dur.err"
check "stat --duration 0.5 -- sleep 10: exit 0 ($?)" test $? -eq 0

# A command killed by a signal of its own: 128 + it, for both.
"$EMBER" record -q -o "$TMP/segv.data" -- sh -c 'kill -SEGV $$' 2>/dev/null
check "record: a command dead of SIGSEGV gives 139 ($?)" test $? -eq 139
"$EMBER" stat -e task-clock -- sh -c 'kill -SEGV $$' 2>/dev/null
check "stat: a command dead of SIGSEGV gives 139 ($?)" test $? -eq 139

# Under nohup (SIGHUP ignored) SIGHUP stays ignored: the command runs to
# its end and ember exits 0 (whenever the signal lands, before or after
# ember's handlers would be in place).
( trap '' HUP; exec "$EMBER" record -q -o "$TMP/nohup.data" -- sleep 1.5 ) 2>/dev/null &
pid=$!
sleep 0.7
kill -HUP $pid
wait $pid
RC=$?
check "record under nohup, SIGHUP: ignored, runs to the command's end ($RC)" test $RC -eq 0
check "record under nohup, SIGHUP: the file is complete" readable "$TMP/nohup.data"
