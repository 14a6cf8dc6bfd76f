#!/usr/bin/env bash
# tests/e2e/bio-replay-limits.sh - ember bio --replay on plans written by
# hand (the layout in block/btreplay/planfile.c): an I/O of
# 4 GiB + 4 KiB, more than one read or write moves, is refused naming the
# entry, nothing written (it once wrote 4096 bytes and counted 4294971392);
# and a replay of reads 50 ms apart over 10 s, stopped by SIGINT, SIGTERM
# or SIGHUP, prints what it replayed and ends by that signal.
# parallel-safe: its own loop devices; checks messages and counts that load does not change (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

# plan FILE NR_SECTOR COUNT DIR: one stream (CPU 0) of COUNT I/Os of
# NR_SECTOR sectors each, DIR (R or W), 50 ms apart at sectors 0, 8, ...,
# recorded on device 254:254 (no device here).
plan() {
	python3 - "$@" <<'EOF'
import struct, sys
path, nr, count, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
b = b"EMBRPLAN" + struct.pack("<IIIIQQQ", 1, 48, 1, 1, count, 0, 0)
b += struct.pack("<I", 254 << 20 | 254) + struct.pack("<IIQ", 0, 0, count)
for i in range(count):
    b += struct.pack("<QQIHcB", i * 50000000, i * 8, nr, 0, d.encode(), 0)
open(path, "wb").write(b)
EOF
}

command -v python3 >/dev/null || { skip "bio-replay-limits" "python3 is missing"; exit 0; }
plan "$TMP/big.plan" $(( (4 << 30 | 4096) / 512 )) 1 W
plan "$TMP/max.plan" $(( 0x7ffff000 / 512 )) 1 W

# Refused when read, before any device: one line naming the entry.
"$EMBER" bio --plan "$TMP/big.plan" --save-plan "$TMP/out.plan" >"$TMP/big.out" 2>&1
rc=$?
check "a 4 GiB + 4 KiB I/O in a plan: exit 1, one line naming it ($(head -1 "$TMP/big.out"))" \
	eval 'test $rc = 1 && test "$(wc -l <"$TMP/big.out")" = 1 &&
	      grep -q "big.plan: I/O 1 of CPU 0 at offset 68: its size, 4294971392 bytes, is over" "$TMP/big.out"'
"$EMBER" bio --plan "$TMP/max.plan" --save-plan "$TMP/out.plan" >"$TMP/max.out" 2>&1
check "an I/O of 2 GiB - 4 KiB, the most one write moves, is read ($(head -1 "$TMP/max.out"))" \
	grep -q "^plan: wrote 1 I/Os (0 reads, 1 writes)" "$TMP/max.out"

need_root || { skip "bio-replay-limits: replays" "needs root for losetup"; exit 0; }
command -v losetup >/dev/null || { skip "bio-replay-limits: replays" "no losetup"; exit 0; }
L= S=
trap '[ -n "$L" ] && losetup -d "$L"; [ -n "$S" ] && losetup -d "$S"; rm -rf "$TMP"' EXIT
truncate -s 8G "$TMP/big.img" && truncate -s 32M "$TMP/small.img" &&
	L=$(losetup -f --show "$TMP/big.img") && S=$(losetup -f --show "$TMP/small.img") ||
	{ skip "bio-replay-limits: replays" "losetup failed"; exit 0; }

# Onto an 8 GiB device the write fits; it is still refused, and nothing
# is written (the sparse file gains no blocks).
used=$(du -k "$TMP/big.img" | cut -f1)
"$EMBER" bio --plan "$TMP/big.plan" --replay "$L" -W >"$TMP/bigw.out" 2>&1
rc=$?
check "--replay -W of the 4 GiB + 4 KiB write: refused, exit 1 ($rc: $(tail -1 "$TMP/bigw.out"))" \
	eval 'test $rc = 1 && grep -q "I/O 1 of CPU 0 at offset 68: its size" "$TMP/bigw.out" &&
	      ! grep -q "^replayed" "$TMP/bigw.out"'
check "--replay -W of the 4 GiB + 4 KiB write: nothing written ($used KiB used before, $(du -k "$TMP/big.img" | cut -f1) after)" \
	test "$(du -k "$TMP/big.img" | cut -f1)" = "$used"

# 200 reads of 4 KiB, 50 ms apart: 10 s of replay, stopped after about 1.
plan "$TMP/slow.plan" 8 200 R
for sig in INT TERM HUP; do
	num=$(kill -l "$sig")
	"$EMBER" bio --plan "$TMP/slow.plan" --replay "$S" >"$TMP/$sig.out" 2>"$TMP/$sig.err" &
	pid=$!
	for i in $(seq 1 100); do
		grep -q '^replaying' "$TMP/$sig.out" 2>/dev/null && break
		sleep 0.05
	done
	sleep 1
	kill -"$sig" $pid
	wait $pid
	rc=$?
	n=$(sed -n 's/^replayed: \([0-9]*\) I\/Os.*/\1/p' "$TMP/$sig.out")
	check "replay stopped by SIG$sig: the totals printed, some but not all of 200 reads (${n:-none})" \
		eval 'test -n "$n" && test "$n" -gt 0 -a "$n" -lt 200'
	check "replay stopped by SIG$sig: says so ($(tail -1 "$TMP/$sig.err"))" \
		grep -q "stopped by SIG$sig after $n of the plan's 200 I/Os" "$TMP/$sig.err"
	check "replay stopped by SIG$sig: ends by it ($rc)" test "$rc" = $((128 + num))
done
