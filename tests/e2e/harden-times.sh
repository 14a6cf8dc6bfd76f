#!/usr/bin/env bash
# tests/e2e/harden-times.sh - one damaged time (a byte of one sample's
# time changed: 3.3 days ahead) in a recording or a stream: the
# --interval views print no more than for the undamaged one, the damage
# named at its byte offset.  (Where a gap is real, a run of 10 or more
# empty intervals is said in one line: unit test test-replay.)  Before, such a file made report --interval
# and bio --interval print hundreds of MB.
L2=
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup harden-times
DAMAGE=$TOP/tests/e2e-damage-time.py

# run NAME CLEAN BAD WANT CMD...: the view (CMD with @ for the input) on
# the clean recording and on the damaged one, 60 s each at most, output
# kept to 1 MB: the damaged one prints no more than the clean one (10% and
# 10 KB of slack), and its stderr says WANT.
run() {
	local name=$1 clean=$2 bad=$3 want=$4; shift 4
	timeout 60 "${@/@/$clean}" 2>/dev/null | head -c 1000000 >"$TMP/$name.clean"
	timeout 60 "${@/@/$bad}" 2>"$TMP/$name.err" | head -c 1000000 >"$TMP/$name.out"
	local a b
	a=$(stat -c %s "$TMP/$name.clean") b=$(stat -c %s "$TMP/$name.out")
	if [ "$b" -le $((a + a / 10 + 10000)) ] && grep -q "$want" "$TMP/$name.err"; then
		pass "$name ($b bytes, $a undamaged; $(grep -m1 "$want" "$TMP/$name.err" | cut -c1-140))"
	else
		fail "$name" "$b bytes printed, $a undamaged; stderr: $(head -c 300 "$TMP/$name.err")"
	fi
}

"$EMBER" record -F 999 -o "$TMP/cpu.data" -- "$WORKLOADS/ratio" 2 >/dev/null 2>&1
off=$(python3 "$DAMAGE" "$TMP/cpu.data" "$TMP/bad.data" 300) ||
	{ fail damage "could not damage the recording: $off"; exit 0; }
named="offset $off: 1 record with a time outside the recording's span"
C=$TMP/cpu.data B=$TMP/bad.data
run report-interval-1 "$C" "$B" "$named" "$EMBER" report -i @ --interval 1 --stdio -g none
run report-interval-0.001 "$C" "$B" "$named" "$EMBER" report -i @ --interval 0.001 --stdio -g none
run collapse "$C" "$B" "$named" "$EMBER" collapse -i @

# A stream has no header span: its times are judged by the ones before
# (an hour past them all is damage).
"$EMBER" record -F 999 -o - -- "$WORKLOADS/ratio" 2 >"$TMP/cpu.stream" 2>/dev/null
off=$(python3 "$DAMAGE" "$TMP/cpu.stream" "$TMP/bad.stream" 300) ||
	{ fail damage-stream "could not damage the stream: $off"; exit 0; }
run stream-interval-0.5 "$TMP/cpu.stream" "$TMP/bad.stream" "offset $off: 1 record with a time" \
	sh -c 'exec "$0" report -i - --interval 0.5 --stdio -g none <"$1"' "$EMBER" @

# Block I/O: btt, histograms and biotop per interval.
WL=$(bio_two_writers "$TMP/pids")
"$EMBER" record --block -d "$LOOP" -m 1024 -o "$TMP/blk.data" -- sh -c "$WL" >/dev/null 2>&1
off=$(python3 "$DAMAGE" "$TMP/blk.data" "$TMP/badblk.data" 100) ||
	{ fail damage-block "could not damage the block recording: $off"; exit 0; }
named="offset $off: 1 record with a time outside the recording's span"
C=$TMP/blk.data B=$TMP/badblk.data
run bio-btt-interval "$C" "$B" "$named" "$EMBER" bio -i @ --interval 1
run bio-hist-interval "$C" "$B" "$named" "$EMBER" bio -i @ --hist --interval 1
run bio-top-interval "$C" "$B" "$named" "$EMBER" bio -i @ --top --interval 1

# A real gap: 0.3 s of work, 2 s asleep, 0.3 s of work, at --interval 0.1:
# the 19 or so empty intervals of the sleep are said in one line, not
# printed as tables, and the work's intervals are all there.
"$EMBER" record -F 999 -o "$TMP/gap.data" -- sh -c "$WORKLOADS/ratio 0.3; sleep 2; $WORKLOADS/ratio 0.3" \
	>/dev/null 2>&1
"$EMBER" report -i "$TMP/gap.data" --interval 0.1 --stdio -g none >"$TMP/gap.out" 2>"$TMP/gap.err"
tables=$(grep -c '^# interval ' "$TMP/gap.out")
said=$(grep -o '[0-9]* empty intervals not shown, in 1 run' "$TMP/gap.err")
n=${said%% *}
if [ -n "$said" ] && [ "${n:-0}" -ge 15 ] && [ "${n:-0}" -le 21 ] && [ "$tables" -ge 5 ] && [ "$tables" -le 12 ]; then
	pass "gap said once ($tables interval tables, '$said')"
else
	fail gap "$tables interval tables; stderr: $(head -c 300 "$TMP/gap.err")"
fi
