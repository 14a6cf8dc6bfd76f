# tests/e2e-bio-lib.sh - shared set-up of the block I/O tests (sourced
# after e2e-lib.sh): a 32 MiB loop device backed by a file, and SCHED_IDLE
# spinners that keep every CPU busy, because perf_events loses the
# completions an idle CPU handles (DESIGN.md quirks).
#
#   bio_setup NAME    sets LOOP and SPIN, or skips NAME and exits
#   bio_two_writers PIDFILE   a shell command: two writers of known sizes
# A test with more to undo defines bio_more_cleanup before bio_setup.

LOOP= SPIN=
bio_cleanup() {
	[ -n "$SPIN" ] && kill "$SPIN" 2>/dev/null
	declare -F bio_more_cleanup >/dev/null && bio_more_cleanup
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$TMP"
}

bio_setup() {
	local name=$1
	need_root || { skip "$name" "needs root for losetup and tracepoints"; exit 0; }
	ensure_tracefs || { skip "$name" "no tracefs"; exit 0; }
	[ -d /sys/kernel/tracing/events/block ] || { skip "$name" "no block tracepoints"; exit 0; }
	command -v losetup >/dev/null || { skip "$name" "losetup (util-linux) is missing"; exit 0; }
	command -v chrt >/dev/null || { skip "$name" "chrt (util-linux) is missing"; exit 0; }
	trap bio_cleanup EXIT
	truncate -s 32M "$TMP/disk.img"
	LOOP=$(losetup -f --show "$TMP/disk.img") || { skip "$name" "losetup failed"; exit 0; }
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	chrt -i 0 "$WORKLOADS/spin" 2 300 >/dev/null 2>&1 &
	SPIN=$!
	sleep 0.2
}

# Two dd writers on $LOOP, each one process fed in four pieces a third of
# a second apart (so the writes span several intervals): 12288 KiB in
# 64 KiB writes, then 8192 KiB in 128 KiB writes from 6 MiB on, direct;
# their pids go to PIDFILE, a line each.  Prints the command for sh -c.
bio_two_writers() {
	echo "(for i in 1 2 3 4; do head -c 3145728 /dev/zero; sleep 0.3; done) |
	dd of=$LOOP bs=64k iflag=fullblock oflag=direct 2>/dev/null & echo \$! >$1
    (for i in 1 2 3 4; do head -c 2097152 /dev/zero; sleep 0.3; done) |
	dd of=$LOOP bs=128k seek=96 iflag=fullblock oflag=direct 2>/dev/null & echo \$! >>$1
    wait"
}
