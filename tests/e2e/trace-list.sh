#!/usr/bin/env bash
# trace-list.sh - ember trace -l and -lv, the probes of bpftrace's language:
# every tracepoint of tracefs once (ftrace's own events left out), each
# one's fields as its format file declares them without the common_ ones;
# the functions of a library built here, known by construction; one glob
# over whole names; kprobe patterns and a missing -l refused with exit 2.
# Beside Debian's bpftrace where it is installed: -l and -lv of every
# tracepoint byte for byte the same.
# parallel-safe
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip trace-list "needs root for tracefs"; exit 0; }
ensure_tracefs || { skip trace-list "no tracefs"; exit 0; }
TFS=/sys/kernel/tracing
[ -d "$TFS/events" ] || TFS=/sys/kernel/debug/tracing

"$EMBER" trace -l 't:*' >"$TMP/tps" 2>"$TMP/err"
(cd "$TFS/events" && for d in */*/; do [ -f "$d/format" ] && echo "${d%/}"; done) |
	grep -v '^ftrace/' | sed 's|^\([^/]*\)/|tracepoint:\1:|' | LC_ALL=C sort >"$TMP/want"
check "-l 't:*': every tracepoint of tracefs once, sorted ($(wc -l <"$TMP/tps"))" \
	cmp -s "$TMP/want" "$TMP/tps"

"$EMBER" trace -lv 'tracepoint:sched:sched_switch' >"$TMP/sw"
{ echo tracepoint:sched:sched_switch
  sed -n 's/^\tfield:\([^;]*\);.*/\1/p' "$TFS/events/sched/sched_switch/format" |
	grep -v ' common_' | sed 's/^/    /'; } >"$TMP/sw.want"
check "-lv: sched_switch's fields, as its format file declares them" cmp -s "$TMP/sw.want" "$TMP/sw"
check "-lv: prev_comm as an array, next_pid" \
	eval 'grep -qx "    char prev_comm\[16\]" "$TMP/sw" && grep -q " next_pid$" "$TMP/sw"'

"$EMBER" trace -l 't:syscalls:sys_enter_open*' >"$TMP/open"
check "globs in each part: sys_enter_open, openat, openat2 among them" \
	eval 'grep -qx tracepoint:syscalls:sys_enter_openat "$TMP/open" &&
	      ! grep -v "^tracepoint:syscalls:sys_enter_open" "$TMP/open"'
"$EMBER" trace -l '*sched_switch*' >"$TMP/whole"
check "one glob over whole names: tracepoint:sched:sched_switch" \
	grep -qx tracepoint:sched:sched_switch "$TMP/whole"

if command -v cc >/dev/null; then
	printf 'int lib_alpha(int x) { return x + 1; }\nint lib_beta(int x) { return x * 2; }\nint other(void) { return 0; }\n' >"$TMP/l.c"
	cc -shared -fPIC -o "$TMP/libl.so" "$TMP/l.c"
	"$EMBER" trace -l "u:$TMP/libl.so:lib_*" >"$TMP/u"
	printf 'uprobe:%s:lib_alpha\nuprobe:%s:lib_beta\n' "$TMP/libl.so" "$TMP/libl.so" >"$TMP/u.want"
	check "uprobe: a library's functions by glob, sorted" cmp -s "$TMP/u.want" "$TMP/u"
else
	skip trace-list-uprobe "no C compiler"
fi

"$EMBER" trace -l 'kprobe:vfs_read' >/dev/null 2>"$TMP/k"; rc=$?
check "kprobe: exit 2, one line naming kprobe and the tracepoints instead" \
	eval 'test $rc -eq 2 && test "$(wc -l <"$TMP/k")" -eq 1 && grep -q "kprobe" "$TMP/k"'
"$EMBER" trace >/dev/null 2>"$TMP/n"; rc=$?
check "no -l: exit 2, one line naming -l" \
	eval 'test $rc -eq 2 && test "$(wc -l <"$TMP/n")" -eq 1 && grep -q -- "-l" "$TMP/n"'
"$EMBER" trace -l "u:$TMP/nonexistent:f" >/dev/null 2>"$TMP/m"; rc=$?
check "a missing file: exit 2, one line naming it" \
	eval 'test $rc -eq 2 && test "$(wc -l <"$TMP/m")" -eq 1 && grep -q nonexistent "$TMP/m"'

if command -v bpftrace >/dev/null && bpftrace -l 'tracepoint:sched:sched_switch' >/dev/null 2>&1; then
	bpftrace -l 'tracepoint:*' >"$TMP/b.tps" 2>/dev/null
	check "-l 't:*' byte for byte as bpftrace -l 'tracepoint:*'" cmp -s "$TMP/b.tps" "$TMP/tps"
	"$EMBER" trace -lv 't:*' >"$TMP/lv" 2>/dev/null
	bpftrace -lv 'tracepoint:*' >"$TMP/b.lv" 2>/dev/null
	check "-lv 't:*' byte for byte as bpftrace -lv ($(wc -l <"$TMP/lv") lines)" \
		cmp -s "$TMP/b.lv" "$TMP/lv"
else
	skip trace-list-bpftrace "bpftrace is not installed (make deps)"
fi
