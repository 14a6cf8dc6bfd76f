#!/usr/bin/env bash
# tools-exitsnoop.sh - ember exitsnoop: a process killed by SIGKILL shows
# the signal, one that exits 3 its code, a clean one 0, each with its
# parent and an age from its fork; live and offline print the same.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-exitsnoop "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-exitsnoop "no tracefs"; exit 0; }
busy_cpus 60

F=$TMP/exit.data
"$EMBER" exitsnoop -o "$F" -- sh -c 'sleep 10 & echo $! >'"$TMP/pid"'; sleep 0.3; kill -9 $!;
	(exit 3); /bin/true' >"$TMP/live" 2>"$TMP/err"
sh=$(awk '$1 == "sh" && $3 == "?" { print $2 }' "$TMP/live")
killed=$(cat "$TMP/pid")
check "the sleep killed by SIGKILL shows the signal" \
	grep -Eq "^sleep +$killed +$sh +$killed +0\.[0-9]+ +signal 9 \(KILL\)$" "$TMP/live"
check "a subshell's exit 3 shows its code" grep -Eq "^sh +[0-9]+ +$sh .* code 3$" "$TMP/live"
check "/bin/true exits 0" grep -Eq "^true +[0-9]+ +$sh .* 0$" "$TMP/live"
"$EMBER" exitsnoop -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" exitsnoop -x -i "$F" >"$TMP/x" 2>/dev/null
check "-x leaves the clean exits out" test "$(awk 'NR > 1 && $NF == "0"' "$TMP/x" | wc -l)" = 0 -a \
	"$(awk 'NR > 1' "$TMP/x" | wc -l)" -ge 2
idle_cpus
