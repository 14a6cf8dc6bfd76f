#!/usr/bin/env bash
# tests/e2e/live-hup.sh - a live tool's output to a file, as `execsnoop >
# file` under an ssh session that closes: each line is in the file as soon
# as the tool prints it (line buffered), and SIGHUP ends the tool as
# SIGTERM does, every line kept (it once died of it, its buffer lost).
# The command runs /bin/true HUPMARK N five times, then sleeps.
set -u
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-hup "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip live-hup "no tracefs"; exit 0; }

marks() { grep -c '^true .* /bin/true HUPMARK [1-5]$' "$1"; }
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

"$EMBER" execsnoop -- sh -c "for i in 1 2 3 4 5; do /bin/true HUPMARK \$i; done
	touch $TMP/done; exec sleep 30" >"$TMP/out" 2>"$TMP/err" &
pid=$!
poll 20 test -e "$TMP/done" || fail "live-hup: the command" "did not run"
# The five lines reach the file while the tool runs (each flushed).
poll 10 eval 'test "$(marks "$TMP/out")" = 5'
check "execsnoop > file: the 5 lines are in the file while it runs ($(marks "$TMP/out"))" \
	test "$(marks "$TMP/out")" = 5
kill -HUP "$pid"
wait "$pid"
rc=$?
check "execsnoop > file, SIGHUP: exits 0 as for SIGTERM ($rc)" test "$rc" = 0
check "execsnoop > file, SIGHUP: the 5 lines kept ($(marks "$TMP/out"))" \
	test "$(marks "$TMP/out")" = 5
check "execsnoop > file, SIGHUP: no error ($(head -c 200 "$TMP/err"))" test ! -s "$TMP/err"
