#!/usr/bin/env bash
# tools-syscount.sh - ember syscount: a program that calls getppid exactly
# 12345 times gives exactly 12345 getppid; -L a plausible time (at least
# 50 ns a call); -P the process; live and offline the same; the count
# equals perf script's on the same file; --interval/--count print
# intervals, live on a quiet target too (ticks on the engine's clock).
# Counting mode (live, no -L/-P/-o: counters, not samples): exactly 12345
# for a command and for -p, exactly 150000 where the sampling path loses
# some, names as the sampling path's (the kernel's newstat is stat), and a
# syscall newer than the build's headers by its name.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-syscount "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-syscount "no tracefs"; exit 0; }
busy_cpus 60

F=$TMP/sys.data
"$EMBER" syscount -L -o "$F" -- "$WORKLOADS/toolwork" getppid 12345 >"$TMP/live" 2>"$TMP/err"
if grep -q lost "$TMP/err"; then
	skip tools-syscount "events lost at the ring: $(head -1 "$TMP/err")"
	exit 0
fi
n=$(awk '$1 == "getppid" { print $2 }' "$TMP/live")
check "getppid counted exactly 12345 times ($n)" test "$n" = 12345
avg=$(awk '$1 == "getppid" { print $4 }' "$TMP/live")
check "-L: each call takes at least 50 ns on average ($avg us)" \
	awk -v a="$avg" 'BEGIN { exit !(a >= 0.05 && a < 1000) }'
"$EMBER" syscount -L -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
if have_perf && perf script -i "$F" -F event,trace >"$TMP/ps" 2>/dev/null; then
	ref=$(grep -c 'raw_syscalls:sys_enter: *NR 110 ' "$TMP/ps")
	check "perf script finds the same getppid entries in the file ($ref)" test "$ref" = "$n"
else
	skip tools-syscount-perf "perf cannot read the file here"
fi
"$EMBER" syscount -P -i "$F" >"$TMP/P" 2>/dev/null
pn=$(awk '$2 == "toolwork" { print $3 }' "$TMP/P")
check "-P: the process made at least the 12345 calls ($pn)" test "${pn:-0}" -ge 12345
"$EMBER" syscount -i "$F" --interval 0.0005 --count 2 >"$TMP/int" 2>/dev/null
check "--interval with --count 2 prints two intervals" test "$(grep -c '^\[' "$TMP/int")" = 2
"$EMBER" syscount --count 2 -i "$F" >/dev/null 2>&1
check "--count without --interval is a usage error" test $? = 2

# Counting mode, beside the spinners.
"$EMBER" syscount -- "$WORKLOADS/toolwork" getppid 12345 >"$TMP/cnt" 2>"$TMP/cerr"
n=$(awk '$1 == "getppid" { print $2 }' "$TMP/cnt")
check "counting mode, a command: exactly 12345 getppid ($n), no warning" \
	test "$n" = 12345 -a -z "$(grep -v '^toolwork:' "$TMP/cerr")"
check "counting mode: the command's output on stderr, as live tools put it" \
	grep -q '^toolwork: getppid' "$TMP/cerr"
"$EMBER" syscount -- "$TMP/no-such-program" >/dev/null 2>"$TMP/nocmd"
rc=$?
check "counting mode: a missing command is a usage error naming it (exit $rc)" \
	test "$rc" = 2 -a "$(grep -c no-such-program "$TMP/nocmd")" = 1
# -p: a shell held at a fifo until the counters are open (ember's
# descriptors are there), then it becomes the workload.
mkfifo "$TMP/go"
sh -c 'read x <"$1"; exec "$2" getppid 12345' sh "$TMP/go" "$WORKLOADS/toolwork" >/dev/null &
held=$!
"$EMBER" syscount -p "$held" >"$TMP/cntp" 2>&1 &
ep=$!
for _ in $(seq 100); do
	[ "$(ls /proc/$ep/fd 2>/dev/null | wc -l)" -gt 300 ] && break
	sleep 0.05
done
sleep 0.2
echo go >"$TMP/go"
wait "$ep"
n=$(awk '$1 == "getppid" { print $2 }' "$TMP/cntp")
check "counting mode, -p: exactly 12345 getppid ($n)" test "$n" = 12345
"$EMBER" syscount -- "$WORKLOADS/toolwork" getppid 150000 >"$TMP/big" 2>"$TMP/bigerr"
n=$(awk '$1 == "getppid" { print $2 }' "$TMP/big")
check "counting mode, 150000 calls: exactly 150000 ($n)" \
	test "$n" = 150000 -a -z "$(grep -v '^toolwork:' "$TMP/bigerr")"
"$EMBER" syscount -L -- "$WORKLOADS/toolwork" getppid 12345 >"$TMP/bigL" 2>"$TMP/bigLerr"
check "-L live samples: it has the time columns" grep -q 'TOTAL (us)' "$TMP/bigL"
"$EMBER" syscount -P -- "$WORKLOADS/toolwork" getppid 12345 >"$TMP/Plive" 2>/dev/null
pn=$(awk '$2 == "toolwork" { print $3 }' "$TMP/Plive")
check "-P live samples: the process made at least 12345 calls ($pn)" test "${pn:-0}" -ge 12345
# Names: stat, lstat and uname have the tracepoints newstat, newlstat and
# newuname; counting mode names them as the sampling path (-L) does from
# the build's table.  cachestat (Linux 6.5) is newer than Debian 12's
# headers: the sampling path can only say [451], counting mode has the
# tracepoint's name.
if command -v perl >/dev/null; then
	prog='my $b = "\0" x 512; my $p = "/"; syscall(451, -1, 0, 0, 0) for 1 .. 3;
		for (1 .. 2) { syscall(4, $p, $b) } for (1 .. 5) { syscall(6, $p, $b) }
		for (1 .. 4) { syscall(63, $b) }'
	"$EMBER" syscount -T 1000 -- perl -e "$prog" >"$TMP/names" 2>&1
	"$EMBER" syscount -L -T 1000 -- perl -e "$prog" >"$TMP/namesL" 2>&1
	rows() { awk '$1 ~ /^(stat|lstat|uname)$/ { print $1, $2 }' "$1" | sort | tr '\n' ' '; }
	check "counting mode names newstat, newlstat, newuname as -L does: $(rows "$TMP/names")" \
		test "$(rows "$TMP/names")" = "$(rows "$TMP/namesL")" -a \
		"$(rows "$TMP/names")" = "lstat 5 stat 2 uname 4 "
	if [ -d /sys/kernel/tracing/events/syscalls/sys_enter_cachestat ]; then
		check "counting mode names a syscall the headers lack: cachestat 3" \
			grep -Eq '^cachestat +3$' "$TMP/names"
	else
		skip tools-syscount-newer "no cachestat tracepoint here"
	fi
else
	skip tools-syscount-names "no perl here"
fi
idle_cpus
# A sleeping process makes no syscall: the intervals still end on time
# (the timeout only keeps a broken build from hanging the suite).
sleep 60 &
quiet=$!
timeout 15 "$EMBER" syscount --interval 1 --count 3 -p "$quiet" >"$TMP/quiet" 2>"$TMP/qerr"
rc=$?
kill "$quiet" 2>/dev/null
check "live --interval 1 --count 3 on a sleeping pid: 3 intervals (exit $rc)" \
	test "$(grep -c '^\[' "$TMP/quiet")" = 3 -a "$rc" = 0
