#!/usr/bin/env bash
# push-https.sh - ember push over HTTPS to a stand-in for Pyroscope's
# POST /ingest on 127.0.0.1 (tests/e2e-push-receiver.py --tls) with a
# self-signed certificate made here: taken byte for byte with --cacert
# naming it; refused with one clear line and exit 1 when the certificate
# is not trusted; an unreadable --cacert file is one line, exit 2.
# parallel-safe: records nothing and checks nothing that load changes (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"

PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ skip push-https "no python3 for the receiver"; exit 0; }
command -v openssl >/dev/null || { skip push-https "no openssl to make a certificate"; exit 0; }

# A certificate for 127.0.0.1, valid for a day.
if ! openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
	>"$TMP/openssl.log" 2>&1; then
	skip push-https "openssl req failed: $(head -c 200 "$TMP/openssl.log")"
	exit 0
fi
R=$TMP/recv
mkdir -p "$R"
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R" --requests 1 --seconds 30 \
	--tls "$TMP/cert.pem" "$TMP/key.pem" &
RECV=$!
trap 'kill $RECV 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do [ -s "$R/port" ] && break; sleep 0.1; done
PORT=$(cat "$R/port" 2>/dev/null)
[ -n "$PORT" ] || { fail push-https "the receiver did not start"; exit 0; }
URL=https://127.0.0.1:$PORT
NAME='ember.test.cpu{env=ci}'
# A profile to send as it is: the bytes are what matters here.
head -c 3000 /dev/urandom | gzip >"$TMP/p.pb.gz"

# one_line_exit WANT RC FILE PATTERN: exit status WANT, one "ember push:" line matching.
one_line_exit() {
	[ "$2" = "$1" ] && [ "$(wc -l <"$3")" = 1 ] && grep -q "^ember push: .*$4" "$3"
}

# Not trusted (the system's CAs do not know it): refused before any body.
"$EMBER" push --url "$URL" --name "$NAME" --retries 0 "$TMP/p.pb.gz" >"$TMP/0.out" 2>"$TMP/0.err"
rc=$?
check "an untrusted certificate: exit 1 ($rc), one line: $(head -1 "$TMP/0.err")" \
	one_line_exit 1 "$rc" "$TMP/0.err" "certificate"
check "nothing was taken from the untrusted attempt" test ! -e "$R/req-0.path"

# Trusted with --cacert: sent byte for byte.
"$EMBER" push --url "$URL" --name "$NAME" --cacert "$TMP/cert.pem" --retries 0 "$TMP/p.pb.gz" \
	>"$TMP/1.out" 2>"$TMP/1.err"
rc=$?
check "--cacert the server's certificate: exit 0 ($rc: $(head -c 200 "$TMP/1.err"))" test "$rc" = 0
check "the body arrived over TLS byte for byte, at /ingest with format=pprof" \
	eval 'cmp -s "$TMP/p.pb.gz" "$R/req-0.body" && grep -q "^/ingest?.*format=pprof" "$R/req-0.path"'
wait $RECV 2>/dev/null

"$EMBER" push --url "$URL" --name "$NAME" --cacert "$TMP/none.pem" "$TMP/p.pb.gz" \
	>"$TMP/2.out" 2>"$TMP/2.err"
rc=$?
check "an unreadable --cacert: exit 2 ($rc), one line naming it: $(head -1 "$TMP/2.err")" \
	one_line_exit 2 "$rc" "$TMP/2.err" "$TMP/none.pem"
