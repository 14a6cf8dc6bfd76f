#!/usr/bin/env bash
# tests/e2e/serve-fallback.sh - the client's side of a connection that
# fails: the server killed mid-stream, and --fallback keeps the whole
# recording (ember and perf count the samples the client did); a server
# that confirms leaves no fallback behind; a server too slow to read
# blocks the recorder, whose losses are counted and written as LOST
# records, never dropped silently.
# parallel-safe: its checks are sums within one run (intervals, spool, lost records), which load only delays (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
. "$(dirname "$0")/../e2e-serve-lib.sh"
require_perf serve-fallback
mkdir "$TMP/srv"

# The server killed while a client streams.
if ! start_server srv -o "$TMP/srv"; then
	fail serve-listens "no 'listening on' line: $(head -c 300 "$TMP/srv.log")"
	exit 0
fi
( run_ember fb1 record -F 999 -o "tcp://127.0.0.1:$PORT" --fallback "$TMP/fb1.data" -- \
	"$WORKLOADS/ratio" 1; echo "$RC" >"$TMP/fb1.rc" ) &
CP=$!
for i in $(seq 100); do
	[ "$(find "$TMP/srv" -name ember.data -size +8k | wc -l)" -gt 0 ] && break
	sleep 0.05
done
kill -KILL "$SRV_EMBER"
wait "$CP"
wait "$SRV_PID" 2>/dev/null
rc=$(cat "$TMP/fb1.rc")
if [ "$rc" -eq 0 ] && grep -q "^ember record: warning: tcp://127.0.0.1:$PORT: connection lost: .*; the recording goes on into $TMP/fb1.data" "$TMP/fb1.err" &&
   parse_end_line "$TMP/fb1.err" && [ "$EL_FILE" = "$TMP/fb1.data (the fallback)" ]; then
	pass drop-said-once
	if why=$(samples_agree "$TMP/fb1.data" "$EL_N"); then pass fallback-whole-$EL_N
	else fail fallback-whole "$why"; fi
else
	fail drop-said-once "exit $rc: $(head -c 400 "$TMP/fb1.err")"
fi

# A server that takes it all: the fallback goes.
start_server srv2 -o "$TMP/srv" --stop-after 1
run_ember fb2 record -F 999 -o "tcp://127.0.0.1:$PORT" --fallback "$TMP/fb2.data" -- "$WORKLOADS/ratio" 0.3
name=$(stored_name "$TMP/fb2.err")
if [ "$RC" -eq 0 ] && [ -n "$name" ] && [ ! -e "$TMP/fb2.data" ] && [ -s "$TMP/srv/$name" ]; then
	pass fallback-removed-when-stored
else
	fail fallback-removed-when-stored "exit $RC, stored '$name': $(head -c 300 "$TMP/fb2.err")"
fi
wait "$SRV_PID"

# A server that reads nothing for 1.5 s: the writer blocks, the one-page
# rings overflow, and the losses are in the file as LOST records.
command -v python3 >/dev/null || { skip slow-server "python3 not installed"; exit 0; }
python3 - "$TMP" >"$TMP/slow.out" 2>&1 <<'PY' &
import socket, struct, sys, time
tmp = sys.argv[1]
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
open(tmp + "/slow.port", "w").write(str(ls.getsockname()[1]))
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
time.sleep(1.5)
with open(tmp + "/slow.data", "wb") as f:
    while True:
        n, = struct.unpack(">I", need(4))
        if n == 0: break
        if n != 0xffffffff: f.write(need(n))
s.sendall(b"OK slow.data\n")
PY
SP=$!
for i in $(seq 100); do [ -s "$TMP/slow.port" ] && break; sleep 0.05; done
busy_all 3
run_ember slow record -a -F 4999 -m 1 --duration 2 -o "tcp://127.0.0.1:$(cat "$TMP/slow.port")"
stop_spinners
wait "$SP"
if [ "$RC" -ne 0 ] || ! parse_end_line "$TMP/slow.err"; then
	fail slow-server "exit $RC: $(head -c 300 "$TMP/slow.err") $(cat "$TMP/slow.out")"
elif [ "$EL_M" -eq 0 ]; then
	skip slow-server-losses "no sample was lost with the server silent for 1.5 s"
else
	lost=$(perf_lost_sum "$TMP/slow.data")
	if [ "$lost" = "$EL_M" ] && grep -q "warning: $EL_M samples lost" "$TMP/slow.err"; then
		pass slow-server-losses-in-file-$EL_M
	else
		fail slow-server-losses "the client lost $EL_M, LOST records in the file say $lost"
	fi
	if why=$(samples_agree "$TMP/slow.data" "$EL_N"); then pass slow-server-samples
	else fail slow-server-samples "$why"; fi
fi
