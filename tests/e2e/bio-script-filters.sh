#!/usr/bin/env bash
# bio-script-filters.sh - `ember script --blkparse` applies script's filters
# (--pid, --tid, --comm, --cpu, --time) to its lines as to its other
# output: two biowriters processes of known pids write 30 and 20 blocks
# of 64 KiB (direct, one bio each) to a loop device at once.  Each filter
# keeps exactly the unfiltered lines of its pid or CPU, as many as plain
# `ember script` keeps block events, and a pid's queue events are its writes.
# `ember bio --blkparse` goes through the same library call: with each
# filter it prints the very lines script --blkparse prints.
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-script-filters

F=$TMP/two.data
WL="$WORKLOADS/biowriters $LOOP 30 0 >/dev/null & echo \$! >$TMP/pids
    $WORKLOADS/biowriters $LOOP 20 0 >/dev/null & echo \$! >>$TMP/pids; wait"
ok=
for try in 1 2 3; do
	"$EMBER" record --block -d "$LOOP" -m 1024 -o "$F" -- sh -c "$WL" \
		>/dev/null 2>"$TMP/rec.err" && grep -q ' 0 lost' "$TMP/rec.err" && { ok=1; break; }
done
[ -n "$ok" ] || { fail record "no recording without lost events in 3 tries: $(tail -1 "$TMP/rec.err")"; exit 0; }
P1=$(sed -n 1p "$TMP/pids") P2=$(sed -n 2p "$TMP/pids")

"$EMBER" script -i "$F" --blkparse >"$TMP/all" 2>"$TMP/err"
queues() { awk -v p="$2" '$5 == p && $6 == "Q"' "$1" | wc -l; }
check "unfiltered: pid $P1 queued 30 writes, pid $P2 20 ($(queues "$TMP/all" "$P1"), $(queues "$TMP/all" "$P2"))" \
	test "$(queues "$TMP/all" "$P1")" = 30 -a "$(queues "$TMP/all" "$P2")" = 20

# Block events plain script keeps with the same filter (its replay filters):
# record --block records only the block tracepoints bio decodes.
plain() {
	"$EMBER" script -i "$F" "$@" -F event 2>/dev/null | grep -c 'block:block_'
}
check "unfiltered: as many lines as plain script has block events ($(wc -l <"$TMP/all"))" \
	test "$(wc -l <"$TMP/all")" = "$(plain)"

# same_in_bio FILTER...: bio --blkparse FILTER prints what script
# --blkparse FILTER printed into $TMP/f.
same_in_bio() {
	"$EMBER" bio -i "$F" --blkparse "$@" >"$TMP/b" 2>"$TMP/berr"
	check "bio --blkparse $*: the lines of script --blkparse $* ($(wc -l <"$TMP/b"))" \
		cmp -s "$TMP/b" "$TMP/f"
}
cp "$TMP/all" "$TMP/f"
same_in_bio

# filtered NAME AWK-TEST FILTER...: the lines FILTER keeps are exactly the
# unfiltered lines AWK-TEST picks, and as many as plain script keeps (some
# with EMPTY_OK=1: a CPU may have seen no block event).
filtered() {
	local name=$1 test=$2; shift 2
	"$EMBER" script -i "$F" --blkparse "$@" >"$TMP/f" 2>"$TMP/err"
	awk "$test" "$TMP/all" >"$TMP/want"
	local n p
	n=$(wc -l <"$TMP/f") p=$(plain "$@")
	check "--blkparse $*: $n lines, the unfiltered ones of $name ($(wc -l <"$TMP/want")), plain script $p" \
		eval 'test -s "$TMP/f" -o "${EMPTY_OK:-}" = 1 && cmp -s "$TMP/f" "$TMP/want" && test "$n" = "$p"'
	same_in_bio "$@"
}
filtered "pid $P1" "\$5 == $P1" --pid "$P1"
check "--pid $P1: its 30 queued writes" test "$(queues "$TMP/f" "$P1")" = 30
filtered "pid $P2" "\$5 == $P2" --pid "$P2"
filtered "pid $P2 (one thread)" "\$5 == $P2" --tid "$P2"
filtered "both writers" "\$5 == $P1 || \$5 == $P2" --comm biowriters
EMPTY_OK=1 filtered "CPU 0" '$2 == 0' --cpu 0
c0=$(wc -l <"$TMP/f")
EMPTY_OK=1 filtered "CPU 1" '$2 == 1' --cpu 1
c1=$(wc -l <"$TMP/f")
check "--cpu 0 and --cpu 1: $c0 + $c1 lines of $(wc -l <"$TMP/all") (two CPUs: $(nproc))" \
	eval 'test "$(nproc)" != 2 || test $((c0 + c1)) = "$(wc -l <"$TMP/all")"'

# --time: the middle third of the events, by plain script's times.
"$EMBER" script -i "$F" -F time,event 2>/dev/null |
	awk '/block:block_/ && !/block:block_io_/ { sub(":", "", $1); print $1 }' >"$TMP/times"
n=$(wc -l <"$TMP/times")
A=$(sed -n "$((n / 3))p" "$TMP/times") B=$(sed -n "$((2 * n / 3))p" "$TMP/times")
"$EMBER" script -i "$F" --blkparse --time "$A,$B" >"$TMP/f" 2>"$TMP/err"
m=$(wc -l <"$TMP/f") p=$(plain --time "$A,$B")
in_all() { awk 'NR == FNR { a[$0] = 1; next } !($0 in a) { bad++ } END { exit bad > 0 }' "$TMP/all" "$1"; }
check "--blkparse --time $A,$B: $m of $n lines, plain script $p, each an unfiltered line" \
	eval 'test "$m" -gt 0 -a "$m" -lt "$n" -a "$m" = "$p" && in_all "$TMP/f"'
same_in_bio --time "$A,$B"
