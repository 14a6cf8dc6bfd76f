#!/usr/bin/env bash
# live-report.sh - ember report while it records (no file between): a live
# report -a --duration 3 -o FILE prints the table that report -i FILE
# prints of the recording it kept; --interval gives a table per interval
# with the live path's counts; Ctrl-C prints what was gathered and exits 0.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-report "needs root for system-wide sampling"; exit 0; }

"$WORKLOADS/ratio" 8 >/dev/null &
RATIO=$!
trap 'kill $RATIO 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.2

# Up to 2 tries: a file another build on the machine replaces between the
# live run and the reading of the file names its frames differently (the
# live view opened it as it was mapped); each failed try is named.
F=$TMP/live.data
tries=
for try in 1 2; do
	if ! "$EMBER" report -a --duration 3 -o "$F" >"$TMP/live.out" 2>"$TMP/live.err"; then
		tries+="try $try: exit $?: $(head -2 "$TMP/live.err"); "
		continue
	fi
	grep -v '^# live: ' "$TMP/live.out" >"$TMP/live.table"
	"$EMBER" report -i "$F" >"$TMP/file.table" 2>"$TMP/file.err"
	if [ -s "$TMP/live.table" ] && grep -q leaf_a "$TMP/live.table" &&
	   cmp -s "$TMP/live.table" "$TMP/file.table"; then
		tries=ok
		break
	fi
	tries+="try $try: $(diff "$TMP/live.table" "$TMP/file.table" | head -5 | tr '\n' ' '); "
done
if [ "$tries" = ok ]; then
	pass "live report -a --duration 3 -o FILE: its table ($(grep -c '%' "$TMP/live.table") rows) equals report -i FILE (try $try)"
	if have_perf; then
		pe=$(perf report -i "$F" --stdio 2>/dev/null | awk '/ ratio .*\[\.\] leaf_a$/ { print $1; exit }')
		em=$(awk '/ ratio .*\[\.\] leaf_a$/ { print $1; exit }' "$TMP/live.table")
		check "perf reads the kept stream: leaf_a ${pe:-missing} in perf report, ${em:-missing} in the live table" \
			test -n "$pe" -a "$pe" = "$em"
	fi
	check "the live report says what the live path lost and holds" \
		grep -Eq '^# live: [0-9]+ samples lost since the last table \([0-9]+ in all\), [0-9]+ KB recorded and not read yet' "$TMP/live.out"
else
	fail "live report equals report -i" "$tries"
fi

"$EMBER" report -a --interval 1 --count 2 -s sym >"$TMP/iv.out" 2>"$TMP/iv.err"
tables=$(grep -c '^# Samples: ' "$TMP/iv.out")
lives=$(grep -c '^# live: ' "$TMP/iv.out")
with_leaf=$(awk '/^# Samples: / { n++ } /leaf_a/ { seen[n] = 1 } END { c = 0; for (k in seen) c++; print c }' "$TMP/iv.out")
check "report -a --interval 1 --count 2: 2 tables ($tables), each with leaf_a ($with_leaf) and its live counts ($lives)" \
	test "$tables" = 2 -a "$with_leaf" = 2 -a "$lives" = 2

"$EMBER" report -a -s sym >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
check "Ctrl-C: exit 0 ($rc) with the table of what was gathered" \
	test "$rc" = 0 -a "$(grep -c '^# Samples: ' "$TMP/int.out")" = 1
grep -q leaf_a "$TMP/int.out" || fail "Ctrl-C table" "no leaf_a in it"

"$EMBER" report -a -- "$WORKLOADS/ratio" 1 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
check "report -a -- command: ends with the command, table printed (rc $?)" \
	grep -q leaf_a "$TMP/cmd.out"

"$EMBER" report -o "$TMP/x.data" >/dev/null 2>"$TMP/bad.err"
rc=$?
check "-o without a target: usage error ($rc) naming the fix" \
	test "$rc" = 2 -a -n "$(grep -- '-a, -C' "$TMP/bad.err")"
"$EMBER" report -p 999999999 >/dev/null 2>"$TMP/nopid.err"
rc=$?
check "a live report of a pid that does not exist: exit 2 ($rc), one line" \
	test "$rc" = 2 -a "$(wc -l <"$TMP/nopid.err")" = 1

# -- command's exit status passed on, as record passes it: its own, or 128
# + a signal it died of; 0 when --duration ended it; a tool's too.
st() { "$@" >/dev/null 2>&1; echo $?; }
a=$(st "$EMBER" report -- sh -c 'exit 3')
b=$(st "$EMBER" report -- sh -c 'kill -TERM $$')
c=$(st "$EMBER" report --duration 0.5 -- sleep 5)
d=$(st "$EMBER" sched lat -- sh -c 'exit 4')
e=$(st "$EMBER" execsnoop -- sh -c 'exit 5')
check "exit status of -- command: report 'exit 3' $a, killed by SIGTERM $b, ended by --duration $c, sched lat 'exit 4' $d, execsnoop 'exit 5' $e" \
	test "$a/$b/$c/$d/$e" = "3/143/0/4/5"
