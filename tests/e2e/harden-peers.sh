#!/usr/bin/env bash
# tests/e2e/harden-peers.sh - text from a peer reaches the terminal
# escaped: a fake backend whose HTTP reason phrase and body carry an
# escape sequence (push), and a fake collector whose ERR answer does
# (record -o tcp://).  ember's messages name the text with \x1b, and no
# ESC byte is printed.
# parallel-safe: one process against a fake peer on 127.0.0.1 (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
PEER=$TOP/tests/e2e-fake-peer.py
need_root || { skip harden-peers "needs root to record"; exit 0; }

# peer KIND: starts the fake peer; its port in $PORT.
peer() {
	rm -f "$TMP/port"
	python3 "$PEER" "$TMP/port" "$1" &
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	PORT=$(cat "$TMP/port")
}
# escaped NAME FILE: FILE holds the peer's text escaped, and no ESC byte.
escaped() {
	if grep -q $'\x1b' "$2"; then fail "$1" "an ESC byte reached the output: $(cat -v "$2" | head -c 300)"
	elif grep -qF '\x1b[31m' "$2"; then pass "$1 ($(head -c 200 "$2"))"
	else fail "$1" "the peer's text is not shown escaped: $(cat -v "$2" | head -c 300)"; fi
}

peer http
"$EMBER" record -q -o "$TMP/p.data" -- true >/dev/null 2>&1
timeout 30 "$EMBER" push -i "$TMP/p.data" --url "http://127.0.0.1:$PORT" --name 'a.cpu' \
	--retries 0 >"$TMP/push.out" 2>"$TMP/push.err"
wait
escaped push-reason-phrase-escaped "$TMP/push.err"

peer ember
timeout 30 "$EMBER" record -o "tcp://127.0.0.1:$PORT" -- true >"$TMP/rec.out" 2>"$TMP/rec.err"
wait
escaped collector-answer-escaped "$TMP/rec.err"
