#!/usr/bin/env bash
# tools-funccount.sh - ember funccount and record's uprobes: u:libc:malloc
# on a program that mallocs exactly 1000 times after its start-up counts
# at least 1000 for that process; ur: counts the returns; the probes go
# with the tool (nothing in tracefs' uprobe_events); a tracepoint glob
# counts; a missing symbol is a usage error naming the file.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-funccount "needs root for uprobes"; exit 0; }
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	{ skip tools-funccount "no uprobe PMU"; exit 0; }
ensure_tracefs || { skip tools-funccount "no tracefs"; exit 0; }
busy_cpus 60

before=$(cat /sys/kernel/tracing/uprobe_events 2>/dev/null)
F=$TMP/func.data
"$EMBER" funccount -P -o "$F" u:libc:malloc -- "$WORKLOADS/toolwork" malloc 1000 >"$TMP/live" 2>"$TMP/err"
pid=$(awk '$1 == "u:libc:malloc" { print $2 }' "$TMP/live")
n=$(awk '$1 == "u:libc:malloc" { print $3 }' "$TMP/live")
check "u:libc:malloc counts at least 1000 for the process (${n:-none})" test "${n:-0}" -ge 1000
check "... and not many more: start-up and printf ($n)" test "${n:-0}" -lt 1100
"$EMBER" funccount -P -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
check "the uprobes leave nothing in tracefs" test "$(cat /sys/kernel/tracing/uprobe_events 2>/dev/null)" = "$before"

"$EMBER" record -q -e ur:libc:malloc -o "$TMP/ret.data" -- "$WORKLOADS/toolwork" malloc 1000 >/dev/null 2>&1
r=$("$EMBER" funccount -i "$TMP/ret.data" 2>/dev/null | awk '$1 == "ur:libc:malloc" { print $2 }')
check "record -e ur:libc:malloc: the returns counted too (${r:-none})" test "${r:-0}" -ge 1000 -a "${r:-0}" -lt 1100

"$EMBER" record -q --tool funccount -e 'sched:sched_process_e*' -o "$TMP/tp.data" -- /bin/true >/dev/null 2>&1
"$EMBER" funccount -i "$TMP/tp.data" >"$TMP/tp" 2>/dev/null
check "a tracepoint glob counts each match (exec and exit of /bin/true)" \
	sh -c "grep -Eq '^sched:sched_process_exec +1$' '$TMP/tp' && grep -Eq '^sched:sched_process_exit +1$' '$TMP/tp'"

"$EMBER" funccount u:libc:no_such_function_here -- /bin/true >"$TMP/bad" 2>&1
rc=$?
check "a missing symbol is a usage error naming the file (exit $rc)" \
	sh -c "test $rc = 2 && grep -q 'no function .no_such_function_here. in /.*libc' '$TMP/bad'"
"$EMBER" record -e u:/nonexistent/prog:main -- /bin/true >"$TMP/bad2" 2>&1
check "a missing file is a usage error naming it" \
	sh -c "test $? = 2 && grep -q '/nonexistent/prog' '$TMP/bad2'"
idle_cpus
