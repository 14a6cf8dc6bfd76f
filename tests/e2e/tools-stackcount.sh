#!/usr/bin/env bash
# tools-stackcount.sh - ember stackcount: u:libc:malloc on a program that
# mallocs exactly 1000 times from do_malloc (built with frame pointers)
# gives the stack malloc <- do_malloc <- main with count 1000, in BCC's
# layout, folded and in a flame graph; live and offline the same.  -U
# and -K keep a stack's user or kernel frames (an exec's: _start, and the
# kernel's execve path).
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-stackcount "needs root for uprobes"; exit 0; }
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	{ skip tools-stackcount "no uprobe PMU"; exit 0; }
busy_cpus 60

F=$TMP/stack.data
"$EMBER" stackcount -o "$F" u:libc:malloc -- "$WORKLOADS/toolwork" malloc 1000 >"$TMP/live" 2>"$TMP/err"
n=$(awk 'a == "malloc" && b == "do_malloc" && $1 == "main" { m = 1 }
	 m && $1 ~ /^[0-9]+$/ { print $1; exit }
	 { a = b; b = $1 }' "$TMP/live")
check "BCC's layout: malloc, do_malloc, main, the process, then the count 1000 (${n:-none})" \
	test "$n" = 1000
"$EMBER" stackcount -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" stackcount -f -i "$F" >"$TMP/folded" 2>/dev/null
check "--folded: process;...;main;do_malloc;malloc 1000" \
	grep -Eq '^toolwork \[[0-9]+\];.*main;do_malloc;malloc 1000$' "$TMP/folded"
"$EMBER" stackcount --flame "$TMP/s.svg" -i "$F" >/dev/null 2>&1
check "--flame: an SVG with do_malloc in it" grep -q 'do_malloc' "$TMP/s.svg"
"$EMBER" record -q -e u:libc:malloc -o "$TMP/nog.data" -- /bin/true >/dev/null 2>&1
"$EMBER" stackcount -i "$TMP/nog.data" >"$TMP/nog" 2>&1
check "a recording without call chains is refused, naming record --tool" \
	grep -q "record --tool stackcount" "$TMP/nog"
"$EMBER" stackcount -f -o "$TMP/exec.data" t:sched:sched_process_exec -- /bin/true >"$TMP/both" 2>/dev/null
"$EMBER" stackcount -f -U -i "$TMP/exec.data" >"$TMP/user" 2>/dev/null
"$EMBER" stackcount -f -K -i "$TMP/exec.data" >"$TMP/kern" 2>/dev/null
check "the exec's stack has user and kernel frames" \
	grep -q '^true \[[0-9]*\];_start;.*_\[k\];.*sched_process_exec_\[k\] 1$' "$TMP/both"
check "-U: its user frames only" grep -q '^true \[[0-9]*\];_start 1$' "$TMP/user"
check "-K: its kernel frames only" \
	grep -Eq '^true \[[0-9]+\](;[^;]+_\[k\])+ 1$' "$TMP/kern"
"$EMBER" stackcount -U -K -i "$TMP/exec.data" >/dev/null 2>"$TMP/uk"; rc=$?
check "-U with -K: exit 2, one line" eval 'test $rc -eq 2 && test "$(wc -l <"$TMP/uk")" -eq 1'
idle_cpus
