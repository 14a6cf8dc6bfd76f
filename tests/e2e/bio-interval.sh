#!/usr/bin/env bash
# bio-interval.sh - the block views per interval and as they happen: two dd
# writers of known sizes (12288 KiB in 64 KiB writes and 8192 KiB in
# 128 KiB writes, direct, each fed in four pieces a third of a second
# apart so the writes span several intervals) on a loop device.
# --top gives each writer's Kbytes; per interval, --top, --monitor, --hist
# and --size add up to the whole file exactly; --monitor reads a stream
# ('ember record -o - | ember bio -i -'); --snoop prints lines while the
# recording still runs; ember btrace prints the device's lines only.
. "$(dirname "$0")/../e2e-lib.sh"
L2= PG= BT=
bio_more_cleanup() {
	[ -n "$PG" ] && kill -INT -- -"$PG" 2>/dev/null
	[ -n "$BT" ] && kill -INT "$BT" 2>/dev/null
	[ -n "$L2" ] && losetup -d "$L2" 2>/dev/null
}
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-interval

# Each writer one dd process, fed in four pieces with pauses between.
WL=$(bio_two_writers "$TMP/pids")
F=$TMP/two.data
ok=
for try in 1 2 3; do
	"$EMBER" record --block -d "$LOOP" -m 1024 -o "$F" -- sh -c "$WL" >/dev/null 2>"$TMP/rec.err" &&
		grep -q ' 0 lost' "$TMP/rec.err" && "$EMBER" bio -i "$F" >"$TMP/btt" 2>&1 &&
		grep -q '^left out: 0 issued but never seen completing, 0 queued but never issued, 0 superseded' \
			"$TMP/btt" && { ok=1; break; }
done
[ -n "$ok" ] || { fail record "no complete recording in 3 tries: $(grep '^left out' "$TMP/btt") $(tail -1 "$TMP/rec.err")"; exit 0; }
P1=$(sed -n 1p "$TMP/pids") P2=$(sed -n 2p "$TMP/pids")

# ---- --top (biotop) ----
"$EMBER" bio -i "$F" --top >"$TMP/top" 2>&1
kb() { awk -v p="$2" '$1 == p && $3 == "W" { k += $8 } END { print k + 0 }' "$1"; }
check "--top header: PID COMM D MAJ MIN DISK I/O Kbytes AVGms" \
	grep -Eq '^PID +COMM +D +MAJ +MIN +DISK +I/O +Kbytes +AVGms$' "$TMP/top"
k1=$(kb "$TMP/top" "$P1") k2=$(kb "$TMP/top" "$P2")
check "--top: writer 1 (pid $P1) $k1 Kbytes of 12288, writer 2 (pid $P2) $k2 of 8192 (within 2%)" \
	eval 'within "$k1" 12288 245 && within "$k2" 8192 163'
check "--top: sorted by Kbytes (writer 1 above writer 2)" \
	test "$(awk -v a="$P1" -v b="$P2" '$1 == a { x = NR } $1 == b { y = NR } END { print (x && y && x < y) }' "$TMP/top")" = 1
check "--top: AVGms is a positive D2C average" \
	awk -v p="$P1" '$1 == p { f = $9 > 0 } END { exit !f }' "$TMP/top"

"$EMBER" bio -i "$F" --top -d "$LOOP" >"$TMP/top.dev" 2>&1
"$EMBER" bio -i "$F" --top -d 7,1023 >"$TMP/top.other" 2>&1
check "-d: $LOOP's rows are all the rows, another device has none" \
	eval 'cmp -s "$TMP/top" "$TMP/top.dev" && test "$(wc -l <"$TMP/top.other")" = 1'
"$EMBER" bio -i "$F" --top --interval 0.25 >"$TMP/top.iv" 2>&1
n=$(grep -c '^# interval ' "$TMP/top.iv")
i1=$(kb "$TMP/top.iv" "$P1") i2=$(kb "$TMP/top.iv" "$P2")
check "--top --interval 0.25: $n intervals; per-interval Kbytes add up to the whole ($i1 = $k1, $i2 = $k2)" \
	test "$n" -ge 4 -a "$i1" = "$k1" -a "$i2" = "$k2"
check "--top --interval: each writer in more than one interval" \
	test "$(awk -v p="$P1" '$1 == p' "$TMP/top.iv" | wc -l)" -ge 2
"$EMBER" bio -i "$F" --top --interval 0.25 --count 2 >"$TMP/top.c2" 2>&1; rc=$?
check "--count 2: two intervals, exit 0 ($(grep -c '^# interval ' "$TMP/top.c2"), $rc)" \
	test "$(grep -c '^# interval ' "$TMP/top.c2")" = 2 -a $rc = 0

# ---- --monitor (blkiomon) ----
"$EMBER" bio -i "$F" --monitor >"$TMP/mon" 2>&1
"$EMBER" bio -i "$F" --monitor --interval 0.25 >"$TMP/mon.iv" 2>&1
total() { awk '/^requests: / { n += $2 } END { print n + 0 }' "$1"; }
t=$(total "$TMP/mon") ti=$(total "$TMP/mon.iv")
w=$(awk '$1 == "W" && $2 == "bytes" { print $3 }' "$TMP/mon")
check "--monitor: $t requests, $w of them writes, at least the 256 writes" \
	test "$t" -ge 256 -a "$w" -ge 256
check "--monitor --interval 0.25: the intervals' requests add up to the whole ($ti = $t)" \
	test "$ti" = "$t"
# min <= avg <= max on every line with numbers, in every interval.
bad=$(awk '$2 ~ /^(bytes|D2C\(us\))$/ && $4 != "-" && !($4 <= $5 + 0 && $5 <= $6 + 0) { n++ } END { print n + 0 }' \
	"$TMP/mon.iv")
lines=$(awk '$2 ~ /^(bytes|D2C\(us\))$/ && $4 != "-"' "$TMP/mon.iv" | wc -l)
check "--monitor: MIN <= AVG <= MAX on all $lines lines ($bad not)" test "$bad" = 0 -a "$lines" -ge 4
# Each device block: the size and D2C histograms each hold its reads and writes.
hist_bad=$(awk '/^== / { if (dev) check(); dev = 1; rw = 0; h = 0; s[1] = s[2] = 0 }
	/^requests: / { rw = $4 + $6 }
	/^request sizes/ { h = 1 } /^D2C, reads/ { h = 2 }
	h && / -> / { s[h] += $5 }
	function check() { if (s[1] != rw || s[2] != rw) bad++ }
	END { if (dev) check(); print bad + 0 }' "$TMP/mon.iv")
check "--monitor: per interval, each histogram's counts add up to its reads and writes" \
	test "$hist_bad" = 0

# ---- --hist, --size per interval add up to the whole ----
slots() { awk '/ -> / { c[$1] += $5 } END { for (k in c) print k, c[k] }' "$1" | sort -n; }
"$EMBER" bio -i "$F" --hist >"$TMP/hist" 2>&1
"$EMBER" bio -i "$F" --hist --interval 0.25 >"$TMP/hist.iv" 2>&1
check "--hist --interval: the intervals' histograms add up to the whole file's, slot by slot" \
	eval 'test -s "$TMP/hist" && cmp -s <(slots "$TMP/hist") <(slots "$TMP/hist.iv")'
"$EMBER" bio -i "$F" --size >"$TMP/size" 2>&1
"$EMBER" bio -i "$F" --size --interval 0.25 >"$TMP/size.iv" 2>&1
check "--size --interval: the intervals add up to the whole file, slot by slot" \
	eval 'test -s "$TMP/size" && cmp -s <(slots "$TMP/size") <(slots "$TMP/size.iv")'
"$EMBER" bio -i "$F" --interval 0.25 >"$TMP/btt.iv" 2>&1
c=$(awk '/^I\/Os: / { n += $2 } END { print n + 0 }' "$TMP/btt.iv")
cw=$(awk '/^I\/Os: / { print $2; exit }' "$TMP/btt")
check "--btt --interval: completed I/Os add up ($c = $cw)" test "$c" = "$cw"
"$EMBER" bio -i "$F" >"$TMP/btt.again" 2>&1
check "without --interval: the same table as before" cmp -s "$TMP/btt" "$TMP/btt.again"

# ---- a stream: ember record -o - | ember bio -i - ----
S=$TMP/stream.data
ok=
for try in 1 2 3; do
	"$EMBER" record --block -d "$LOOP" -m 1024 -q -o - -- sh -c "$WL" 2>"$TMP/srec.err" |
		tee "$S" | "$EMBER" bio --monitor -i - --interval 0.25 >"$TMP/smon" 2>"$TMP/smon.err"
	[ "$(total "$TMP/smon")" -ge 256 ] && { ok=1; break; }
done
st=$(total "$TMP/smon")
"$EMBER" bio -i "$S" --monitor >"$TMP/smon.whole" 2>&1
check "stream --monitor --interval: $(grep -c '^# interval' "$TMP/smon") intervals, $st requests, as the saved stream's whole ($(total "$TMP/smon.whole"))" \
	eval 'test -n "$ok" && test "$st" = "$(total "$TMP/smon.whole")" && test "$(grep -c "^# interval" "$TMP/smon")" -ge 2'

# ---- Ctrl-C of the pipeline: the recorder ends its stream, the view its
# last interval, exit 0 (the group signalled as a terminal would) ----
if command -v python3 >/dev/null; then
	rm -f "$TMP/int.rc"
	# A job started with & has SIGINT ignored, and so would its children
	# be: a session of its own with SIGINT at its default, as at a terminal.
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp("sh", ["sh", "-c", sys.argv[1]])' "trap : INT; '$EMBER' record --block -a -d '$LOOP' -m 1024 -q -o - |
		'$EMBER' bio --monitor -i - --interval 0.25 >'$TMP/int.out' 2>'$TMP/int.err'
		echo \$? >'$TMP/int.rc'" &
	PG=$!
	# Ready once a probe write is counted in an interval.
	for i in $(seq 100); do
		dd if=/dev/zero of="$LOOP" bs=4k count=1 oflag=direct 2>/dev/null
		sleep 0.1
		[ "$(total "$TMP/int.out")" -gt 0 ] && break
	done
	before=$(total "$TMP/int.out")
	dd if=/dev/zero of="$LOOP" bs=64k count=40 oflag=direct 2>/dev/null
	kill -INT -- -"$PG"
	for i in $(seq 100); do [ -s "$TMP/int.rc" ] && break; sleep 0.1; done
	got=$(total "$TMP/int.out")
	check "Ctrl-C: the view exits $(cat "$TMP/int.rc" 2>/dev/null) after the stream's last interval, with the 40 writes after the $before probes ($got requests)" \
		eval 'test "$(cat "$TMP/int.rc" 2>/dev/null)" = 0 -a "$got" -ge $((before + 40))'
else
	skip "Ctrl-C of the pipeline" "python3 is missing"
fi

# ---- --snoop streams: the writer waits for ember's first lines ----
# The workload writes 8 blocks, then waits (up to 20 s) for the mark that
# the reader saw a line; without streaming no line comes before it ends.
SWL="dd if=/dev/zero of=$LOOP bs=64k count=8 oflag=direct 2>/dev/null
     for i in \$(seq 200); do [ -e $TMP/seen ] && break; sleep 0.1; done
     [ -e $TMP/seen ] && echo seen >$TMP/verdict || echo timeout >$TMP/verdict"
rm -f "$TMP/seen" "$TMP/verdict"
"$EMBER" record --block -d "$LOOP" -m 1024 -q -o - -- sh -c "$SWL" 2>/dev/null |
	"$EMBER" bio --snoop -i - 2>/dev/null |
	{ read -r header; read -r first; touch "$TMP/seen"; echo "$first" >"$TMP/first"; cat >/dev/null; }
check "--snoop -i -: a line came out while the recording still ran ($(cat "$TMP/verdict" 2>/dev/null): $(cat "$TMP/first"))" \
	eval 'test "$(cat "$TMP/verdict" 2>/dev/null)" = seen && grep -q " W " "$TMP/first"'

# ---- ember btrace DEV: lines of that device only ----
truncate -s 8M "$TMP/other.img"
L2=$(losetup -f --show "$TMP/other.img") || { skip btrace "a second loop device could not be made"; exit 0; }
"$EMBER" btrace "$LOOP" >"$TMP/bt" 2>"$TMP/bt.err" &
BT=$!
# Ready once a probe write shows (the recording starts on its own thread).
for i in $(seq 100); do
	dd if=/dev/zero of="$LOOP" bs=4k count=1 oflag=direct 2>/dev/null
	grep -q ' Q ' "$TMP/bt" && break
	sleep 0.1
done
dd if=/dev/zero of="$L2" bs=64k count=20 oflag=direct 2>/dev/null
dd if=/dev/zero of="$LOOP" bs=64k count=20 seek=400 oflag=direct 2>/dev/null
dd if=/dev/zero of="$L2" bs=64k count=20 oflag=direct 2>/dev/null
# Wait for the 20 known completions (sectors 51200 on), then Ctrl-C.
for i in $(seq 100); do
	[ "$(awk '$6 == "C" && $8 >= 51200' "$TMP/bt" | wc -l)" -ge 20 ] && break
	sleep 0.1
done
kill -INT "$BT"; wait "$BT"; rc=$?
mm=$(printf '%d,%d' "0x$(stat -c %t "$LOOP")" "0x$(stat -c %T "$LOOP")")
others=$(awk -v d="$mm" '$1 != d' "$TMP/bt" | wc -l)
q=$(awk '$6 == "Q" && $8 >= 51200' "$TMP/bt" | wc -l)
check "btrace $LOOP: $(wc -l <"$TMP/bt") lines, all of $mm ($others of others), the 20 writes queued ($q), exit $rc after SIGINT" \
	test "$others" = 0 -a "$q" = 20 -a "$rc" = 0

"$EMBER" bio -i "$F" --snoop --interval 1 >/dev/null 2>&1
check "usage: --interval with --snoop exits 2" test $? = 2
"$EMBER" bio -i "$F" --hist --count 2 >/dev/null 2>&1
check "usage: --count without --interval exits 2" test $? = 2
"$EMBER" btrace /nonexistent >/dev/null 2>&1
check "usage: btrace of no block device exits 2" test $? = 2
