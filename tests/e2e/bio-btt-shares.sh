#!/usr/bin/env bash
# bio-btt-shares.sh - btt's "share of Q2C" line names only phases whose
# rows counted some, each by what it measures: 100 direct 64 KiB writes
# to a loop device, once with its scheduler "none" (requests go straight
# to the driver: no insert events, so no G2I and no I2D; request
# allocation to issue is G2D, one per request) and once with
# mq-deadline (every request inserted: G2I and I2D, no G2D).  The rows'
# N come from the recording's own getrq/insert/issue records (ember
# script), and in each case the shares named add up to 100%.
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-btt-shares

SCHED=/sys/block/${LOOP#/dev/}/queue/scheduler
bio_more_cleanup() { echo none >"$SCHED" 2>/dev/null; }
WL="dd if=/dev/zero of=$LOOP bs=64k count=100 oflag=direct 2>/dev/null"

# shares SCHEDULER NAMES ABSENT: with SCHEDULER, the share line names
# exactly NAMES (in order); each named phase's row has N 100 and the
# ABSENT ones' rows N 0, as script's records of dd's requests say.
shares() {
	local sched=$1 names=$2 absent=$3 F=$TMP/$1.data ok=
	echo "$sched" >"$SCHED" 2>/dev/null && grep -q "\[$sched\]" "$SCHED" ||
		{ skip "bio-btt-shares $sched" "cannot set the scheduler of $LOOP"; return; }
	for try in 1 2 3; do
		"$EMBER" record --block -d "$LOOP" -o "$F" -- sh -c "$WL" >/dev/null 2>"$TMP/rec.err" ||
			continue
		"$EMBER" bio -i "$F" --comm dd >"$TMP/btt" 2>&1 || continue
		grep -q '^I/Os: 100 completed' "$TMP/btt" && grep -q ' 0 lost' "$TMP/rec.err" &&
			{ ok=1; break; }
	done
	[ -n "$ok" ] || { fail "record ($sched)" "no complete recording in 3 tries: $(grep '^I/Os' "$TMP/btt")"; return; }
	"$EMBER" script -i "$F" >"$TMP/script" 2>&1
	local getrq inserts
	getrq=$(grep -c 'block:block_getrq:.*\[dd\]' "$TMP/script")
	inserts=$(grep -c 'block:block_rq_insert:' "$TMP/script")
	check "$sched: script has $getrq getrq and $inserts insert records of dd's 100 requests" \
		eval 'test "$getrq" = 100 && { test "$inserts" = 100 -a "$sched" != none || test "$inserts" = 0 -a "$sched" = none; }'
	local line got sum
	line=$(grep '^share of Q2C:' "$TMP/btt")
	got=$(echo "$line" | awk '{ for (i = 4; i < NF; i += 2) printf "%s%s", (i > 4 ? " " : ""), $i }')
	sum=$(echo "$line" | awk '{ for (i = 5; i <= NF; i += 2) { v = $i; sub("%", "", v); s += v } } END { print s + 0 }')
	check "$sched: the shares name $names ($line)" test "$got" = "$names"
	check "$sched: the shares add up to 100% ($sum)" within "$sum" 100 0.05
	local p n
	for p in $names; do
		[ "$p" = D2C -o "$p" = Q2G ] && continue
		n=$(awk -v p="$p" '$1 == p { print $5 }' "$TMP/btt")
		check "$sched: $p row N 100 ($n)" test "$n" = 100
	done
	for p in $absent; do
		n=$(awk -v p="$p" '$1 == p { print $5 }' "$TMP/btt")
		check "$sched: $p row N 0 ($n), not in the shares" test "$n" = 0
	done
}
shares none "Q2G G2D D2C" "G2I I2D"
shares mq-deadline "Q2G G2I I2D D2C" "G2D"
