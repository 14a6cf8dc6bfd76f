#!/usr/bin/env bash
# push-spool.sh - the continuous profiler through an outage: the receiver
# (a stand-in for Pyroscope's /ingest on 127.0.0.1) takes two 1 s
# intervals, is stopped for three, whose profiles wait in --spool DIR, and
# started again: they arrive, none lost, the recorder losing no samples
# meanwhile; then with it down throughout, --spool-max keeps the newest
# profiles and counts the rest.
# parallel-safe: its checks are sums within one run (intervals, spool, lost records), which load only delays (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip push-spool "needs root for system-wide sampling"; exit 0; }
PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ skip push-spool "no python3 for the receiver"; exit 0; }
GO=$(command -v go)

# A free port on 127.0.0.1 for the receiver: up for two intervals, then
# stopped for three, then up again on the same port.  Each step waits (a
# bounded poll) for what it needs, as a loaded machine is slow.
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
NAME='ember.test.cpu{env=ci,host=spool}'
R=$TMP/recv S=$TMP/spool
mkdir -p "$R/a" "$R/b"
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R/a" --port "$PORT" --requests 2 --seconds 60 &
RECV=$!
"$WORKLOADS/ratio" 30 >/dev/null &
RATIO=$!
pid=
trap 'kill $RATIO $RECV $pid 2>/dev/null; rm -rf "$TMP"' EXIT
# poll SECONDS COMMAND...: until the command succeeds, at most SECONDS.
poll() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do "${@:2}" && return 0; sleep 0.1; done
	return 1
}
intervals() { [ "$(grep -c ' bytes' "$TMP/out" 2>/dev/null)" -ge "$1" ]; }
poll 10 test -s "$R/a/port"

"$EMBER" push --url "$URL" --name "$NAME" --every 1s -a -F 99 --retries 0 \
	--spool "$S" -o "$TMP/rec.data" -v >"$TMP/out" 2>"$TMP/err" &
pid=$!
poll 15 test -e "$R/a/req-1.path"
kill $RECV 2>/dev/null      # stopped
wait $RECV 2>/dev/null
poll 15 intervals 5         # three more intervals
in_spool=$(ls "$S" 2>/dev/null | wc -l)
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R/b" --port "$PORT" --requests 100 --seconds 60 &
RECV=$!
poll 10 test -s "$R/b/port"
# Up again: the spool drains (its profiles and at least one new one).
drained() { [ -e "$R/b/req-$in_spool.path" ] && [ "$(ls "$S" | wc -l)" = 0 ]; }
poll 20 drained
kill -TERM $pid
wait $pid
rc=$?
pid=
sleep 0.3
na=$(ls "$R"/a/req-*.path 2>/dev/null | wc -l) nb=$(ls "$R"/b/req-*.path 2>/dev/null | wc -l)
sent=$(grep -c ' bytes$' "$TMP/out")
check "receiver stopped after 2 intervals: $in_spool profiles spooled meanwhile, a warning said so: $(grep -m1 'upload failed' "$TMP/err")" \
	test "$na" = 2 -a "$in_spool" -ge 2 && grep -q "upload failed: .*Couldn't connect" "$TMP/err"
check "started again, then SIGTERM: exit 0 ($rc), every interval's profile arrived ($na + $nb of $sent), the spool empty ($(ls "$S" | wc -l))" \
	test "$rc" = 0 -a "$((na + nb))" = "$sent" -a "$sent" -ge 6 -a "$(ls "$S" | wc -l)" = 0
check "the end line counts them: $(grep 'profiles sent' "$TMP/err")" \
	grep -Eq "^ember push: $sent profiles sent \([1-9][0-9]* from the spool\), [1-9][0-9]* failed uploads, 0 in the spool, 0 dropped; 0 samples lost at the ring" "$TMP/err"
rep=$("$EMBER" report -i "$TMP/rec.data" --stdio 2>/dev/null)
want=$("$EMBER" script -i "$TMP/rec.data" -F tid,time 2>/dev/null | wc -l)   # report rounds to 1K
lost=$(awk '/^# Total Lost Samples: / { print $5; exit }' <<<"$rep")
check "the recorder lost no samples during the outage ($lost lost)" test "$lost" = 0
if [ -n "$GO" ]; then
	total=0
	for f in "$R"/a/req-*.body "$R"/b/req-*.body; do
		c=$("$GO" tool pprof -raw "$f" 2>/dev/null | awk '/^Samples:/ { s = 1; next }
			/^Locations/ { s = 0 } s && /^ *[0-9]+ / { n += $1 } END { print n + 0 }')
		total=$((total + c))
	done
	check "none lost: the bodies' samples ($total) add up to script -i's ($want)" \
		test -n "$want" -a "$total" = "$want"
else
	skip "the spooled bodies' samples add up" "no go (Debian golang-go)"
fi
kill $RECV $RATIO 2>/dev/null
wait $RECV 2>/dev/null

# Down throughout: --spool-max 2 keeps the two newest, the rest dropped and
# counted, oldest first.
"$EMBER" push --url "$URL" --name "$NAME" --every 1s -a -F 99 --duration 3 --retries 0 \
	--spool "$TMP/s2" --spool-max 2 --drain-time 1 -v >"$TMP/out2" 2>"$TMP/err2"
rc=$?
made=$(grep -c ' bytes$' "$TMP/out2")
newest=$(awk -F'[-:]' '/ bytes$/ { u = $2 } END { print u }' "$TMP/out2")
kept=$(ls "$TMP/s2" | sort | tail -1)
check "--spool-max 2: exit 0 ($rc), 2 files kept ($(ls "$TMP/s2" | wc -l)), the newest interval's among them ($kept, until $newest)" \
	test "$rc" = 0 -a "$(ls "$TMP/s2" | wc -l)" = 2 -a -n "$newest" -a "${kept#*-*-$newest-}" != "$kept"
check "the end line counts the $((made - 2)) dropped: $(grep 'profiles sent' "$TMP/err2")" \
	grep -q "0 profiles sent .* 2 in the spool, $((made - 2)) dropped" "$TMP/err2"
