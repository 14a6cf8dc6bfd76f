#!/usr/bin/env bash
# report-heap.sh - frames in memory without a file ([heap], //anon...) are
# shown at their addresses, as perf shows them, whatever offset the map
# was recorded with.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"
# Code run from the heap of a process that was running before the
# recording: its [heap] map comes from /proc/PID/maps with offset 0, and
# frames there are shown at their addresses, as perf shows them ([heap]
# is address-for-address memory), not as offsets into the map (seen in a
# system-wide CI run: "f56d0 [unknown] ([heap])" where perf printed
# 55ebd8a586d0).  heapcode says where its loop sits: 6 bytes.
"$WORKLOADS/heapcode" 3 >"$TMP/heap.out" &
hpid=$!
for _ in $(seq 50); do [ -s "$TMP/heap.out" ] && break; sleep 0.05; done
"$EMBER" record -q -F 999 -g -p "$hpid" --duration 0.5 -o "$TMP/heap.data" >/dev/null 2>&1
kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
code=$(grep -o '0x[0-9a-f]*' "$TMP/heap.out")
"$EMBER" script -i "$TMP/heap.data" 2>/dev/null | awk '/\(\[heap\]\)$/ { print $1 }' |
	python3 -c 'import sys
lo = int(sys.argv[1], 16)
a = [int(x, 16) for x in sys.stdin.read().split()]
print(len(a), sum(lo <= x < lo + 6 for x in a))' "$code" >"$TMP/heap.n"
read -r nheap nok <"$TMP/heap.n"
check "[heap] frames at their addresses: $nok of $nheap within heapcode's loop at $code" \
	test "${nheap:-0}" -gt 100 -a "$nok" = "$nheap"
