#!/usr/bin/env bash
# tools-cpudist.sh - ember cpudist: a thread that runs 10 ms then sleeps
# 10 ms, 50 times, has its on-CPU mode in the 8192-16383 us bucket and
# (-O) its off-CPU mode there too.  It runs SCHED_FIFO so that no other
# task on this shared machine cuts its runs short.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-cpudist "needs root for tracepoints"; exit 0; }
command -v chrt >/dev/null || { skip tools-cpudist "no chrt (util-linux)"; exit 0; }

# mode FILE: the low end of the fullest bucket of the first histogram.
mode() {
	awk '$2 == "->" && $5 > best { best = $5; lo = $1 } END { print lo }' "$1"
}

F=$TMP/dist.data
"$EMBER" cpudist -o "$F" -- chrt -f 1 "$WORKLOADS/toolwork" runsleep 50 10 >"$TMP/live" 2>"$TMP/err"
check "the on-CPU mode is the 8192-16383 us bucket ($(mode "$TMP/live"))" test "$(mode "$TMP/live")" = 8192
"$EMBER" cpudist -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" cpudist -O -i "$F" >"$TMP/off" 2>/dev/null
check "-O: the off-CPU mode is the 8192-16383 us bucket ($(mode "$TMP/off"))" \
	test "$(mode "$TMP/off")" = 8192
"$EMBER" cpudist -m -P -i "$F" >"$TMP/P" 2>/dev/null
check "-P -m: a histogram for the workload, in msecs, mode 8-15" \
	sh -c "grep -q '^pid = [0-9]* toolwork' '$TMP/P' && grep -q msecs '$TMP/P' && \
		awk '/toolwork/ { on = 1 } on && \$2 == \"->\" && \$5 > b { b = \$5; lo = \$1 } END { exit lo != 8 }' '$TMP/P'"
