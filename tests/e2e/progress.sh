#!/usr/bin/env bash
# tests/e2e/progress.sh - a view reading a large recording (over 50 MB and
# 65536 events, replay's thresholds) shows its progress on stderr
# when stderr is a terminal (a pseudo-terminal made by util-linux script),
# never when stderr is a file; stdout is the same either way.  For
# collapse, flame, sched lat, archive and report.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root || ! ensure_tracefs; then
	skip progress "needs root and tracefs for the syscall tracepoint"
	exit 0
fi
if ! command -v script >/dev/null; then
	skip progress "needs util-linux script for a pseudo-terminal"
	exit 0
fi

# 120k single-byte reads and writes, each a syscall event with 1 KB of
# user stack (and the sched events sched lat needs): about 130 MB.  (With
# 90k, a sanitized recorder beside another test lost 27504 events and kept
# 62684, under the 65536 needed.)
F=$TMP/big.data
"$EMBER" record -N -q --call-graph dwarf,1024 -e raw_syscalls:sys_enter \
	--off-cpu=wakeups -m 1024 -o "$F" -- \
	dd if=/dev/zero of=/dev/null bs=1 count=60000 >/dev/null 2>"$TMP/rec.err"
size=$(stat -c %s "$F" 2>/dev/null || echo 0)
events=$("$EMBER" script -i "$F" -F event 2>/dev/null | wc -l)
if [ "$size" -lt $((50 << 20)) ] || [ "$events" -lt 65536 ]; then
	fail recording "wanted over 50 MB and 65536 events, got $size bytes and $events events: $(tail -1 "$TMP/rec.err")"
	exit 0
fi

PROGRESS='reading the recording\.\.\. *[0-9]+%'

# view NAME OUT ARGS...: ember ARGS with stderr on a pseudo-terminal and
# with stderr in a file, stdout in a file each time (OUT: where the view
# writes, "-" for stdout); checks that the progress shows on the terminal
# only, and that the output is the same.
view() {
	local name=$1 out=$2; shift 2
	local args="" a
	for a in "$@"; do args+=" $(printf '%q' "$a")"; done
	local o1=$TMP/$name.tty.out o2=$TMP/$name.file.out
	[ "$out" = - ] || { o1=$TMP/$name.tty.$out; o2=$TMP/$name.file.$out; }
	local cmd1="$EMBER$args" cmd2="$EMBER$args"
	if [ "$out" = - ]; then
		cmd1+=" >$o1"; cmd2+=" >$o2"
	else
		cmd1+=" -o $o1 >/dev/null"; cmd2+=" -o $o2 >/dev/null"
	fi
	script -qec "$cmd1" /dev/null </dev/null >"$TMP/$name.tty" 2>&1
	eval "$cmd2" 2>"$TMP/$name.err"
	check "$name: progress on a terminal" grep -Eq "$PROGRESS" "$TMP/$name.tty"
	check "$name: no progress in a redirected stderr" \
		eval "! grep -Eq '$PROGRESS' $TMP/$name.err"
	if [ "$out" = - ]; then
		check "$name: stdout the same either way ($(wc -c <"$o2") bytes)" \
			eval "test -s $o2 && cmp -s $o1 $o2"
	else
		check "$name: the same $out either way" \
			eval "cmp -s <(tar tf $o1) <(tar tf $o2) && test -s $o2"
	fi
}
view collapse - collapse -i "$F"
view flame - flame -i "$F" -o -
view sched - sched lat -i "$F"
view archive tar archive -i "$F"
view report - report -i "$F" --stdio
