#!/usr/bin/env bash
# tools-execsnoop.sh - ember execsnoop: a shell running /bin/true A B C 20
# times gives 20 lines with RET 0 and those arguments, read from the copy
# of the new image's stack.  Where the kernel's random stack gap leaves an
# untouched page below the strings (about one exec in five), perf's copy
# stops there and the line shows the path and "..."; without the gap
# (setarch -R) every line has its arguments, also with every CPU busy.
# -x shows a failed exec with its error and command line; live and
# offline on the same recording print the same lines.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-execsnoop "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-execsnoop "no tracefs"; exit 0; }

F=$TMP/exec.data
LOOP='for i in $(seq 20); do /bin/true A B C; done'
"$EMBER" execsnoop -o "$F" -- sh -c "$LOOP" >"$TMP/live" 2>"$TMP/live.err"
lines=$(grep -c '^true ' "$TMP/live")
ok=$(awk '$1 == "true" && $4 == 0 && ($5" "$6" "$7" "$8 == "/bin/true A B C" || $5" "$6 == "/bin/true ...")' "$TMP/live" | wc -l)
full=$(grep -c ' 0 /bin/true A B C$' "$TMP/live")
check "20 execs of /bin/true shown ($lines)" test "$lines" = 20
check "each with RET 0 and its arguments or the path ($ok of 20)" test "$ok" = 20
check "arguments read from the new stack for some ($full of 20)" test "$full" -gt 0
shpid=$(awk '$1 == "sh" { print $2; exit }' "$TMP/live")
check "the shell ($shpid) is the parent of each" \
	test "$(awk -v p="$shpid" '$1 == "true" && $3 == p' "$TMP/live" | wc -l)" = 20

"$EMBER" execsnoop -i "$F" >"$TMP/offline" 2>"$TMP/off.err"
check "live and offline print the same lines" cmp -s "$TMP/live" "$TMP/offline"

# Stack randomization off for the shell and what it runs, both CPUs busy.
if command -v setarch >/dev/null; then
	"$WORKLOADS/spin" "$(nproc)" 20 >/dev/null 2>&1 &
	spin=$!
	"$EMBER" execsnoop -- setarch -R sh -c "$LOOP" >"$TMP/norand" 2>&1
	kill "$spin" 2>/dev/null
	wait "$spin" 2>/dev/null
	full=$(awk '$1 == "true" && $4 == 0 && $5" "$6" "$7" "$8 == "/bin/true A B C" && NF == 8' \
		"$TMP/norand" | wc -l)
	check "without the random gap, 20 of 20 with RET 0 and A B C, CPUs busy ($full)" \
		test "$full" = 20
else
	skip "tools-execsnoop without the random gap" "no setarch (util-linux)"
fi

"$EMBER" execsnoop -x -t -- "$WORKLOADS/toolwork" execfail >"$TMP/x" 2>&1
check "-x shows the failed exec with ENOENT and its arguments" \
	grep -Eq '^[0-9.]+ +toolwork +[0-9]+ +[0-9?]+ +-2 /nonexistent-ember/prog ARG1 ARG2$' "$TMP/x"
"$EMBER" execsnoop -- "$WORKLOADS/toolwork" execfail >"$TMP/nox" 2>&1
check "without -x the failed exec is not shown" \
	test "$(grep -c ' -2 ' "$TMP/nox")" = 0

"$EMBER" record --tool execsnoop -q -o "$TMP/rec.data" -- setarch -R /bin/true X Y >/dev/null 2>&1
"$EMBER" execsnoop -i "$TMP/rec.data" >"$TMP/rec" 2>&1
check "record --tool execsnoop makes a file execsnoop reads, with the arguments" \
	grep -q ' 0 /bin/true X Y$' "$TMP/rec"
"$EMBER" record -e cpu-clock -q -o "$TMP/plain.data" -- /bin/true >/dev/null 2>&1
"$EMBER" execsnoop -i "$TMP/plain.data" >"$TMP/plain" 2>&1
check "a recording without the events is refused, naming record --tool" \
	grep -q "record --tool execsnoop" "$TMP/plain"
