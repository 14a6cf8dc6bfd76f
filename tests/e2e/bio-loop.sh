#!/usr/bin/env bash
# bio-loop.sh - ember record --block and ember bio on a loop device backed
# by a file: 200 x 64 KiB direct writes then 200 direct reads, a workload
# whose counts and bytes are known by construction.  Both CPUs are kept
# busy by SCHED_IDLE spinners, because perf_events loses the completions
# an idle CPU handles (DESIGN.md quirks).
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-loop

majmin=$(printf '%d,%d' "0x$(stat -c %t "$LOOP")" "0x$(stat -c %T "$LOOP")")
WL="dd if=/dev/zero of=$LOOP bs=64k count=200 oflag=direct 2>/dev/null &&
    dd if=$LOOP of=/dev/null bs=64k count=200 iflag=direct 2>/dev/null"

# record_full FILE ARGS...: a recording whose dd I/Os all completed.  With
# -g each I/O leaves some 4 samples of 16 KB stack copies in dd's rings
# (26 MB for the 400 I/Os, in well under a second): -m 8192 (32 MiB a CPU)
# holds them all even when the drain is held up.
record_full() {
	local out=$1; shift
	for try in 1 2 3; do
		"$EMBER" record --block -d "$LOOP" -m 8192 -o "$out" "$@" -- sh -c "$WL" \
			>/dev/null 2>"$TMP/rec.err" || continue
		"$EMBER" bio -i "$out" --comm dd >"$TMP/btt" 2>&1 || continue
		grep -q '^left out: 0 issued but never seen completing, 0 queued but never issued, 0 superseded' \
			"$TMP/btt" && grep -q ' 0 lost' "$TMP/rec.err" && return 0
	done
	return 1
}

F=$TMP/bio.data
if ! record_full "$F" -g; then
	fail "record" "no complete recording in 3 tries: $(grep '^left out' "$TMP/btt") $(tail -1 "$TMP/rec.err")"
	exit 0
fi
pass "record --block -d $LOOP -g: every dd I/O seen from queue to completion"

# -d is a kernel filter: only the loop device's events are in the file.
"$EMBER" script -i "$F" >"$TMP/script" 2>&1
others=$(grep -E 'block:block_' "$TMP/script" | grep -vc " $majmin ")
check "-d: every block event is of $majmin ($others others)" test "$others" = 0
check "-g: block events carry kernel call chains" grep -q 'submit_bio' "$TMP/script"

check "btt: writes 200 (13107200 bytes)" grep -q 'writes 200 (13107200 bytes)' "$TMP/btt"
check "btt: reads 200 (13107200 bytes)" grep -q 'reads 200 (13107200 bytes)' "$TMP/btt"
check "btt: 400 completed I/Os, 400 requests" \
	grep -q '^I/Os: 400 completed, 26214400 bytes' "$TMP/btt"

# Per I/O: stamps in order, one line per I/O, phases sum to Q2C.
"$EMBER" bio -i "$F" --comm dd --snoop --csv >"$TMP/csv" 2>&1
read -r rows bad w r < <(awk -F, 'NR > 1 { n++
	if (!($10 <= $11 && $11 <= $12 && $12 <= $13 && $13 <= $14)) b++
	if ($5 ~ /W/) w++; else if ($5 ~ /R/) r++ }
	END { print n + 0, b + 0, w + 0, r + 0 }' "$TMP/csv")
check "snoop: 400 I/Os (200 W, 200 R), Q<=G<=I<=D<=C for all ($rows rows, $w W, $r R, $bad out of order)" \
	test "$rows" = 400 -a "$bad" = 0 -a "$w" = 200 -a "$r" = 200
# The table's shares of Q2C add up to the whole; its phases count as
# btt's do (no insert events with the loop device's scheduler none: no
# G2I, no I2D), one for each of the 400 I/Os (none merged).
read -r sum ns < <(awk '$1 ~ /^(Q2G|D2C|Q2C)$/ { n[$5]++ }
	/^share of Q2C/ { gsub("%", ""); for (i = 5; i <= NF; i += 2) s += $i }
	END { print s, length(n) "" (400 in n) }' "$TMP/btt")
check "btt: the shares of Q2C add up to 100% ($sum); Q2G, D2C and Q2C N 400 ($ns)" \
	eval 'within "$sum" 100 0.03 && test "$ns" = 11'
# D2C against an independent pairing of issue and completion events.
if have_perf && perf script --ns -i "$F" -F time,event,trace >"$TMP/perf" 2>/dev/null; then
	ref=$(awk '{ t = $1; sub(":", "", t); s = ""
		for (i = 2; i <= NF; i++) if ($i == "+") s = $(i - 1)
		if (s == "") next
		if ($2 ~ /block_rq_issue/) d[s] = t
		else if ($2 ~ /block_rq_complete/ && (s in d)) { sum += t - d[s]; n++; delete d[s] } }
		END { printf "%.9f %d", n ? sum / n : 0, n }' "$TMP/perf")
	"$EMBER" bio -i "$F" >"$TMP/btt-all" 2>&1
	d2c=$(awk '$1 == "D2C" { print $3, $5 }' "$TMP/btt-all")
	set -- $ref; rd=$1 rn=$2; set -- $d2c
	check "D2C: $2 requests, AVG $1 s; perf script pairs $rn, AVG $rd s (within 1%)" \
		test "$2" = "$rn" -a "$(awk -v a="$1" -v b="$rd" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d <= b / 100) }')" = 1
else
	skip "d2c-perf" "perf cannot read the recording"
fi

"$EMBER" bio -i "$F" --comm dd --hist -F >"$TMP/hist" 2>&1
hw=$(awk '/^flags = W/ { f = 1; next } /^flags/ { f = 0 } f && / -> / { n += $5 } END { print n + 0 }' "$TMP/hist")
hr=$(awk '/^flags = R/ { f = 1; next } /^flags/ { f = 0 } f && / -> / { n += $5 } END { print n + 0 }' "$TMP/hist")
check "--hist -F: the W histograms hold 200 requests ($hw), the R ones 200 ($hr)" \
	test "$hw" = 200 -a "$hr" = 200

"$EMBER" bio -i "$F" --comm dd --size >"$TMP/size" 2>&1
check "--size: dd queued 400 I/Os, all in 64 -> 127 KiB" \
	eval 'grep -q "^Process name = dd: 400 I/Os" "$TMP/size" && grep -Eq "^ +64 -> 127 +: 400 " "$TMP/size"'
"$EMBER" bio -i "$F" --comm dd --seek >"$TMP/seek" 2>&1
check "--seek: 398 of 399 sequential (the reads start over at sector 0)" \
	grep -q ': 399 I/Os after the first, 398 sequential' "$TMP/seek"
"$EMBER" bio -i "$F" --errors >"$TMP/errors" 2>&1
check "--errors: no failed requests" grep -q '^0 failed requests' "$TMP/errors"

"$EMBER" bio -i "$F" --comm dd --heatmap "$TMP/heat.svg" >/dev/null 2>&1
cells=$(python3 - "$TMP/heat.svg" <<'PY' 2>&1
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
print(sum(int(re.match(r"(\d+) I/Os", t.text).group(1)) for t in root.iter(ns + "title")))
PY
)
check "--heatmap: well-formed SVG whose cells hold the 400 requests ($cells)" test "$cells" = 400

# Completions never seen: a recording that drops the completions of the
# first 50 writes' sectors.  The reads of those sectors take their places
# (the writes' completions counted lost) and then miss their own.
P=$TMP/part.data
ev=block:block_bio_queue,block:block_getrq,block:block_rq_insert,block:block_rq_issue
if "$EMBER" record -a -m 1024 -o "$P" -e "$ev" --filter "dev == $(( $(stat -c 0x%t "$LOOP") << 20 | $(stat -c 0x%T "$LOOP") ))" \
	-e block:block_rq_complete --filter "sector >= 6400" -- sh -c "$WL" >/dev/null 2>&1; then
	"$EMBER" bio -i "$P" --comm dd >"$TMP/part" 2>&1
	if grep -q '^I/Os: 300 completed' "$TMP/part" &&
	   grep -q '^left out: 50 issued but never seen completing, 0 queued but never issued, 50 superseded' "$TMP/part"; then
		pass "completions never seen: 100 I/Os counted as left out, 300 measured"
	else
		fail "lost completions" "$(grep -E '^(I/Os|left out)' "$TMP/part")"
	fi
else
	skip "lost completions" "the recording with filtered completions failed"
fi

"$EMBER" bio -i "$F" --hist --csv >/dev/null 2>&1
check "usage: --csv without --snoop exits 2" test $? = 2
"$EMBER" record --block -p 1 -o "$TMP/x.data" >/dev/null 2>&1
check "usage: --block with -p exits 2" test $? = 2
