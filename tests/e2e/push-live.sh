#!/usr/bin/env bash
# push-live.sh - the continuous profiler, as `ember record -a -g --push URL
# --push-every 1s` runs it, against a stand-in for Pyroscope's /ingest on
# 127.0.0.1: one pprof per interval, their sample counts adding up to the
# recording kept with -o, contiguous from/until, the token sent and never
# shown, and SIGTERM sending the last interval before an exit 0.
# parallel-safe: its checks are sums within one run (intervals, spool, lost records), which load only delays (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip push-live "needs root for system-wide sampling"; exit 0; }
PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ skip push-live "no python3 for the receiver"; exit 0; }
GO=$(command -v go)

R=$TMP/recv
mkdir -p "$R"
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R" --requests 100 --seconds 60 &
RECV=$!
"$WORKLOADS/ratio" 6 >/dev/null &
RATIO=$!
trap 'kill $RECV $RATIO 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do [ -s "$R/port" ] && break; sleep 0.1; done
PORT=$(cat "$R/port" 2>/dev/null)
[ -n "$PORT" ] || { fail push-live "the receiver did not start"; exit 0; }
NAME='ember.test.cpu{env=ci,host=live}'
TOKEN=tok-$RANDOM-$RANDOM-live
printf '%s\n' "$TOKEN" >"$TMP/token"

"$EMBER" record -a -g -F 99 --push "http://127.0.0.1:$PORT" --name "$NAME" --push-every 1s \
	--bearer-token-file "$TMP/token" -o "$TMP/rec.data" -v >"$TMP/out" 2>"$TMP/err" &
pid=$!
sleep 0.5
tr '\0' ' ' <"/proc/$pid/cmdline" >"$TMP/cmdline" 2>/dev/null
# Three intervals sent (a bounded wait: a loaded machine is slow), then SIGTERM.
for _ in $(seq 200); do [ -e "$R/req-2.path" ] && break; sleep 0.1; done
sleep 0.4
kill -TERM $pid
wait $pid
rc=$?
sleep 0.3
n=$(ls "$R"/req-*.path 2>/dev/null | wc -l)
sent=$(grep -c ' bytes$' "$TMP/out")
check "record --push ... SIGTERM: exit 0 ($rc), a request per interval with samples ($n requests, $sent intervals sent), 3 or more" \
	test "$rc" = 0 -a "$n" = "$sent" -a "$n" -ge 3

# The queries: name, format, and the intervals -v printed contiguous, the
# requests being those with samples (one with none, which a stalled
# recorder on a loaded machine can leave, is printed "not sent").
"$PY" - "$R" "$n" "$NAME" "$TMP/out" >"$TMP/q" <<'EOF'
import re, sys, urllib.parse as u
d, n, name, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
bad = []
sent = []
for i in range(n):
    q = u.parse_qs(u.urlsplit(open("%s/req-%d.path" % (d, i)).read().strip()).query)
    f, t = int(q["from"][0]), int(q["until"][0])
    if q["name"][0] != name or q["format"][0] != "pprof" or not f < t:
        bad.append("request %d: %s" % (i, q))
    sent.append((f, t))
printed, with_samples = [], []
for line in open(out):
    m = re.match(r"(\d+)-(\d+): (\d+) samples, (\d+) bytes( \(not sent\))?$", line)
    if m:
        printed.append((int(m[1]), int(m[2])))
        if not m[5]:
            with_samples.append(printed[-1])
for (f0, t0), (f1, t1) in zip(printed, printed[1:]):
    if f1 != t0:
        bad.append("an interval from %d after one until %d" % (f1, t0))
# Sorted: a profile retried later arrives out of order.
if sorted(sent) != sorted(with_samples):
    bad.append("requests %s, intervals with samples %s" % (sorted(sent), with_samples))
print("; ".join(bad) or "ok")
EOF
check "each query: the name, format=pprof, from < until; the intervals printed each from the last until, those with samples sent: $(head -c 300 "$TMP/q")" \
	test "$(cat "$TMP/q")" = ok
auth=$(grep -lx "Authorization: Bearer $TOKEN" "$R"/req-*.headers 2>/dev/null | wc -l)
check "every request carries the bearer token ($auth of $n)" test "$auth" = "$n"
check "the token is in no output and not on the command line ($(cat "$TMP/cmdline"))" \
	test -s "$TMP/cmdline" -a -z "$(cat "$TMP/out" "$TMP/err" "$TMP/cmdline" | grep -F "$TOKEN")"

# Each sample a line (report's header rounds to 1K).
want=$("$EMBER" script -i "$TMP/rec.data" -F tid,time 2>/dev/null | wc -l)
verbose=$(awk '/ bytes$/ { n += $2 } END { print n + 0 }' "$TMP/out")
if [ -z "$GO" ]; then
	skip "go tool pprof reads the bodies" "no go (Debian golang-go)"
	exit 0
fi
total=0 decoded=0
for ((i = 0; i < n; i++)); do
	c=$("$GO" tool pprof -raw "$R/req-$i.body" 2>/dev/null | awk '/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0 } s && /^ *[0-9]+ / { n += $1 } END { print n + 0 }')
	[ "$c" -gt 0 ] && decoded=$((decoded + 1))
	total=$((total + c))
done
check "go tool pprof decodes every body ($decoded of $n)" test "$decoded" = "$n"
check "the intervals' samples add up to the recording's: $total sent, $want in script -i (-v said $verbose)" \
	test -n "$want" -a "$total" = "$want" -a "$verbose" = "$want"
