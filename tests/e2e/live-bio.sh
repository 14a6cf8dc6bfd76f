#!/usr/bin/env bash
# live-bio.sh - the block views live (-a: record while they run): biotop
# with two dd writers of known sizes (12288 KiB in 64 KiB writes, 8192 KiB
# in 128 KiB writes, direct) on a loop device gives each writer's Kbytes,
# summed over its intervals, within 2%; blkiomon per interval adds up to
# the kept -o file read back; each interval ends with the '# live:' line;
# --snoop -- command prints the command's I/Os (recorded system-wide).
. "$(dirname "$0")/../e2e-lib.sh"
BG=
bio_more_cleanup() { [ -n "$BG" ] && kill -INT "$BG" 2>/dev/null; }
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup live-bio

WL=$(bio_two_writers "$TMP/pids")

# Waits (up to 10 s) for the first interval of a live view: it records.
wait_interval() {
	for i in $(seq 100); do
		grep -q '^# interval 1:' "$1" && return 0
		sleep 0.1
	done
	return 1
}

# ---- --top -a --interval 1 (biotop) ----
kb() { awk -v p="$2" '$1 == p && $3 == "W" { k += $8 } END { print k + 0 }' "$1"; }
ok= k1= k2=
for try in 1 2 3; do
	"$EMBER" bio --top -a --interval 1 >"$TMP/top" 2>"$TMP/top.err" &
	BG=$!
	wait_interval "$TMP/top" || { fail top "no interval in 10 s: $(head -3 "$TMP/top.err")"; break; }
	sh -c "$WL"
	P1=$(sed -n 1p "$TMP/pids") P2=$(sed -n 2p "$TMP/pids")
	# Two more intervals: the last completions are printed.
	n=$(grep -c '^# interval ' "$TMP/top")
	for i in $(seq 50); do
		[ "$(grep -c '^# interval ' "$TMP/top")" -ge $((n + 2)) ] && break
		sleep 0.1
	done
	kill -INT "$BG"; wait "$BG"; rc=$?; BG=
	k1=$(kb "$TMP/top" "$P1") k2=$(kb "$TMP/top" "$P2")
	within "$k1" 12288 245 && within "$k2" 8192 163 && { ok=1; break; }
done
check "--top -a --interval 1: writer 1 $k1 Kbytes of 12288, writer 2 $k2 of 8192 (within 2%, summed over the intervals; try $try)" \
	test -n "$ok"
check "--top -a: Ctrl-C exits $rc" test "$rc" = 0
ni=$(grep -c '^# interval ' "$TMP/top") nl=$(grep -c '^# live: [0-9]* samples lost since the last table' "$TMP/top")
check "--top -a: each of the $ni intervals ends with the live line of losses ($nl)" \
	test "$ni" -ge 3 -a "$ni" = "$nl"
check "--top -a: header PID COMM D MAJ MIN DISK I/O Kbytes AVGms" \
	grep -Eq '^PID +COMM +D +MAJ +MIN +DISK +I/O +Kbytes +AVGms$' "$TMP/top"

# ---- --monitor -a --interval 1 --duration N -o FILE (blkiomon) ----
total() { awk '/^requests: / { n += $2 } END { print n + 0 }' "$1"; }
"$EMBER" bio --monitor -a --interval 1 --duration 4 -o "$TMP/mon.data" >"$TMP/mon" 2>"$TMP/mon.err" &
BG=$!
wait_interval "$TMP/mon"
sh -c "$WL"
wait "$BG"; rc=$?; BG=
"$EMBER" bio --monitor -i "$TMP/mon.data" >"$TMP/mon.file" 2>&1
ti=$(total "$TMP/mon") tf=$(total "$TMP/mon.file")
w=$(awk '$1 == "W" && $2 == "bytes" && $3 >= 256 { f = 1 } END { print f + 0 }' "$TMP/mon.file")
check "--monitor -a --interval 1 --duration 4: exit $rc, the intervals' requests add up to the kept file's ($ti = $tf), the 256 writes among them" \
	test "$rc" = 0 -a "$ti" = "$tf" -a "$w" = 1
ni=$(grep -c '^# interval ' "$TMP/mon") nl=$(grep -c '^# live: ' "$TMP/mon")
check "--monitor -a: 4 or 5 intervals ($ni), each with the live line ($nl)" \
	test "$ni" -ge 4 -a "$ni" -le 5 -a "$ni" = "$nl"

# ---- -- command: the whole system while the command runs ----
"$EMBER" bio --snoop -d "$LOOP" -- dd if=/dev/zero of="$LOOP" bs=64k count=8 oflag=direct \
	>"$TMP/snoop" 2>"$TMP/snoop.err"; rc=$?
n=$(awk '$2 == "dd" && $5 == "W" && $7 == 65536' "$TMP/snoop" | wc -l)
check "--snoop -d $LOOP -- dd (8 writes of 64 KiB): $n lines, exit $rc" test "$n" = 8 -a "$rc" = 0

# ---- usage ----
"$EMBER" bio --top -a -i "$TMP/mon.data" >/dev/null 2>&1
check "usage: -i with a target exits 2" test $? = 2
"$EMBER" bio --top --duration 1 >/dev/null 2>&1
check "usage: --duration without a target exits 2" test $? = 2
"$EMBER" bio --top -a --duration 2.5 >"$TMP/top.def" 2>&1
n=$(grep -c '^# interval ' "$TMP/top.def")
check "--top -a without --interval: every second, as biotop ($n intervals in 2.5 s)" test "$n" = 3

# ---- --mmap-pages: the rings live bio maps (record's -m; the loss
# warning names it), 64 pages and the header page each ----
"$EMBER" bio --hist -a --duration 1.5 --mmap-pages 64 >/dev/null 2>"$TMP/pages.err" &
P=$!
sleep 0.7
rings=$(grep 'perf_event' "/proc/$P/maps" 2>/dev/null | while read -r range _; do
	echo $(( (0x${range#*-} - 0x${range%-*}) / 4096 )); done | sort -u | tr '\n' ' ')
wait "$P"; rc=$?
check "bio -a --mmap-pages 64 (exit $rc): rings of 65 pages ($rings)" test "$rc" = 0 -a "$rings" = "65 "
"$EMBER" bio --hist -a --duration 1 --mmap-pages 3 >/dev/null 2>"$TMP/pages.err"
check "usage: --mmap-pages 3 exits 2, saying why" \
	sh -c "test $? = 2 && grep -q 'power of two' '$TMP/pages.err'"
"$EMBER" bio -- sh -c 'exit 3' >/dev/null 2>&1
rc=$?
check "bio -- sh -c 'exit 3' exits 3 (got $rc), as record does" test "$rc" = 3
