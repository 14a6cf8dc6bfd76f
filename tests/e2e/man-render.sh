#!/usr/bin/env bash
# tests/e2e/man-render.sh - every man page of docs/man renders with man -l
# without groff warnings and without running text joined into one word (an
# alternating font macro such as .IR given a sentence: "Thedefaultis...").
# parallel-safe: reads files only (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
MAN=$(cd "$(dirname "$0")/../../docs/man" && pwd)
CHECK=$(cd "$(dirname "$0")/.." && pwd)/e2e-man-check.py

if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
	skip man-render "man or groff is not installed (make deps installs man-db and groff-base)"
	exit 0
fi
for page in "$MAN"/*.1; do
	name=$(basename "$page" .1)
	# A wide page: no line breaks inside the runs the check looks for.
	if ! MANWIDTH=400 man -l "$page" >"$TMP/$name.txt" 2>"$TMP/$name.err"; then
		fail "$name-renders" "man -l exit $?: $(head -c 200 "$TMP/$name.err")"; continue
	fi
	groff -man -Tutf8 -ww -z "$page" 2>"$TMP/$name.warn"
	if [ -s "$TMP/$name.warn" ]; then fail "$name-no-groff-warnings" "$(head -3 "$TMP/$name.warn" | tr '\n' ' ')"
	else pass "$name-no-groff-warnings"; fi
	if out=$(python3 "$CHECK" "$page" "$TMP/$name.txt"); then pass "$name-no-text-run-together"
	else fail "$name-no-text-run-together" "$(head -3 <<<"$out" | tr '\n' ' ')"; fi
done
