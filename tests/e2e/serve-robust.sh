#!/usr/bin/env bash
# tests/e2e/serve-robust.sh - ember serve survives what clients send: bytes
# that are no hello, bad versions and lengths, a frame length past the
# bound, a broken stream, a silent client (no hello in 1 s), one client
# too many (--max-conns, its hello good), and a recorder killed with SIGKILL mid-stream, whose file
# ember and perf still read; a good client is stored after all of them.
# parallel-safe: checks exit statuses and readable files, not counts or timing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
. "$(dirname "$0")/../e2e-serve-lib.sh"
require_perf serve-robust
command -v python3 >/dev/null || { skip serve-robust "python3 not installed"; exit 0; }

mkdir "$TMP/srv"
# 9 raw clients (3 of them at once for --max-conns), the killed recorder
# and the good one.
if ! start_server srv -o "$TMP/srv" --timeout 1 --max-conns 2 --stop-after 12 --duration 40; then
	fail serve-listens "no 'listening on' line: $(head -c 300 "$TMP/srv.log")"
	exit 0
fi

# raw CASE... : misbehaving clients one after another (one python3, whose
# start is slow on a busy machine); what the server answered to each goes
# to $TMP/raw-CASE.out.
raw() {
	python3 - "$PORT" "$TMP" "$@" <<'PY'
import os, socket, struct, sys
port, tmp = int(sys.argv[1]), sys.argv[2]
def conn():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    return s
def hello(host=b"rawhost", version=1, hlen=None, tlen=0, tok=b""):
    return (b"EMBERNET" + struct.pack(">HHHH", version, len(host) if hlen is None else hlen, tlen, 0)
            + host + tok)
def answer(s):
    data = b""
    try:
        while not data.endswith(b"\n"):
            b = s.recv(256)
            if not b: break
            data += b
    except OSError as e:
        return "error %s" % e
    return data.decode(errors="replace").strip()
def one(case, out):
  if case == "busy":
    # Two clients past their hello hold the 2 slots; a third one's good
    # hello is answered busy (silent connections hold no slot).
    a, b = conn(), conn()
    a.sendall(hello()); b.sendall(hello()); answer(a); answer(b)
    c = conn(); c.sendall(hello())
    print(answer(c), file=out); a.close(); b.close(); c.close(); return
  s = conn()
  if case == "garbage":
    s.sendall(os.urandom(5000))
  elif case == "version":
    s.sendall(hello(version=99))
  elif case == "hostlen":
    s.sendall(hello(hlen=65535))
  elif case == "huge":
    s.sendall(hello()); print(answer(s), file=out)
    s.sendall(struct.pack(">I", 0xfffffff0) + b"x" * 64)
  elif case == "badrecord":
    s.sendall(hello()); print(answer(s), file=out)
    hdr = struct.pack("<QQ", 0x32454c4946524550, 16)
    bad = struct.pack("<IHH", 9, 0, 4)      # a record of size 4 < its header
    s.sendall(struct.pack(">I", len(hdr + bad)) + hdr + bad)
  elif case == "cutshort":
    s.sendall(hello()); print(answer(s), file=out)
    hdr = struct.pack("<QQ", 0x32454c4946524550, 16)
    rnd = struct.pack("<IHH", 68, 0, 8)     # FINISHED_ROUND
    half = struct.pack("<IHH", 3, 0, 40)[:4]
    s.sendall(struct.pack(">I", 28) + hdr + rnd + half)
    s.close(); return
  print(answer(s), file=out)
  s.close()
for case in sys.argv[3:]:
    with open("%s/raw-%s.out" % (tmp, case), "w") as out:
        one(case, out)
PY
}

raw garbage version hostlen huge badrecord silent busy cutshort
expect() {
	local name=$1 out=$2 log=$3
	if grep -q -- "$out" "$TMP/raw-$name.out" && grep -q -- "$log" "$TMP/srv.log"; then pass "raw-$name"
	else fail "raw-$name" "answer '$(tr '\n' '|' <"$TMP/raw-$name.out")', log: $(grep -v listening "$TMP/srv.log" | tail -2 | tr '\n' '|')"; fi
}
expect garbage 'ERR not an ember client' 'not an ember client (no EMBERNET hello); nothing written'
expect version 'ERR protocol version 99' 'protocol version 99.*nothing written'
expect hostlen 'ERR bad hello: host length 65535' 'bad hello: host length 65535.*nothing written'
expect huge 'ERR frame length 4294967280 exceeds' 'frame length 4294967280 exceeds the bound.*removed'
expect badrecord 'ERR perf stream: offset 16: record size 4' 'perf stream: offset 16: record size 4'
expect silent 'ERR no hello in time' 'no hello in time; nothing written'
expect busy 'ERR busy: 2 clients already' 'refused: busy: 2 clients already (--max-conns)'
# A stream cut inside a record after a round: the file ends at the round.
name=$(sed -n 's/.*before the end of its stream; \(rawhost-[^ ]*\) kept to its last complete round (24 of 28 bytes)$/\1/p' "$TMP/srv.log")
if [ -n "$name" ] && [ "$(stat -c %s "$TMP/srv/$name")" = 24 ]; then pass cut-to-round
else fail cut-to-round "${name:-no log line}: $(stat -c %s "$TMP/srv/$name" 2>&1)"; fi

# A recorder killed mid-stream: its file is cut to its last round and reads.
"$EMBER" record -F 999 -o "tcp://127.0.0.1:$PORT" -- "$WORKLOADS/ratio" 3 \
	>"$TMP/kill.out" 2>"$TMP/kill.err" </dev/null &
EP=$!
sleep 1.5
kids=$(pgrep -P "$EP")
kill -KILL "$EP"; wait "$EP" 2>/dev/null
[ -n "$kids" ] && kill $kids 2>/dev/null
for i in $(seq 50); do [ "$(grep -c 'before the end of its stream; .* kept to its last' "$TMP/srv.log")" -ge 2 ] && break; sleep 0.1; done
name=$(sed -n 's/.*before the end of its stream; \([^ ]*\) kept to its last complete round.*/\1/p' "$TMP/srv.log" | grep -v '^rawhost-')
if [ -z "$name" ]; then
	fail killed-client-kept "$(grep -v listening "$TMP/srv.log" | tail -2)"
elif why=$(perf_reads "$TMP/srv/$name") && why=$(samples_agree "$TMP/srv/$name" ""); then
	pass killed-client-readable
else
	fail killed-client-readable "$why"
fi

# The server still serves.
run_ember good record -F 999 -o "tcp://127.0.0.1:$PORT" -- "$WORKLOADS/ratio" 0.3
name=$(stored_name "$TMP/good.err")
if [ "$RC" -eq 0 ] && [ -n "$name" ] && parse_end_line "$TMP/good.err" &&
   why=$(samples_agree "$TMP/srv/$name" "$EL_N"); then
	pass good-client-after
else
	fail good-client-after "exit $RC, ${why:-}: $(head -c 300 "$TMP/good.err")"
fi
wait "$SRV_PID"; rc=$?
if [ "$rc" -eq 0 ] && grep -q '12 clients: 1 stored, 6 cut short' "$TMP/srv.log"; then pass server-survives
else fail server-survives "exit $rc: $(tail -c 300 "$TMP/srv.log")"; fi
