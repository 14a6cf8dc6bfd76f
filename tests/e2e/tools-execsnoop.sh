#!/usr/bin/env bash
# tools-execsnoop.sh - ember execsnoop with the kernel's stack randomization
# on: a shell running /bin/true A B C 20 times gives 20 lines with RET 0
# and exactly those arguments (the uprobe at the dynamic loader's entry
# carries argc and argv; nothing past argc shows), also with both CPUs busy;
# more than 20 arguments end in "...".  The uprobe event is gone after a
# run, a SIGTERM'd one and a SIGKILLed one.  A static program (no loader)
# still gets its line, its arguments from the stack copy.  Without the
# uprobe (uprobe_events unusable) a warning names why and the stack copy
# serves.  -x shows a failed exec; live and offline print the same lines;
# perf script reads the recording, the uprobe's records decoded.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-execsnoop "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-execsnoop "no tracefs"; exit 0; }
UEV=/sys/kernel/tracing/uprobe_events
[ -w "$UEV" ] || { skip tools-execsnoop "no uprobe_events in tracefs"; exit 0; }

# Whether ember_PID's event is in uprobe_events.
probe_there() { grep -q "^p:ember_$1/exec_args " "$UEV"; }
# Polls (every 0.1 s, at most SECS) until the command succeeds.
poll() {
	local n=$(($1 * 10))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}
# The static workload was linked statically (no PT_INTERP).
static_built() {
	command -v readelf >/dev/null && [ -x "$STATIC" ] &&
		! LC_ALL=C readelf -l "$STATIC" | grep -q 'program interpreter'
}
# The lines of /bin/true with RET 0 and exactly the arguments A B C.
exact() { awk '$1 == "true" && $4 == 0 && $5" "$6" "$7" "$8 == "/bin/true A B C" && NF == 8' "$1" | wc -l; }

F=$TMP/exec.data
STATIC=$WORKLOADS/static-true
LOOP="for i in \$(seq 20); do /bin/true A B C; done; /bin/true \$(seq 25)
for i in 1 2 3 4 5; do $STATIC S1 S2; done
grep -c '^p:ember_'\$PPID'/exec_args ' $UEV >$TMP/during"
"$EMBER" execsnoop -o "$F" -- sh -c "$LOOP" >"$TMP/live" 2>"$TMP/live.err" &
epid=$!
wait "$epid"
lines=$(grep -c '^true ' "$TMP/live")
check "21 execs of /bin/true shown ($lines)" test "$lines" = 21
full=$(exact "$TMP/live")
check "20 of 20 with RET 0 and exactly /bin/true A B C, stack randomization on ($full)" \
	test "$full" = 20
check "more than 20 arguments: the first 20 and '...'" \
	grep -q " 0 /bin/true $(seq -s ' ' 1 19) \.\.\.$" "$TMP/live"
shpid=$(awk '$1 == "sh" { print $2; exit }' "$TMP/live")
check "the shell ($shpid) is the parent of each" \
	test "$(awk -v p="$shpid" '$1 == "true" && $3 == p' "$TMP/live" | wc -l)" = 21
check "the uprobe event was there during the run ($(cat "$TMP/during" 2>/dev/null))" \
	test "$(cat "$TMP/during" 2>/dev/null)" = 1
check "no warning about the arguments' path" test ! -s "$TMP/live.err"
if probe_there "$epid"; then
	fail "the uprobe event removed after the run" "ember_$epid is in $UEV"
else
	pass "the uprobe event removed after the run"
fi

# A static program runs no loader: its line still comes, with RET 0 and
# its arguments from the stack copy (or its path and "..." where the
# random gap left a page untouched); without the gap, every one has them.
if static_built; then
	st=$(awk -v p="$STATIC" '$1 == "static-true" && $4 == 0 &&
		($5" "$6" "$7 == p" S1 S2" || $5" "$6 == p" ...")' "$TMP/live" | wc -l)
	check "5 lines for the static program's 5 execs ($st)" test "$st" = 5
	if command -v setarch >/dev/null; then
		setarch -R "$EMBER" execsnoop -- sh -c "for i in 1 2 3 4 5; do $STATIC S1 S2; done" \
			>"$TMP/static" 2>&1
		st=$(grep -c " 0 $STATIC S1 S2$" "$TMP/static")
		check "the static program's arguments from the stack copy, no gap: 5 of 5 ($st)" \
			test "$st" = 5
	fi
else
	skip "tools-execsnoop static program" "no static libc to build $STATIC (libc6-dev's libc.a)"
fi

"$EMBER" execsnoop -i "$F" >"$TMP/offline" 2>"$TMP/off.err"
check "live and offline print the same lines" cmp -s "$TMP/live" "$TMP/offline"
if have_perf; then
	perf script -i "$F" >"$TMP/perf" 2>"$TMP/perf.err"
	rc=$?
	check "perf script reads the recording (exit $rc)" test "$rc" = 0
	n=$(grep -c 'ember_[0-9]*:exec_args: .* argc=4 a0="/bin/true" a1="A" a2="B" a3="C"' "$TMP/perf")
	check "perf script decodes the uprobe's records: 20 with argc=4 A B C ($n)" test "$n" = 20
fi

# Both CPUs busy: a line still waits for its uprobe record.
"$WORKLOADS/spin" "$(nproc)" 20 >/dev/null 2>&1 &
spin=$!
"$EMBER" execsnoop -- sh -c 'for i in $(seq 10); do /bin/true A B C; done' >"$TMP/busy" 2>&1
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
full=$(exact "$TMP/busy")
check "CPUs busy, stack randomization on: 10 of 10 with A B C ($full)" test "$full" = 10

# Stopped by SIGTERM, or killed: the event goes (the watchdog removes it
# once a SIGKILLed ember's descriptors are closed, and the command it
# left, whose inherited events hold the probe, has ended: killed here).
for sig in TERM KILL; do
	"$EMBER" execsnoop -- sleep 3 >/dev/null 2>&1 &
	epid=$!
	poll 5 probe_there "$epid"
	cmd=$(pgrep -P "$epid")
	kill -"$sig" "$epid"
	wait "$epid" 2>/dev/null
	[ "$sig" = KILL ] && [ -n "$cmd" ] && kill "$cmd" 2>/dev/null
	if poll 5 eval '! probe_there "$epid"'; then
		pass "the uprobe event removed after SIG$sig"
	else
		fail "the uprobe event removed after SIG$sig" "ember_$epid is in $UEV"
	fi
done

# uprobe_events unusable (/dev/null over it, in a mount namespace of our
# own): a warning naming why, and the stack copies serve.
if command -v unshare >/dev/null &&
	unshare -m sh -c "mount --bind /dev/null $UEV" 2>/dev/null; then
	unshare -m sh -c "mount --bind /dev/null $UEV &&
		exec $EMBER execsnoop -- sh -c 'for i in 1 2 3; do /bin/true A B C; done'" \
		>"$TMP/fb" 2>"$TMP/fb.err"
	check "without the uprobe: one warning naming the stack copy and why" \
		test "$(grep -c 'warning: exec arguments from the stack copy only .*: ' "$TMP/fb.err")" = 1
	ok=$(awk '$1 == "true" && $4 == 0 && ($5" "$6" "$7" "$8 == "/bin/true A B C" ||
		$5" "$6 == "/bin/true ...")' "$TMP/fb" | wc -l)
	check "without the uprobe: 3 lines with RET 0, from the stack copy ($ok)" test "$ok" = 3
else
	skip "tools-execsnoop without the uprobe" "cannot bind-mount in a mount namespace"
fi

"$EMBER" execsnoop -x -t -- "$WORKLOADS/toolwork" execfail >"$TMP/x" 2>&1
check "-x shows the failed exec with ENOENT and its arguments" \
	grep -Eq '^[0-9.]+ +toolwork +[0-9]+ +[0-9?]+ +-2 /nonexistent-ember/prog ARG1 ARG2$' "$TMP/x"
"$EMBER" execsnoop -- "$WORKLOADS/toolwork" execfail >"$TMP/nox" 2>&1
check "without -x the failed exec is not shown" \
	test "$(grep -c ' -2 ' "$TMP/nox")" = 0

"$EMBER" record --tool execsnoop -q -o "$TMP/rec.data" -- /bin/true X Y >/dev/null 2>&1
"$EMBER" execsnoop -i "$TMP/rec.data" >"$TMP/rec" 2>&1
check "record --tool execsnoop makes a file execsnoop reads, with the arguments" \
	grep -q ' 0 /bin/true X Y$' "$TMP/rec"
"$EMBER" record -e cpu-clock -q -o "$TMP/plain.data" -- /bin/true >/dev/null 2>&1
"$EMBER" execsnoop -i "$TMP/plain.data" >"$TMP/plain" 2>&1
check "a recording without the events is refused, naming record --tool" \
	grep -q "record --tool execsnoop" "$TMP/plain"
