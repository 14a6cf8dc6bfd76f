#!/usr/bin/env bash
# bio-replay.sh - ember bio --replay (btreplay) and --save-plan/--plan
# (btrecord): a pattern known by construction (tests/workloads/biopattern:
# two threads pinned one per CPU, 500 direct I/Os at distinct random
# offsets, 4-64 KiB, reads and writes mixed) recorded on loop device A and
# replayed onto loop device B while ember records B; perf script reads
# both recordings.  Then the safety checks: the recorded device, a mounted
# one, one holding ext4, I/O past a device's end, a file that is no device.
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"

B= C= D= MNT=
bio_more_cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	for l in $B $C $D; do losetup -d "$l" 2>/dev/null; done
}
bio_setup bio-replay
have_perf || { skip "bio-replay" "perf is missing: it is the reference reader"; exit 0; }

new_loop() {   # new_loop NAME SIZE: a loop device on a file in $TMP
	truncate -s "$2" "$TMP/$1.img"
	losetup -f --show "$TMP/$1.img"
}
B=$(new_loop b 32M) && C=$(new_loop c 32M) && D=$(new_loop d 1M) ||
	{ skip "bio-replay" "losetup failed"; exit 0; }
command -v udevadm >/dev/null && udevadm settle 2>/dev/null
dd if=/dev/urandom of="$B" bs=1M count=32 oflag=direct 2>/dev/null
dd if=/dev/urandom of="$D" bs=1M count=1 oflag=direct 2>/dev/null
sum() { md5sum <"$1" | cut -d' ' -f1; }

# queues FILE: the block_bio_queue events of a recording as perf script
# reads them: "CPU TIME SECTOR SECTORS R|W", without the replayer's main
# thread (its libblkid probe of the target reads a few pages).
queues() {
	perf script -i "$1" -F pid,tid,cpu,time,event,trace 2>/dev/null | awk '
		/block_bio_queue:/ { split($1, id, "/"); if (id[1] == id[2] && skip_main) next
			cpu = $2; gsub(/[][]/, "", cpu); t = $3; sub(":", "", t)
			d = $6 ~ /W/ ? "W" : ($6 ~ /R/ ? "R" : "")
			if (d != "") print cpu, t, $7, $9, d }' skip_main="${2:-0}"
}

# compare A B: one line, "N_A N_B SAME ORDERED RATIO": whether the multisets
# of (sector, size, direction) are equal, whether B (in time order, as
# perf script prints it) queued each of A's CPUs' I/Os in A's order, and
# B's span (first to last queue) over A's.
compare() {
	awk 'FNR == NR { k = $3 " " $4 " " $5; a[k]++; na++; cpu[k] = $1; seq[$1] = seq[$1] "," k
		if (na == 1 || $2 < a0) a0 = $2; if (na == 1 || $2 > a1) a1 = $2; next }
	{ k = $3 " " $4 " " $5; b[k]++; nb++; got[cpu[k]] = got[cpu[k]] "," k
		if (nb == 1 || $2 < b0) b0 = $2; if (nb == 1 || $2 > b1) b1 = $2 }
	END { same = na == nb; for (k in a) if (a[k] != b[k]) same = 0
		ordered = 1; for (c in seq) if (seq[c] != got[c]) ordered = 0
		printf "%d %d %d %d %.3f\n", na, nb, same, ordered, (a1 > a0 ? (b1 - b0) / (a1 - a0) : 0) }' "$1" "$2"
}

# The pattern on A: every I/O of the workload's list queued once, each
# thread's in its order on its own CPU.
RA=$TMP/a.data
"$EMBER" record --block -d "$LOOP" -o "$RA" -- "$WORKLOADS/biopattern" "$LOOP" 250 1500 7 \
	>"$TMP/truth" 2>"$TMP/rec.err" || { fail "record A" "$(tail -2 "$TMP/rec.err")"; exit 0; }
queues "$RA" >"$TMP/qa"
awk '{ print $1, NR, $2, $3 / 512, $4 }' "$TMP/truth" >"$TMP/qtruth"
read -r na nt same ordered ratio < <(compare "$TMP/qtruth" "$TMP/qa")
check "record A: the 500 I/Os of the pattern, each thread's in order ($nt queued, same $same, ordered $ordered)" \
	test "$na" = 500 -a "$nt" = 500 -a "$same" = 1 -a "$ordered" = 1

# --save-plan, then --plan into --save-plan again: the same bytes.
"$EMBER" bio -i "$RA" -d "$LOOP" --save-plan "$TMP/a.plan" >"$TMP/save.out" 2>&1
"$EMBER" bio --plan "$TMP/a.plan" --save-plan "$TMP/a2.plan" >/dev/null 2>&1
check "--save-plan: 500 I/Os on 2 CPUs ($(head -1 "$TMP/save.out"))" \
	grep -q '^plan: wrote 500 I/Os .* queued on 2 CPUs' "$TMP/save.out"
check "--plan then --save-plan: the same plan file, byte for byte" cmp -s "$TMP/a.plan" "$TMP/a2.plan"

# Without -W: reads only, and B is not written.
before=$(sum "$B")
"$EMBER" bio --plan "$TMP/a.plan" --replay "$B" -N >"$TMP/ro.out" 2>&1
nw=$(awk '$4 == "W"' "$TMP/truth" | wc -l)
check "without -W: $nw writes counted and skipped, B's checksum unchanged" \
	eval 'grep -q "^writes skipped: $nw " "$TMP/ro.out" && test "$(sum "$B")" = "$before"'

# replay_on FILE ARGS...: ember bio ARGS while ember records B into FILE;
# the queue events (without the replayer's main thread) go to FILE.q.
replay_on() {
	local out=$1; shift
	"$EMBER" record --block -d "$B" -o "$out" -- "$EMBER" bio "$@" >"$out.out" 2>&1
	queues "$out" 1 >"$out.q"
}

replay_on "$TMP/b1.data" --plan "$TMP/a.plan" --replay "$B" -W
read -r na nb same ordered ratio < <(compare "$TMP/qa" "$TMP/b1.data.q")
check "--plan --replay -W: the same 500 (sector, size, direction) on B ($nb queued)" \
	test "$na" = 500 -a "$nb" = 500 -a "$same" = 1
check "--replay: each recorded CPU's I/Os queued in their recorded order" test "$ordered" = 1
check "--replay: the whole takes the recorded time, within 10% (B/A $ratio)" \
	awk -v r="$ratio" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }'
check "--replay -W: B was written (its checksum changed)" test "$(sum "$B")" != "$before"
check "--replay: lateness p50, p99, max and the totals printed" \
	eval 'grep -q "^lateness: p50 [0-9.]* ms, p99 [0-9.]* ms, max [0-9.]* ms" "$TMP/b1.data.out" &&
	      grep -q "^replayed: 500 I/Os .* 2 submitters, 1 iteration" "$TMP/b1.data.out"'

replay_on "$TMP/b2.data" -i "$RA" -d "$LOOP" --replay "$B" -W -x 2
read -r na nb same ordered ratio2 < <(compare "$TMP/qa" "$TMP/b2.data.q")
check "-x 2: the same I/Os in about half the time (B/A $ratio2)" \
	eval 'test "$same" = 1 -a "$ordered" = 1 &&
	      awk -v r="$ratio2" "BEGIN { exit !(r >= 0.4 && r <= 0.6) }"'

replay_on "$TMP/b3.data" --plan "$TMP/a.plan" --replay "$B" -W -N -c 1
read -r na nb same ordered ratio3 < <(compare "$TMP/qa" "$TMP/b3.data.q")
check "-N -c 1: the same I/Os ($nb queued, same $same), faster than -x 2 (B/A $ratio3), from 1 submitter" \
	eval 'test "$same" = 1 && awk -v r="$ratio3" -v h="$ratio2" "BEGIN { exit !(r < h) }" &&
	      grep -q "1 submitter, 1 iteration" "$TMP/b3.data.out"'

"$EMBER" bio --plan "$TMP/a.plan" --replay "$B" -N -I 2 >"$TMP/it.out" 2>&1
check "-I 2: the reads twice ($(grep replayed "$TMP/it.out"))" \
	grep -q "^replayed: $((2 * (500 - nw))) I/Os .* 2 iterations" "$TMP/it.out"

# ---- safety ----------------------------------------------------------------
refused() {   # refused NAME WHAT DEV [ARGS]: -W onto DEV refused, DEV unchanged
	local name=$1 what=$2 dev=$3; shift 3
	local was; was=$(sum "$dev")
	"$EMBER" bio --plan "$TMP/a.plan" --replay "$dev" -W "$@" >"$TMP/ref.out" 2>&1
	local rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$what" "$TMP/ref.out" && [ "$(sum "$dev")" = "$was" ]; then
		pass "$name: $(tail -1 "$TMP/ref.out")"
	else
		fail "$name" "exit $rc: $(tail -1 "$TMP/ref.out")"
	fi
}
refused "-W onto the recorded device" "is the device the recording's I/O was on" "$LOOP"
refused "I/O past the device's end" "ends past the end of $D .*nothing was replayed" "$D"
# Tables initialised now: ext4lazyinit would otherwise write them after
# the mount, and the mounted check compares the device before and after.
if command -v mkfs.ext4 >/dev/null &&
   mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$C" >/dev/null 2>&1; then
	refused "-W onto ext4" "$C holds an ext4 filesystem: refusing to write to it (--force" "$C"
	MNT=$TMP/mnt
	mkdir -p "$MNT"
	# Read-only: a read-write mount writes its superblock and journal
	# whenever the kernel gets to it, and the check compares the device.
	if mount -o ro,noload "$C" "$MNT" 2>/dev/null; then
		refused "-W onto a mounted device" "$C is mounted at $MNT (ext4): refusing" "$C"
		umount "$MNT" && MNT=
	else
		skip "-W onto a mounted device" "mount failed"
	fi
	# Reads need no care: the same ext4 device takes the read-only replay.
	check "without -W an ext4 device is replayed onto (reads)" \
		eval '"$EMBER" bio --plan "$TMP/a.plan" --replay "$C" -N >/dev/null 2>&1'
	# A DOS partition table (one entry, written by hand) in place of ext4.
	if [ -z "$MNT" ] && command -v wipefs >/dev/null && wipefs -q -a "$C" 2>/dev/null; then
		printf '\0\0\0\0\x83\0\0\0\0\x08\0\0\0\x10\0\0' | dd of="$C" bs=1 seek=446 conv=notrunc 2>/dev/null
		printf '\x55\xaa' | dd of="$C" bs=1 seek=510 conv=notrunc 2>/dev/null
		refused "-W onto a partitioned device" "$C holds a dos partition table: refusing" "$C"
	else
		skip "-W onto a partitioned device" "wipefs failed"
	fi
else
	skip "-W onto ext4" "mkfs.ext4 failed"
fi
"$EMBER" bio --plan "$TMP/a.plan" --replay "$TMP/a.plan" >"$TMP/nodev.out" 2>&1
rc=$?
check "not a block device: exit 2, one line ($(head -1 "$TMP/nodev.out"))" \
	eval 'test "$rc" = 2 && test "$(wc -l <"$TMP/nodev.out")" = 1 && grep -q "is not a block device" "$TMP/nodev.out"'

# A blktrace capture (the kernel blk tracer's, the fuzz seed after its 3
# layout bytes): a plan of its queued reads and writes, per CPU as
# blkparse's lines have them.
tail -c +4 "$(dirname "$0")/../fuzz/corpus/fuzz-blktrace/blk-tracer.bin" >"$TMP/blk.bin"
want=$("$EMBER" bio -i "$TMP/blk.bin" --blkparse 2>/dev/null |
	awk '$6 == "Q" && $7 ~ /[RW]/ && $10 > 0 { n++; c[$2] } END { print n + 0, length(c) }')
set -- $want
"$EMBER" bio -i "$TMP/blk.bin" --save-plan "$TMP/blk.plan" >"$TMP/blk.out" 2>&1
check "a blktrace capture's plan: $1 I/Os on $2 CPUs, as its Q lines ($(head -1 "$TMP/blk.out"))" \
	grep -q "^plan: wrote $1 I/Os .* queued on $2 CPUs" "$TMP/blk.out"
