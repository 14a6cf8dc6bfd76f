#!/usr/bin/env bash
# live-offcpu.sh - ember offcpu while it records: following a command
# (-- sleeper 20 10: 20 sleeps of 10 ms), --threads shows the sleeper's 20
# or more off-CPU intervals and at least the 200 ms it slept, with no file
# between the recorder and the view, and the live line after it.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-offcpu "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip live-offcpu "no tracefs"; exit 0; }

"$EMBER" offcpu --threads -- "$WORKLOADS/sleeper" 20 10 >"$TMP/out" 2>"$TMP/err"
rc=$?
read -r off n <<<"$(awk '$3 == "sleeper" { print $6, $8 }' "$TMP/out")"
check "offcpu --threads -- sleeper 20 10 (exit $rc): ${n:-no} intervals, ${off:-no} ms off-CPU (want >= 20, >= 200)" \
	awk -v o="${off:-0}" -v n="${n:-0}" -v rc="$rc" 'BEGIN { exit !(rc == 0 && n >= 20 && o >= 200) }'
check "the live line follows the view" grep -q '^# live: ' "$TMP/out"

# --interval: a table per interval, each off-CPU interval in the one it
# ended in, so the intervals' counts add up to the whole run's (offcpu -i
# on the stream it kept); -- command's exit status passed on.
"$EMBER" offcpu --interval 0.1 -o "$TMP/oc.data" -- "$WORKLOADS/sleeper" 20 10 \
	>"$TMP/iv" 2>"$TMP/iv.err"
rc=$?
"$EMBER" offcpu -i "$TMP/oc.data" >"$TMP/whole" 2>/dev/null
tables=$(grep -c '^# live: ' "$TMP/iv")
sum=$(awk '/ off-CPU intervals shown/ { s += $2 } END { print s + 0 }' "$TMP/iv")
whole=$(awk '/ off-CPU intervals shown/ { print $2 }' "$TMP/whole")
check "offcpu --interval 0.1 -- sleeper 20 10 (exit $rc): $tables tables, $sum intervals in all = ${whole:-no} in offcpu -i of its file (>= 20)" \
	awk -v t="$tables" -v s="$sum" -v w="${whole:-0}" -v rc="$rc" \
	'BEGIN { exit !(rc == 0 && t >= 2 && s == w && w >= 20) }'
"$EMBER" offcpu --interval 0.2 --count 2 -a >"$TMP/count" 2>/dev/null
rc=$?
check "offcpu -a --interval 0.2 --count 2 (exit $rc): 2 tables" \
	test "$rc" -eq 0 -a "$(grep -c '^# live: ' "$TMP/count")" -eq 2
"$EMBER" offcpu -- sh -c 'exit 3' >/dev/null 2>&1
rc=$?
check "offcpu -- sh -c 'exit 3' exits 3 (got $rc), as record does" test "$rc" -eq 3
