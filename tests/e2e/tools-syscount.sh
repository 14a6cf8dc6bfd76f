#!/usr/bin/env bash
# tools-syscount.sh - ember syscount: a program that calls getppid exactly
# 12345 times gives exactly 12345 getppid; -L a plausible time (at least
# 50 ns a call); -P the process; live and offline the same; the count
# equals perf script's on the same file; --interval/--count print
# intervals.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-syscount "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-syscount "no tracefs"; exit 0; }
busy_cpus 60

F=$TMP/sys.data
"$EMBER" syscount -L -o "$F" -- "$WORKLOADS/toolwork" getppid 12345 >"$TMP/live" 2>"$TMP/err"
if grep -q lost "$TMP/err"; then
	skip tools-syscount "events lost at the ring: $(head -1 "$TMP/err")"
	exit 0
fi
n=$(awk '$1 == "getppid" { print $2 }' "$TMP/live")
check "getppid counted exactly 12345 times ($n)" test "$n" = 12345
avg=$(awk '$1 == "getppid" { print $4 }' "$TMP/live")
check "-L: each call takes at least 50 ns on average ($avg us)" \
	awk -v a="$avg" 'BEGIN { exit !(a >= 0.05 && a < 1000) }'
"$EMBER" syscount -L -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
if have_perf && perf script -i "$F" -F event,trace >"$TMP/ps" 2>/dev/null; then
	ref=$(grep -c 'raw_syscalls:sys_enter: *NR 110 ' "$TMP/ps")
	check "perf script finds the same getppid entries in the file ($ref)" test "$ref" = "$n"
else
	skip tools-syscount-perf "perf cannot read the file here"
fi
"$EMBER" syscount -P -i "$F" >"$TMP/P" 2>/dev/null
pn=$(awk '$2 == "toolwork" { print $3 }' "$TMP/P")
check "-P: the process made at least the 12345 calls ($pn)" test "${pn:-0}" -ge 12345
"$EMBER" syscount -i "$F" --interval 0.0005 --count 2 >"$TMP/int" 2>/dev/null
check "--interval with --count 2 prints two intervals" test "$(grep -c '^\[' "$TMP/int")" = 2
"$EMBER" syscount --count 2 -i "$F" >/dev/null 2>&1
check "--count without --interval is a usage error" test $? = 2
idle_cpus
