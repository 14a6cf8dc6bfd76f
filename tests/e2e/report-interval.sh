#!/usr/bin/env bash
# report-interval.sh - report --interval on a file: each interval's table
# carries its span ("# interval N: FROM - TO s (recording time A - B)"),
# the spans follow each other from the first event, the intervals' event
# counts add up to the whole file's, and each table holds the samples
# whose times (script's) lie in its span.
# parallel-safe: records only its own process and reads its file (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root; then skip report-interval "needs root to record"; exit 0; fi
# 499 Hz: under 1000 samples a 1 s interval, which report counts exactly.
if ! "$EMBER" record -q -F 499 -o "$TMP/r.data" -- "$WORKLOADS/ratio" 2.5 \
	>/dev/null 2>"$TMP/rec.err"; then
	fail report-interval-record "$(head -c 300 "$TMP/rec.err")"
	exit 0
fi
"$EMBER" report -i "$TMP/r.data" --interval 1 --stdio -g none --sort sym \
	>"$TMP/iv.txt" 2>"$TMP/iv.err"
# One line per table: "N FROM TO A B SAMPLES EVENTS" (a table without its
# span line gets "-" for them).
awk '/^# interval / { n = $3; sub(":", "", n); f = $4; t = $6; a = $10; b = $12; sub(/\)/, "", b) }
	/^# Samples: / { s = $3 }
	/^# Event count/ { print (n == "" ? "-" : n), (f == "" ? "-" : f), (t == "" ? "-" : t),
		(a == "" ? "-" : a), (b == "" ? "-" : b), s, $NF; n = f = t = a = b = "" }' \
	"$TMP/iv.txt" >"$TMP/tables"
ntables=$(wc -l <"$TMP/tables")

# Spans: numbered 1.., the first from 0, each from the last one's end,
# 1 s each but the last (up to the last event).
bad=$(awk -v total="$ntables" '{ want = NR == 1 ? "0.000000" : prev; len = $3 - $2
	if ($1 != NR || $2 != want || $3 == "-" || $4 == "-" || len > 1.000001 ||
	    (NR < total && len < 0.999999)) { print "table " NR ": " $0; exit }
	prev = $3 }' "$TMP/tables")
if [ "$ntables" -ge 3 ] && [ -z "$bad" ]; then
	pass "report-interval-spans ($ntables tables: $(awk '{ printf "%s-%s ", $2, $3 }' "$TMP/tables")s)"
else
	fail report-interval-spans "$ntables tables; ${bad:-}; $(head -c 300 "$TMP/iv.err")"
fi

# The intervals add up to the file: event counts sum to report's total.
whole=$("$EMBER" report -i "$TMP/r.data" --stdio -g none --sort sym 2>/dev/null |
	awk '/^# Event count/ { print $NF; exit }')
sum=$(awk '{ s += $7 } END { printf "%.0f", s }' "$TMP/tables")
if [ -n "$whole" ] && [ "$sum" = "$whole" ]; then
	pass "report-interval-sum (intervals' event counts add up to the file's $whole)"
else
	fail report-interval-sum "intervals $sum, whole file ${whole:-none}"
fi

# Each table's samples are script's samples in its recording-time span
# (script prints microseconds: one sample may sit in the microsecond of a
# boundary).
"$EMBER" script -i "$TMP/r.data" -F time 2>/dev/null | tr -d ' :' >"$TMP/times"
bad=$(awk 'NR == FNR { t[NR] = $1; nt = NR; next }
	{ c = 0; for (i = 1; i <= nt; i++) if (t[i] >= $4 && t[i] < $5) c++
	  if ($4 == "-" || c - $6 > 1 || $6 - c > 1) { print "table " FNR ": " $6 " samples, script " c " in " $4 "-" $5; exit } }' \
	"$TMP/times" "$TMP/tables")
if [ "$ntables" -ge 3 ] && [ -z "$bad" ]; then
	pass "report-interval-script (each table's samples are script's in its span, $(wc -l <"$TMP/times") in all)"
else
	fail report-interval-script "${bad:-$ntables tables}"
fi
