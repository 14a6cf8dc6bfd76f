#!/usr/bin/env bash
# tools-exitsnoop.sh - ember exitsnoop: a process killed by SIGKILL shows
# the signal, one that exits 3 its code, a clean one 0, each with its
# parent and an age from its fork; live and offline print the same.  The
# parent comes from perf's EXIT record (the real parent's pid, as BCC's
# PPID): the command's is ember, whose fork is not in the recording.
# --per-thread: a thread started 2 s into its process's life, spinning
# 0.3 s of CPU, is 0.3 s old (at least, and below 1.5 s), not "?" nor its
# process's age, with its process's parent.  A child killed by SIGSEGV
# with RLIMIT_CORE unlimited shows ", core dumped" exactly when its
# parent's wait status says so; with RLIMIT_CORE 0 it does not.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-exitsnoop "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-exitsnoop "no tracefs"; exit 0; }
busy_cpus 60

F=$TMP/exit.data
"$EMBER" exitsnoop -o "$F" -- sh -c 'sleep 10 & echo $! >'"$TMP/pid"'; sleep 0.3; kill -9 $!;
	(exit 3); /bin/true' >"$TMP/live" 2>"$TMP/err" &
ep=$!
wait "$ep"
sh=$(awk -v e="$ep" '$1 == "sh" && $3 == e { print $2 }' "$TMP/live")
check "the command's parent is ember ($ep), from the EXIT record" test -n "$sh"
killed=$(cat "$TMP/pid")
check "the sleep killed by SIGKILL shows the signal" \
	grep -Eq "^sleep +$killed +$sh +$killed +0\.[0-9]+ +signal 9 \(KILL\)$" "$TMP/live"
check "a subshell's exit 3 shows its code" grep -Eq "^sh +[0-9]+ +$sh .* code 3$" "$TMP/live"
check "/bin/true exits 0" grep -Eq "^true +[0-9]+ +$sh .* 0$" "$TMP/live"
"$EMBER" exitsnoop -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" exitsnoop -x -i "$F" >"$TMP/x" 2>/dev/null
check "-x leaves the clean exits out" test "$(awk 'NR > 1 && $NF == "0"' "$TMP/x" | wc -l)" = 0 -a \
	"$(awk 'NR > 1' "$TMP/x" | wc -l)" -ge 2

# --per-thread: the program as the command (its fork not recorded), and
# under sh (its fork recorded: the thread's age was its process's).
"$EMBER" exitsnoop --per-thread -- "$WORKLOADS/late-threads" 2000 1 0.3 >"$TMP/thr" 2>/dev/null &
ep=$!
wait "$ep"
thread_line() { awk '$1 == "late-0" && $2 != $4' "$1"; }
line=$(thread_line "$TMP/thr")
age=$(echo "$line" | awk '{ print $5 }')
check "--per-thread, a command's thread: its own age, 0.3 to 1.5 s ($line)" \
	awk -v a="$age" 'BEGIN { exit !(a >= 0.3 && a < 1.5) }'
check "--per-thread, a command's thread: its process's parent, ember ($ep)" \
	test "$(echo "$line" | awk '{ print $3 }')" = "$ep"
"$EMBER" exitsnoop --per-thread -- sh -c "$WORKLOADS/late-threads 2000 1 0.3; true" >"$TMP/thr2" 2>/dev/null
line=$(thread_line "$TMP/thr2")
age=$(echo "$line" | awk '{ print $5 }')
sh=$(awk '$1 == "sh" && $2 == $4 { print $2 }' "$TMP/thr2")
check "--per-thread, a thread of a process forked in the recording: 0.3 to 1.5 s, not its process's age ($line)" \
	awk -v a="$age" 'BEGIN { exit !(a >= 0.3 && a < 1.5) }'
check "--per-thread: the thread's parent is its process's, sh ($sh)" \
	test -n "$sh" -a "$(echo "$line" | awk '{ print $3 }')" = "$sh"

# Live, a line comes as the exit does, not at the end: after its child
# exits 3 the command waits (quietly: read -t on a fifo no one writes, no
# event of exitsnoop's) for the reader to say it saw the line, 10 s at
# most.  Lines wait for their EXIT record and SIGCHLD, which a per-task
# recording never has: two rounds end the wait; stdout, a pipe, is
# flushed at each round.
mkfifo "$TMP/lines" "$TMP/idle"
"$EMBER" exitsnoop -- bash -c 'sh -c "exit 3"; exec 3<>"$1"
	for ((i = 0; i < 100; i++)); do
		[ -e "$2" ] && { echo yes >"$3"; break; }
		read -r -t 0.1 -u 3 _
	done' bash "$TMP/idle" "$TMP/seen" "$TMP/result" >"$TMP/lines" 2>/dev/null &
ep=$!
{ grep -m1 -q 'code 3$' && touch "$TMP/seen"; cat >/dev/null; } <"$TMP/lines"
wait "$ep"
check "live: the exit's line comes while the command still runs" test -s "$TMP/result"

# Core dumps: the parent's SIGCHLD (CLD_DUMPED) is sent after a traced
# task's own events are gone, so -a.  The truth is the parent's wait
# status (WCOREDUMP), whatever core_pattern does; a pattern that writes
# to an absolute path would leave a file outside $TMP: skipped then.
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
if ! command -v python3 >/dev/null; then
	skip tools-exitsnoop-core "no python3 here"
elif [ "${pattern#/}" != "$pattern" ]; then
	skip tools-exitsnoop-core "core_pattern writes to $pattern, outside the test's folder"
else
	cat >"$TMP/dump.py" <<'PY'
import os, resource, signal, sys
out = open(sys.argv[1], "w")
for limit in (resource.RLIM_INFINITY, 0):
    pid = os.fork()
    if pid == 0:
        resource.setrlimit(resource.RLIMIT_CORE, (limit, limit))
        os.kill(os.getpid(), signal.SIGSEGV)
        os._exit(1)
    _, st = os.waitpid(pid, 0)
    print(pid, int(os.WCOREDUMP(st)), file=out, flush=True)
PY
	mkdir "$TMP/cwd"   # where a relative core_pattern writes
	(cd "$TMP/cwd" && "$EMBER" exitsnoop -a -- python3 "$TMP/dump.py" "$TMP/waits" >"$TMP/dumps" 2>/dev/null)
	read -r p1 d1 p2 d2 <<<"$(awk '{ printf "%s %s ", $1, $2 }' "$TMP/waits")"
	says() { [ -n "$1" ] && grep -E "^python3 +$1 .* signal 11 \(SEGV\)$2\$" "$TMP/dumps"; }
	said() { says "$@" >/dev/null; }
	if [ "${d1:-0}" = 1 ]; then
		check "a core dumped: ', core dumped' ($(says "$p1" ', core dumped'))" \
			said "$p1" ', core dumped'
	else
		skip tools-exitsnoop-core "no core was written with RLIMIT_CORE unlimited here (core_pattern $pattern)"
	fi
	check "RLIMIT_CORE 0: the signal alone (wait status core $d2) ($(says "$p2" ''))" \
		test "${d2:-1}" = 0 -a -n "$(says "$p2" '')"
fi
idle_cpus
