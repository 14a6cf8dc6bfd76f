#!/usr/bin/env bash
# push-upload.sh - ember push of one profile to a stand-in for Pyroscope's
# POST /ingest on 127.0.0.1 (tests/e2e-push-receiver.py, one receiver
# answering a list of statuses in turn): the query parameters, bodies that
# go tool pprof decodes with the recording's sample count, credentials sent
# and never shown, retries after HTTP 500, one clear line for each failure.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip push-upload "needs root to record"; exit 0; }
# Debian's python3 (a pyenv shim on PATH takes a second to start).
PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ skip push-upload "no python3 for the receiver"; exit 0; }
GO=$(command -v go)

R=$TMP/recv
mkdir -p "$R"
# Requests 0-2 taken, 3-4 refused with 500 then 5 taken, 6-7 refused, 8 a 401.
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R" --requests 9 --seconds 60 \
	--statuses 200,200,200,500,500,200,500,500,401 &
RECV=$!
trap 'kill $RECV 2>/dev/null; rm -rf "$TMP"' EXIT
"$EMBER" record -F 999 -g -o "$TMP/r.data" -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
for _ in $(seq 100); do [ -s "$R/port" ] && break; sleep 0.1; done
PORT=$(cat "$R/port" 2>/dev/null)
[ -n "$PORT" ] || { fail push-upload "the receiver did not start"; exit 0; }
URL=http://127.0.0.1:$PORT
NAME='ember.test.cpu{env=ci,host=h1}'
TOKEN=tok-$RANDOM-$RANDOM-secret
printf '%s\n' "$TOKEN" >"$TMP/token"

# query_of N KEY: one parameter of request N, URL-decoded.
query_of() {
	"$PY" -c 'import sys, urllib.parse as u
q = u.parse_qs(u.urlsplit(open(sys.argv[1]).read().strip()).query)
print(q.get(sys.argv[2], [""])[0])' "$R/req-$1.path" "$2"
}
# pprof_samples FILE: the sum of the samples/count column, by go tool pprof.
pprof_samples() {
	"$GO" tool pprof -raw "$1" 2>/dev/null | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+ / { n += $1 } END { print n + 0 }'
}
# one_line FILE [PATTERN]: it holds exactly one line, an "ember push:" one
# (matching the grep pattern).
one_line() { [ "$(wc -l <"$1")" = 1 ] && grep -q "^ember push: .*${2:-}" "$1"; }

# one_line_exit WANT RC FILE PATTERN: exit status WANT and one_line.
one_line_exit() { [ "$2" = "$1" ] && one_line "$3" "$4"; }

# 0: a recording, exported to pprof, with a bearer token.
"$EMBER" push --url "$URL" --name "$NAME" --bearer-token-file "$TMP/token" -i "$TMP/r.data" \
	>"$TMP/0.out" 2>"$TMP/0.err"
rc=$?
check "push -i recording: exit 0 ($rc), one line saying it was sent" \
	test "$rc" = 0 -a "$(grep -c '^sent ' "$TMP/0.out")" = 1
now=$(date +%s)
from=$(query_of 0 from) until=$(query_of 0 until)
check "the query: /ingest, name as given ($(query_of 0 name)), format=pprof, from $from < until $until <= now" \
	test "$(query_of 0 name)" = "$NAME" -a "$(query_of 0 format)" = pprof -a \
	"$from" -lt "$until" -a "$until" -le "$now" -a "$(cut -d'?' -f1 "$R/req-0.path")" = /ingest
check "the bearer token went in the Authorization header" \
	grep -qx "Authorization: Bearer $TOKEN" "$R/req-0.headers"
# Each sample a line (report's header rounds to 1K).
want=$("$EMBER" script -i "$TMP/r.data" -F tid,time 2>/dev/null | wc -l)
if [ -n "$GO" ]; then
	got=$(pprof_samples "$R/req-0.body")
	check "go tool pprof decodes the body: $got samples, script -i has $want" \
		test -n "$want" -a "$got" = "$want"
else
	skip "go tool pprof decodes the body" "no go (Debian golang-go)"
fi

# 1: folded stacks with --sample-rate and basic auth.
"$EMBER" collapse -i "$TMP/r.data" >"$TMP/r.folded" 2>/dev/null
"$EMBER" push --url "$URL/" --name "$NAME" --basic-auth "12345:$TMP/token" --sample-rate 999 \
	"$TMP/r.folded" >"$TMP/1.out" 2>"$TMP/1.err"
rc=$?
basic=$(printf '12345:%s' "$TOKEN" | base64 -w0)
check "folded stacks: exit 0 ($rc), format=folded, sampleRate=999, the body as the file" \
	test "$rc" = 0 -a "$(query_of 1 format)" = folded -a "$(query_of 1 sampleRate)" = 999 \
	-a -s "$TMP/r.folded" -a "$(cmp -s "$TMP/r.folded" "$R/req-1.body" && echo same)" = same
check "basic auth: the Authorization header holds USER:TOKEN" \
	grep -qx "Authorization: Basic $basic" "$R/req-1.headers"

# 2: a .pb.gz is sent as it is.
cp "$R/req-0.body" "$TMP/p.pb.gz"
"$EMBER" push --url "$URL" --name "$NAME" "$TMP/p.pb.gz" >"$TMP/2.out" 2>"$TMP/2.err"
check "a .pb.gz is sent byte for byte, format=pprof" \
	cmp -s "$TMP/p.pb.gz" "$R/req-2.body"

# 3-5: two HTTP 500s, then taken: retried, exit 0.  Meanwhile ember waits
# between attempts, and its command line is read.
"$EMBER" push --url "$URL" --name "$NAME" --bearer-token-file "$TMP/token" "$TMP/p.pb.gz" \
	>"$TMP/3.out" 2>"$TMP/3.err" &
pid=$!
for _ in $(seq 50); do [ -e "$R/req-3.path" ] && break; sleep 0.1; done
tr '\0' ' ' <"/proc/$pid/cmdline" >"$TMP/cmdline" 2>/dev/null
wait $pid
rc=$?
check "HTTP 500 twice, then 200: retried (requests 3-5 came: $(ls "$R"/req-[345].path 2>/dev/null | wc -l)), exit 0 ($rc)" \
	test "$rc" = 0 -a -e "$R/req-5.path"
check "the token is in no output and not on ember's command line ($(cat "$TMP/cmdline"))" \
	test -s "$TMP/cmdline" -a -z "$(cat "$TMP"/[0-3].out "$TMP"/[0-3].err "$TMP/cmdline" | grep -F "$TOKEN")"

# 6-7: HTTP 500 with --retries 1: one line with the status and the message.
"$EMBER" push --url "$URL" --name "$NAME" --retries 1 "$TMP/p.pb.gz" >"$TMP/6.out" 2>"$TMP/6.err"
rc=$?
ok=no
[ "$rc" = 1 ] && [ -e "$R/req-7.path" ] &&
	one_line "$TMP/6.err" 'HTTP 500 Internal Server Error from .*: storage unavailable: try later (2 attempts)$' && ok=yes
check "HTTP 500 after --retries 1: exit 1 ($rc), two requests, one line: $(head -1 "$TMP/6.err")" \
	test $ok = yes

# 8: a wrong token (401) is not retried.
"$EMBER" push --url "$URL" --name "$NAME" --retries 3 "$TMP/p.pb.gz" >"$TMP/8.out" 2>"$TMP/8.err"
rc=$?
sleep 0.3
ok=no
[ "$rc" = 1 ] && [ -e "$R/req-8.path" ] && [ ! -e "$R/req-9.path" ] && one_line "$TMP/8.err" 'HTTP 401' && ok=yes
check "HTTP 401: exit 1 ($rc), no retry ($(ls "$R"/req-*.path | wc -l) requests in all), one line: $(head -1 "$TMP/8.err")" \
	test $ok = yes
kill $RECV 2>/dev/null
wait $RECV 2>/dev/null

# No server: a refused connection; bad URLs.
"$EMBER" push --url "http://127.0.0.1:1" --name "$NAME" --retries 0 "$TMP/p.pb.gz" \
	>"$TMP/9.out" 2>"$TMP/9.err"
rc=$?
check "a refused connection: exit 1 ($rc), one line: $(head -1 "$TMP/9.err")" \
	one_line_exit 1 "$rc" "$TMP/9.err" "Couldn't connect"
"$EMBER" push --url "ftp://127.0.0.1" --name "$NAME" "$TMP/p.pb.gz" >"$TMP/10.out" 2>"$TMP/10.err"
rc=$?
check "a bad URL: exit 2 ($rc), one line: $(head -1 "$TMP/10.err")" \
	one_line_exit 2 "$rc" "$TMP/10.err" "bad URL"
"$EMBER" push --url "http://u:$TOKEN@127.0.0.1:1" --name "$NAME" "$TMP/p.pb.gz" \
	>"$TMP/11.out" 2>"$TMP/11.err"
rc=$?
grep -qF "$TOKEN" "$TMP/11.err" && echo "the secret shown" >>"$TMP/11.err"
check "credentials in the URL: refused (exit $rc), the secret not shown: $(head -1 "$TMP/11.err")" \
	one_line_exit 2 "$rc" "$TMP/11.err" credentials
"$EMBER" push --url "$URL" --name "$NAME" --bearer-token-file "$TMP/none" "$TMP/p.pb.gz" \
	>"$TMP/12.out" 2>"$TMP/12.err"
rc=$?
check "a missing token file: exit 2 ($rc), one line naming it" \
	one_line_exit 2 "$rc" "$TMP/12.err" "$TMP/none"
