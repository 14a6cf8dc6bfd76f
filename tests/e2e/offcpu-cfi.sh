#!/usr/bin/env bash
# offcpu-cfi.sh - off-CPU stacks, and the wakers', unwound with the
# binaries' CFI while recording (live --call-graph dwarf, record
# --off-cpu -g), as record -g's, so code built without frame pointers
# shows whole stacks (#36), by default live and recorded; --call-graph
# fp keeps the frame-pointer walk, which a storm of switches can afford.  A program built here with -O2
# -fomit-frame-pointer: main -> middle -> waker() writes a pipe 10 times,
# 20 ms apart (usleep), and its thread reader -> reader_wait blocks in read
# on that pipe each time.  By construction the reader is off-CPU about
# 200 ms, woken each time from waker;middle;main, and main about 200 ms in
# usleep under waker;middle;main.
# parallel-safe
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip offcpu-cfi "needs root for sched tracepoints"; exit 0; }
ensure_tracefs || { skip offcpu-cfi "no tracefs"; exit 0; }
command -v cc >/dev/null || { skip offcpu-cfi "no C compiler"; exit 0; }

cat >"$TMP/nofp.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static int fds[2];
static volatile int sink;
__attribute__((noinline)) static void reader_wait(void)
{
	char c;
	for (int i = 0; i < 10; i++)
		sink += read(fds[0], &c, 1);
}
__attribute__((noinline)) static void *reader(void *arg)
{
	reader_wait();
	sink++;
	return arg;
}
__attribute__((noinline)) static void waker(void)
{
	for (int i = 0; i < 10; i++) {
		usleep(20000);
		sink += write(fds[1], "x", 1);
	}
}
__attribute__((noinline)) static void middle(void)
{
	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	waker();
	pthread_join(t, NULL);
	sink++;
}
int main(void)
{
	if (pipe(fds))
		return 1;
	middle();
	sink++;
	return 0;
}
C
cc -O2 -g -fomit-frame-pointer -pthread -o "$TMP/nofp" "$TMP/nofp.c" ||
	{ fail offcpu-cfi-build "cc failed"; exit 0; }

# us FILE PATTERN...: the microseconds of the folded lines holding every
# PATTERN (fixed strings).
us() {
	local f=$1; shift
	awk -v pats="$*" 'BEGIN { n = split(pats, p, " ") }
		/^#/ { next }
		{ for (i = 1; i <= n; i++) if (!index($0, p[i])) next; t += $NF }
		END { print t + 0 }' "$f"
}

# checks FILE HOW: the reader's wait, its waker's stack and main's sleep.
checks() {
	local f=$1 how=$2 read joined woken sleep
	read=$(us "$f" ";reader;reader_wait;read;")
	joined=$(us "$f" ";reader;reader_wait;read;" ";--;")
	woken=$(us "$f" ";reader;reader_wait;read;" ";--;" ";waker;middle;main;")
	sleep=$(us "$f" ";main;middle;waker;usleep;")
	check "$how: the reader blocked in reader_wait at least 150 ms ($read us)" \
		test "$read" -ge 150000
	# Both threads run on one CPU (taskset): a wakeup of a task on
	# another CPU may be queued there and fire in another task's time,
	# untraced (under load the recorded file joined under half the waits
	# so).
	check "$how: at least 90% of the woken waits' wakers are waker;middle;main ($woken of $joined us)" \
		test $((joined * 2)) -ge "$read" -a $((woken * 10)) -ge $((joined * 9))
	check "$how: main;middle;waker;usleep at least 150 ms ($sleep us)" \
		test "$sleep" -ge 150000
}

command -v taskset >/dev/null || { skip offcpu-cfi "taskset (util-linux) is missing"; exit 0; }
"$EMBER" offcpu --wakers --folded --call-graph dwarf -- taskset -c 0 "$TMP/nofp" >"$TMP/live" 2>"$TMP/live.err"
checks "$TMP/live" "live --call-graph dwarf"

"$EMBER" record -q --off-cpu=wakers -g -o "$TMP/w.data" -- taskset -c 0 "$TMP/nofp" >/dev/null 2>&1
"$EMBER" offcpu --wakers --folded -i "$TMP/w.data" >"$TMP/file" 2>/dev/null
checks "$TMP/file" "record --off-cpu=wakers -g"

# The defaults, live and recorded, are the same whole stacks.
"$EMBER" offcpu --wakers --folded -- taskset -c 0 "$TMP/nofp" >"$TMP/dflt" 2>/dev/null
checks "$TMP/dflt" "live, the default"
"$EMBER" record -q --off-cpu=wakers -o "$TMP/d.data" -- taskset -c 0 "$TMP/nofp" >/dev/null 2>&1
"$EMBER" offcpu --wakers --folded -i "$TMP/d.data" >"$TMP/dfile" 2>/dev/null
checks "$TMP/dfile" "record --off-cpu=wakers, the default"

# The frame-pointer walk (--call-graph fp) loses these frames.
"$EMBER" offcpu --folded --call-graph fp -- "$TMP/nofp" >"$TMP/fp" 2>/dev/null
sleep_fp=$(us "$TMP/fp" ";main;middle;waker;usleep;")
all_fp=$(us "$TMP/fp" ";")
check "--call-graph fp: under 10% of the time under main;middle;waker ($sleep_fp of $all_fp us)" \
	test "$all_fp" -gt 0 -a $((sleep_fp * 10)) -lt "$all_fp"
"$EMBER" offcpu --call-graph fp -i "$TMP/w.data" >/dev/null 2>"$TMP/e"; rc=$?
check "--call-graph with -i: exit 2, one line naming record --call-graph fp" \
	eval 'test $rc -eq 2 && grep -q "record --call-graph fp" "$TMP/e" && test "$(wc -l <"$TMP/e")" -eq 1'

if [ -x /usr/bin/python3 ]; then
	"$EMBER" offcpu --folded --call-graph dwarf -- /usr/bin/python3 -c \
		'import time
for i in range(20): time.sleep(0.01)' >"$TMP/py" 2>/dev/null
	all=$(us "$TMP/py" ";")
	whole=$(us "$TMP/py" "__libc_start_call_main")
	check "Debian's python3 sleeping, --call-graph dwarf: at least 90% of its off-CPU time reaches main ($whole of $all us)" \
		test "$all" -gt 0 -a $((whole * 10)) -ge $((all * 9))
else
	skip offcpu-cfi-python "no /usr/bin/python3"
fi
