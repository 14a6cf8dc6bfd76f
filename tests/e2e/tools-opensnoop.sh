#!/usr/bin/env bash
# tools-opensnoop.sh - ember opensnoop: a program that opens an existing
# file 10 times and a missing one 5 times gives 10 lines with an FD and
# ERR 0 and 5 with FD -1 and ERR 2, each with its path; -x keeps the
# failed ones, -n filters by name; live and offline print the same.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-opensnoop "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-opensnoop "no tracefs"; exit 0; }
busy_cpus 60

F=$TMP/open.data
"$EMBER" opensnoop -o "$F" -- "$WORKLOADS/toolwork" open 10 5 >"$TMP/live" 2>"$TMP/err"
ok=$(awk '$2 == "toolwork" && $3 >= 0 && $4 == 0 && $5 == "/proc/self/stat"' "$TMP/live" | wc -l)
bad=$(awk '$2 == "toolwork" && $3 == -1 && $4 == 2 && $5 == "/nonexistent-ember-toolwork"' "$TMP/live" | wc -l)
check "10 opens of /proc/self/stat with an FD ($ok)" test "$ok" = 10
check "5 opens of the missing file with ERR 2 ($bad)" test "$bad" = 5

"$EMBER" opensnoop -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same lines" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" opensnoop -x -i "$F" >"$TMP/x" 2>/dev/null
check "-x: only the 5 failed ones" test "$(awk 'NR > 1' "$TMP/x" | wc -l)" = 5 -a \
	"$(awk 'NR > 1 && $4 == 2' "$TMP/x" | wc -l)" = 5
"$EMBER" opensnoop -n nosuchcomm -i "$F" >"$TMP/n" 2>/dev/null
check "-n NAME keeps only that name" test ! -s "$TMP/n"
"$EMBER" opensnoop -n toolw -i "$F" >"$TMP/n2" 2>/dev/null
check "-n toolw keeps toolwork's lines" \
	test "$(awk 'NR > 1 && $2 != "toolwork"' "$TMP/n2" | wc -l)" = 0 -a -s "$TMP/n2"
idle_cpus
