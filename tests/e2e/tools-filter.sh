#!/usr/bin/env bash
# tools-filter.sh - the tools' filters: on a recording (-i) -p and -C pick
# events (live they are targets), and --tid, --comm, --time everywhere,
# through the replay's shared filter layer; a tool whose figures belong to
# no task (softirqs, hardirqs, writeback) refuses the task filters with one
# line and exit 2.  Known by construction: two copies of toolwork, twa on
# CPU 0 calling getppid 1000 times, then twb on CPU 1 calling it 3000
# times, 0.3 s apart.  Before, -p and -C with -i were usage errors and
# --tid, --comm and --time unknown options.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-filter "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-filter "no tracefs"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip tools-filter "needs 2 CPUs"; exit 0; }
busy_cpus 60

cp "$WORKLOADS/toolwork" "$TMP/twa" && cp "$WORKLOADS/toolwork" "$TMP/twb"
F=$TMP/f.data
"$EMBER" syscount -o "$F" -- sh -c "taskset -c 0 $TMP/twa getppid 1000; sleep 0.3;
	taskset -c 1 $TMP/twb getppid 3000" >/dev/null 2>"$TMP/err"
if grep -q lost "$TMP/err"; then
	skip tools-filter "events lost at the ring: $(head -1 "$TMP/err")"
	exit 0
fi
getppid() { "$EMBER" syscount -i "$F" "$@" 2>/dev/null | awk '$1 == "getppid" { print $2 }'; }
# The processes' ids and times from the recording itself.
"$EMBER" script -i "$F" >"$TMP/script" 2>/dev/null
pa=$(awk '$1 == "twa" { print $2; exit }' "$TMP/script")
pb=$(awk '$1 == "twb" { print $2; exit }' "$TMP/script")
mid=$(awk '$1 == "twa" { a = $4 + 0 } $1 == "twb" && !b { b = $4 + 0 }
	END { printf "%.6f", (a + b) / 2 }' "$TMP/script")

n=$(getppid -p "$pa")
check "-i with -p twa's pid: its 1000 getppid ($n)" test "$n" = 1000
n=$(getppid --pid "$pa,$pb")
check "-i with --pid both: 4000 ($n)" test "$n" = 4000
n=$(getppid --tid "$pb")
check "-i with --tid twb's: 3000 ($n)" test "$n" = 3000
n=$(getppid --comm twa)
check "-i with --comm twa: 1000 ($n)" test "$n" = 1000
n=$(getppid --comm twa,twb)
check "-i with --comm twa,twb: 4000 ($n)" test "$n" = 4000
"$EMBER" syscount -i "$F" --comm twb --time ",$mid" >"$TMP/before" 2>&1
check "-i with --comm twb and --time before twb ran: a table without getppid" \
	test $? = 0 -a "$(grep -c SYSCALL "$TMP/before")" = 1 -a "$(grep -c getppid "$TMP/before")" = 0
n=$(getppid --comm twb --time "$mid,")
check "-i with --comm twb and --time after twa ran: 3000 ($n)" test "$n" = 3000
# sh calls getppid once too, on either CPU: at least the pinned ones.
n=$(getppid -C 0 --comm twa,twb)
check "-i with -C 0: twa's 1000 ($n)" test "$n" = 1000
n=$(getppid --cpu 1 --comm twa,twb)
check "-i with --cpu 1: twb's 3000 ($n)" test "$n" = 3000
"$EMBER" exitsnoop -i "$F" --comm x >/dev/null 2>&1   # a syscount file: no exit events
check "a filter on a file the tool cannot read is still exit 1, not 2" test $? = 1
# Not a filter, but the file has what it needs: -P names a process as it
# is last (BCC reads /proc/PID/comm), the program sh exec'd, not "sh".
"$EMBER" syscount -P -i "$F" >"$TMP/P" 2>/dev/null
check "syscount -P: twa's process is named twa ($(awk -v p="$pa" '$1 == p' "$TMP/P"))" \
	test "$(awk -v p="$pa" '$1 == p { print $2 }' "$TMP/P")" = twa

# Live: --comm is a filter of the live stream; counting mode, which
# cannot filter, gives way to the sampling path.
n=$("$EMBER" syscount --comm twb -- sh -c "$TMP/twa getppid 1000; $TMP/twb getppid 3000" \
	2>/dev/null | awk '$1 == "getppid" { print $2 }')
check "live --comm twb: 3000 ($n)" test "$n" = 3000

# cpudist counts switch records, not samples: it applies the filter itself.
C=$TMP/c.data
"$EMBER" cpudist -o "$C" -- sh -c "$TMP/twa runsleep 5 20; $TMP/twb runsleep 5 20" >/dev/null 2>&1
"$EMBER" cpudist -P -i "$C" --comm twa >"$TMP/cd" 2>/dev/null
check "cpudist -P --comm twa: only twa's histogram ($(grep '^pid' "$TMP/cd" | tr '\n' ' '))" \
	test "$(grep -c '^pid = ' "$TMP/cd")" = 1 -a "$(grep -c '^pid = [0-9]* twa$' "$TMP/cd")" = 1

# Every tool takes every filter on a file, or refuses it in one line
# (exit 2); none says the option is unknown.
bad=
for tool in execsnoop opensnoop syscount exitsnoop cpudist softirqs hardirqs funccount \
	oomkill drsnoop writeback stackcount; do
	for opt in "-p 1" "--pid 1" "--tid 1" "--comm x" "--cpu 0" "--time 1,2"; do
		# shellcheck disable=SC2086
		"$EMBER" "$tool" -i "$F" $opt >/dev/null 2>"$TMP/e"
		rc=$?
		case "$tool:$opt" in
		softirqs:--cpu*|hardirqs:--cpu*|writeback:--cpu*|*:--time*) want=honour ;;
		softirqs:*|hardirqs:*|writeback:*) want=refuse ;;
		*) want=honour ;;
		esac
		if [ "$want" = refuse ]; then
			ok=$([ "$rc" = 2 ] && [ "$(wc -l <"$TMP/e")" = 1 ] &&
				grep -q "$tool cannot filter by" "$TMP/e" && echo y)
		else
			ok=$([ "$rc" != 2 ] && echo y)
		fi
		[ "$ok" = y ] || bad="$bad $tool $opt (rc $rc: $(head -1 "$TMP/e"));"
	done
done
check "every tool honours -p --pid --tid --comm --cpu --time on a file or refuses it:${bad:- all as expected}" \
	test -z "${bad:-}"
idle_cpus
