#!/usr/bin/env bash
# sched-lat-waits.sh - which waits ember sched lat counts, on workloads
# known by construction: three spinners pinned to one CPU wait runnable
# after every preemption (runqlat counts those; so does perf sched
# latency, compared here), a --time window after the recording's end
# holds no wait, and processes woken by sched_wakeup_new are named by the
# comm the tracepoint carries.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip sched-lat-waits "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip sched-lat-waits "no tracefs"; exit 0; }
command -v taskset >/dev/null || { skip sched-lat-waits "taskset (util-linux) is missing"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip sched-lat-waits "needs 2 CPUs"; exit 0; }

# record_clean FILE CMD...: system-wide, with wakeups, nothing lost.
record_clean() {
	local out=$1; shift
	for try in 1 2 3; do
		"$EMBER" record --off-cpu=wakeups -a -m 2048 -o "$out" -- "$@" >/dev/null 2>"$TMP/rec.err" ||
			continue
		grep -q ' 0 lost' "$TMP/rec.err" && return 0
	done
	return 1
}

# Three spinners on CPU 1 for 1.5 s: each runs a slice, is preempted
# (switched out still runnable) and waits for the other two, over and
# over; it never sleeps, so nearly every wait follows a preemption.
# (A name of its own: other tests may run spin at the same time.)
cp "$WORKLOADS/spin" "$TMP/waitspin"
F=$TMP/spin.data
if ! record_clean "$F" taskset -c 1 "$TMP/waitspin" 3 1.5; then
	skip "preemption waits" "no recording without lost events: $(tail -1 "$TMP/rec.err")"
	exit 0
fi
"$EMBER" offcpu -i "$F" --threads --comm waitspin 2>/dev/null | awk 'NR > 1 && $1 != $2 { print $2 }' >"$TMP/tids"
ntids=$(wc -l <"$TMP/tids")
check "three spinner threads found ($ntids)" test "$ntids" = 3
have_perf && perf sched latency -p -i "$F" >"$TMP/perf" 2>/dev/null || : >"$TMP/perf"
while read -r tid; do
	"$EMBER" sched lat -i "$F" --tid "$tid" >"$TMP/lat" 2>&1
	read -r all wake pre < <(awk '/^run-queue waits/ { for (i = 1; i <= NF; i++) {
		if ($(i + 1) == "measured,") a = $i; if ($(i + 3) == "wakeup,") w = $i
		if ($(i + 3) == "preemption") p = $i } } END { print a + 0, w + 0, p + 0 }' "$TMP/lat")
	check "spinner $tid: $all waits, $pre after a preemption, $wake after a wakeup (>= 50 preemptions)" \
		test "$pre" -ge 50 -a "$all" = "$((wake + pre))"
	ref=$(awk -F'|' -v t="waitspin:$tid" '{ n = $1; gsub(/ /, "", n) } n == t { gsub(/ /, "", $3); print $3 }' "$TMP/perf")
	if [ -z "$ref" ]; then
		skip "spinner $tid against perf sched latency" "perf is not installed or read no such task"
	else
		tol=$(( ref / 10 > 5 ? ref / 10 : 5 ))
		check "spinner $tid: $all waits, perf sched latency $ref switches (within $tol)" \
			test "$(( all > ref ? all - ref : ref - all ))" -le "$tol"
	fi
done <"$TMP/tids"
grep -q '^run-queue waits (as runqlat counts them: from a wakeup, or from a preemption' "$TMP/lat"
check "the header says which waits it counts" test $? = 0
"$EMBER" sched lat -i "$F" --tid "$(head -1 "$TMP/tids")" --waits wakeup >"$TMP/wake" 2>&1
w=$(awk '/^run-queue waits/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "measured,") print $i }' "$TMP/wake")
check "--waits wakeup leaves the preemptions out: ${w:-?} waits (< 10)" test "${w:-99}" -lt 10

# A window after the recording's end: nothing in it.
last=$("$EMBER" script -i "$F" -F time 2>/dev/null | tail -1 | tr -d ' :')
after=$(awk -v t="$last" 'BEGIN { printf "%.6f,", t + 10 }')
"$EMBER" sched lat -i "$F" --time "$after" >"$TMP/after" 2>&1
check "--time after the end: no wait measured, no wakeup counted, an empty histogram" \
	eval 'grep -q "^run-queue waits .*: 0 measured," "$TMP/after" && grep -q "^wakeups: 0 recorded" "$TMP/after" &&
	      ! grep -Eq "^ +[0-9]+ -> [0-9]+ +: [1-9]" "$TMP/after"'
# And one inside it keeps only the waits that end there.
first=$("$EMBER" script -i "$F" -F time 2>/dev/null | head -1 | tr -d ' :')
half=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.6f,", (a + b) / 2 }')
measured() { awk '/^run-queue waits/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "measured,") print $i }' "$1"; }
"$EMBER" sched lat -i "$F" --tid "$(head -1 "$TMP/tids")" >"$TMP/whole" 2>&1
"$EMBER" sched lat -i "$F" --tid "$(head -1 "$TMP/tids")" --time "$half" >"$TMP/half" 2>&1
all=$(measured "$TMP/whole") h=$(measured "$TMP/half")
check "--time from the middle: ${h:-?} of the first spinner's $all waits (30% to 70%)" \
	test "${all:-0}" -ge 50 -a "$(( ${h:-0} * 10 ))" -ge "$(( ${all:-0} * 3 ))" -a \
	     "$(( ${h:-0} * 10 ))" -le "$(( ${all:-0} * 7 ))"

# sched_wakeup_new: each /bin/true spawn starts is woken new; its name
# comes from the tracepoint when nothing else named it yet.
busy_cpus 8 || { skip "wakeup_new comm" "chrt (util-linux) is missing"; exit 0; }
if ! record_clean "$TMP/spawn.data" "$WORKLOADS/spawn" 1 20; then
	skip "wakeup_new comm" "no recording without lost events"
	exit 0
fi
idle_cpus
"$EMBER" sched lat -i "$TMP/spawn.data" --per-pid >"$TMP/pids" 2>&1
unknown=$(grep -c '^pid = [0-9]* \[unknown\]$' "$TMP/pids")
named=$(grep -Ec '^pid = [0-9]+ (spawn|true)$' "$TMP/pids")
check "--per-pid: $named processes named spawn or true (>= 20), $unknown [unknown] (0)" \
	test "$named" -ge 20 -a "$unknown" = 0
