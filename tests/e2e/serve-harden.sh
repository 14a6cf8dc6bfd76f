#!/usr/bin/env bash
# tests/e2e/serve-harden.sh - ember serve facing users who are not its
# clients (#30): 40 silent connections, reopened as they close, keep no
# client with a token out; --max-conns is capped by the descriptor limit,
# and a server out of descriptors pauses accept instead of spinning; its
# recordings are 0600 in 0700 folders; a host name starting with '-' is
# refused; a refused client with --fallback records into it; a server's
# ERR at the end is said when the fallback keeps the recording; a server
# out of disk space says what it kept, and the client says its word.
# parallel-safe: checks answers, files and modes; its one CPU bound has a
# tenfold margin and load only lowers what a paused server spends (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
. "$(dirname "$0")/../e2e-serve-lib.sh"
require_perf serve-harden
command -v python3 >/dev/null || { skip serve-harden "python3 not installed"; exit 0; }

printf 'tok-%s%s\n' "$RANDOM" "$RANDOM" >"$TMP/token"
echo not-the-token >"$TMP/bad"
mkdir "$TMP/srv"
if ! start_server srv -o "$TMP/srv" --token-file "$TMP/token" --duration 40; then
	fail serve-listens "no 'listening on' line: $(head -c 300 "$TMP/srv.log")"
	exit 0
fi
URL=tcp://127.0.0.1:$PORT

# silent PORT SOURCE N SECONDS REOPEN : N connections from SOURCE that
# say nothing, each reopened once the server closes it when REOPEN is 1,
# until $TMP/stop appears or SECONDS pass; $TMP/silent.ready once the
# first N are open.
silent() {
	python3 - "$@" "$TMP" <<'PY'
import os, select, socket, sys, time
port, src, n, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
reopen, tmp = sys.argv[5] == "1", sys.argv[6]
def one():
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s
socks = [one() for _ in range(n)]
open(tmp + "/silent.ready", "w").close()
end, opened = time.time() + secs, n
while time.time() < end and not os.path.exists(tmp + "/stop"):
    r, _, _ = select.select(socks, [], [], 0.05)
    for s in r:
        try:
            gone = not s.recv(256)
        except OSError:
            gone = True
        if gone:
            socks.remove(s); s.close()
            if reopen:
                socks.append(one()); opened += 1
    time.sleep(0.01)
print(opened)
PY
}

# 1. Locked out: 40 silent connections from 127.0.0.2 while a client
# with the token records from 127.0.0.1.
silent "$PORT" 127.0.0.2 40 20 1 >"$TMP/silent.out" 2>&1 &
AP=$!
for i in $(seq 100); do [ -e "$TMP/silent.ready" ] && break; sleep 0.05; done
run_ember good record -F 999 -o "$URL" --token-file "$TMP/token" -- "$WORKLOADS/ratio" 0.5
touch "$TMP/stop"
wait "$AP"
name=$(stored_name "$TMP/good.err")
if [ "$RC" -eq 0 ] && [ -n "$name" ] && parse_end_line "$TMP/good.err" &&
   why=$(samples_agree "$TMP/srv/$name" "$EL_N"); then
	pass token-client-among-40-silent
else
	fail token-client-among-40-silent "exit $RC, ${why:-}: $(head -c 300 "$TMP/good.err") (silent: $(cat "$TMP/silent.out"))"
fi
# The lines on them are at most 5 a second, and a count once a second.
for i in $(seq 30); do grep -q 'more connections closed before a good hello' "$TMP/srv.log" && break; sleep 0.1; done
if grep -q 'more connections closed before a good hello (not logged one by one)' "$TMP/srv.log"; then
	pass silent-log-bounded
else
	fail silent-log-bounded "$(grep -c . "$TMP/srv.log") lines: $(tail -2 "$TMP/srv.log")"
fi

# 2. A host name that would be an option to whatever runs on the folder.
python3 - "$PORT" "$TMP/token" >"$TMP/dash.out" 2>&1 <<'PY'
import socket, struct, sys
tok = open(sys.argv[2], "rb").read().strip()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.settimeout(5)
s.sendall(b"EMBERNET" + struct.pack(">HHHH", 1, 3, len(tok), 0) + b"-rf" + tok)
print(s.recv(256).decode(errors="replace").strip())
PY
if grep -q '^ERR bad hello: the host name' "$TMP/dash.out" && [ -z "$(ls "$TMP/srv" | grep '^-')" ]; then
	pass dash-host-refused
else
	fail dash-host-refused "answer '$(cat "$TMP/dash.out")', folders: $(ls "$TMP/srv" | tr '\n' ' ')"
fi

# 3. Refused (wrong token) with --fallback: the recording goes there.
run_ember fb record -F 999 -o "$URL" --token-file "$TMP/bad" --fallback "$TMP/fb.data" -- "$WORKLOADS/ratio" 0.3
if [ "$RC" -eq 0 ] && grep -q "warning: $URL: the server refused: wrong token; recording into $TMP/fb.data instead" "$TMP/fb.err" &&
   parse_end_line "$TMP/fb.err" && [ "$EL_FILE" = "$TMP/fb.data (the fallback)" ] &&
   why=$(samples_agree "$TMP/fb.data" "$EL_N") && [ "$(stat -c %a "$TMP/fb.data")" = 600 ]; then
	pass refused-into-fallback
else
	fail refused-into-fallback "exit $RC, ${why:-}, mode $(stat -c %a "$TMP/fb.data" 2>&1): $(head -c 300 "$TMP/fb.err")"
fi
kill "$SRV_EMBER" 2>/dev/null; wait "$SRV_PID" 2>/dev/null

# cpu_ticks PID : user + system clock ticks the process spent.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# 4. --max-conns past the descriptor limit: capped, said once, no spin.
printf '#!/bin/sh\nulimit -n 64 || exit 3\nexec %s "$@"\n' "$EMBER" >"$TMP/ember-64"
chmod +x "$TMP/ember-64"
EMBER=$TMP/ember-64 start_server fd -o "$TMP/srv" --max-conns 1000 --duration 30
n=$(sed -n 's/.*warning: --max-conns 1000 capped to \([0-9]*\): the descriptor limit (ulimit -n) is 64.*/\1/p' "$TMP/fd.log")
if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt 30 ]; then pass max-conns-capped-to-$n
else fail max-conns-capped "$(head -c 300 "$TMP/fd.log")"; fi
rm -f "$TMP/stop" "$TMP/silent.ready"
silent "$PORT" 127.0.0.1 70 4 0 >"$TMP/silent2.out" 2>&1 &
AP=$!
for i in $(seq 100); do [ -e "$TMP/silent.ready" ] && break; sleep 0.05; done
t0=$(cpu_ticks "$SRV_EMBER"); sleep 3; t1=$(cpu_ticks "$SRV_EMBER")
touch "$TMP/stop"; wait "$AP"
hz=$(getconf CLK_TCK)
if [ $((t1 - t0)) -lt $((3 * hz / 4)) ]; then pass fd-limit-no-spin
else fail fd-limit-no-spin "$((t1 - t0)) ticks of CPU in 3 s: $(tail -3 "$TMP/fd.log")"; fi
run_ember fd-good record -F 999 -o "tcp://127.0.0.1:$PORT" -- "$WORKLOADS/ratio" 0.2
if [ "$RC" -eq 0 ] && [ -n "$(stored_name "$TMP/fd-good.err")" ]; then pass fd-limit-serves
else fail fd-limit-serves "exit $RC: $(head -c 300 "$TMP/fd-good.err")"; fi
fname=$(stored_name "$TMP/fd-good.err")
# Only the server's user reads what it stored.
if [ -n "$fname" ] && [ "$(stat -c %a "$TMP/srv/$fname")" = 600 ] &&
   [ "$(stat -c %a "$(dirname "$TMP/srv/$fname")")" = 700 ]; then
	pass stored-0600-in-0700
else
	fail stored-0600-in-0700 "file $(stat -c %a "$TMP/srv/$fname" 2>&1), folder $(stat -c %a "$(dirname "$TMP/srv/$fname")" 2>&1)"
fi

kill "$SRV_EMBER" 2>/dev/null; wait "$SRV_PID" 2>/dev/null

# 5. Out of descriptors all the same (the limit lowered under it): accept
# fails, is logged once and paused, instead of failing in a busy loop.
if command -v prlimit >/dev/null; then
	start_server emfile -o "$TMP/srv" --duration 30
	nfd=$(ls "/proc/$SRV_EMBER/fd" | wc -l)
	prlimit --pid "$SRV_EMBER" --nofile=$((nfd + 2)):$((nfd + 2))
	rm -f "$TMP/stop" "$TMP/silent.ready"
	silent "$PORT" 127.0.0.1 20 4 0 >"$TMP/silent3.out" 2>&1 &
	AP=$!
	for i in $(seq 100); do [ -e "$TMP/silent.ready" ] && break; sleep 0.05; done
	t0=$(cpu_ticks "$SRV_EMBER"); sleep 3; t1=$(cpu_ticks "$SRV_EMBER")
	touch "$TMP/stop"; wait "$AP"
	if [ $((t1 - t0)) -lt $((3 * hz / 4)) ] &&
	   grep -q 'accept: Too many open files; taking no connection for 250 ms at a time' "$TMP/emfile.log"; then
		pass emfile-paused
	else
		fail emfile-paused "$((t1 - t0)) ticks of CPU in 3 s: $(tail -3 "$TMP/emfile.log")"
	fi
	kill "$SRV_EMBER" 2>/dev/null; wait "$SRV_PID" 2>/dev/null
else
	skip emfile-paused "prlimit (util-linux) not installed"
fi

# 6. A server that answers the end with ERR, a fallback given: the
# recording is the fallback's, and the server's reason is said.
python3 - "$TMP" >"$TMP/enderr.out" 2>&1 <<'PY' &
import socket, struct, sys
tmp = sys.argv[1]
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
open(tmp + "/enderr.port", "w").write(str(ls.getsockname()[1]))
ls.settimeout(30)
s, _ = ls.accept()
s.settimeout(30)
def need(n):
    b = b""
    while len(b) < n:
        got = s.recv(n - len(b))
        if not got: raise SystemExit("the client went away")
        b += got
    return b
head = need(16); need(sum(struct.unpack(">HH", head[10:14])))
s.sendall(b"OK\n")
while True:
    n, = struct.unpack(">I", need(4))
    if n == 0: break
    if n != 0xffffffff: need(n)
s.sendall(b"ERR the end was refused\n")
PY
EP=$!
for i in $(seq 100); do [ -s "$TMP/enderr.port" ] && break; sleep 0.05; done
EURL=tcp://127.0.0.1:$(cat "$TMP/enderr.port")
run_ember enderr record -F 999 -o "$EURL" --fallback "$TMP/fb3.data" -- "$WORKLOADS/ratio" 0.3
wait "$EP"
if [ "$RC" -eq 0 ] && grep -q "warning: $EURL: the server refused: the end was refused; the recording is kept whole in $TMP/fb3.data" "$TMP/enderr.err" &&
   parse_end_line "$TMP/enderr.err" && [ "$EL_FILE" = "$TMP/fb3.data (the fallback)" ] &&
   why=$(samples_agree "$TMP/fb3.data" "$EL_N"); then
	pass end-err-said-with-fallback
else
	fail end-err-said-with-fallback "exit $RC, ${why:-}: $(head -c 300 "$TMP/enderr.err") $(cat "$TMP/enderr.out")"
fi

# 7. A full disk on the server (a 4 KiB tmpfs): the client says what the
# server said of its file, never "kept and readable" on its own; with
# --fallback, the server's word is in the warning.
mkdir "$TMP/full"
if ! mount -t tmpfs -o size=4k ember-e2e "$TMP/full" 2>/dev/null; then
	skip disk-full "cannot mount a tmpfs"
	exit 0
fi
trap 'umount "$TMP/full" 2>/dev/null; cleanup_record_tests' EXIT
start_server full -o "$TMP/full" --duration 30
run_ember nofb record -a -F 999 --duration 1 -o "tcp://127.0.0.1:$PORT"
if [ "$RC" -eq 1 ] && grep -q "the server stopped the recording: writing .*: No space left on device; " "$TMP/nofb.err" &&
   ! grep -q 'kept and readable' "$TMP/nofb.err"; then
	if grep -q '; nothing readable arrived, .* removed$' "$TMP/nofb.err" && [ -z "$(ls "$TMP/full")" ]; then
		pass disk-full-said-removed
	elif f=$(sed -n 's/.*; \([^ ]*\) kept to its last complete round (\([0-9]*\) of.*/\1 \2/p' "$TMP/nofb.err") &&
	     set -- $f && [ $# = 2 ] && [ "$(stat -c %s "$TMP/full/$1")" = "$2" ] &&
	     "$PERF" report -i "$TMP/full/$1" --stats >/dev/null 2>&1; then
		pass disk-full-said-kept
	else
		fail disk-full-said "$(head -c 400 "$TMP/nofb.err"), on disk: $(ls -R "$TMP/full" | tr '\n' ' ')"
	fi
else
	fail disk-full-said "exit $RC: $(head -c 400 "$TMP/nofb.err")"
fi
run_ember withfb record -F 999 -o "tcp://127.0.0.1:$PORT" --fallback "$TMP/fb2.data" -- "$WORKLOADS/ratio" 0.5
if [ "$RC" -eq 0 ] && grep -q "warning: tcp://127.0.0.1:$PORT: the server stopped the recording: writing .*: No space left on device; .*; the recording goes on into $TMP/fb2.data" "$TMP/withfb.err" &&
   parse_end_line "$TMP/withfb.err" && why=$(samples_agree "$TMP/fb2.data" "$EL_N"); then
	pass disk-full-fallback-says-why
else
	fail disk-full-fallback-says-why "exit $RC, ${why:-}: $(head -c 400 "$TMP/withfb.err")"
fi
kill "$SRV_EMBER" 2>/dev/null; wait "$SRV_PID" 2>/dev/null
umount "$TMP/full"
