#!/usr/bin/env bash
# tools-paths.sh - the paths syscalls point at, fetched where the call is
# made (record/strings.c): opensnoop and statsnoop name every call of a
# program that builds its paths in one heap buffer, each call its own
# path in order (a wrong string would show as a wrong number), and so
# does execsnoop -x for failed execs of heap paths; a path
# passed in argv is named in 20 of 20 runs; on Debian's cat, ls, python3
# and git at least 95% of the opens are named and every named path is one
# strace saw the same command open; filelife sees files born and deleted;
# the probes leave nothing in uprobe_events.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-paths "needs root for tracepoints and uprobes"; exit 0; }
ensure_tracefs || { skip tools-paths "no tracefs"; exit 0; }
busy_cpus 60

# Heap paths, one buffer, live and recorded: 300 calls each, in order.
W="$WORKLOADS/toolwork"
seq 0 299 | sed 's|^|/nonexistent-ember-heap/|' >"$TMP/want"
"$EMBER" opensnoop -o "$TMP/open.data" -- "$W" heapopen 300 >"$TMP/open" 2>"$TMP/open.err"
awk '$2 == "toolwork" && $4 == 2 { print $5 }' "$TMP/open" >"$TMP/got"
check "opensnoop: 300 heap paths, each its call's, in order" cmp -s "$TMP/want" "$TMP/got"
"$EMBER" opensnoop -i "$TMP/open.data" >"$TMP/open.i" 2>/dev/null
check "opensnoop -i prints the same lines as live" cmp -s "$TMP/open" "$TMP/open.i"
"$EMBER" statsnoop -- "$W" heapopen 300 >"$TMP/stat" 2>/dev/null
awk '$2 == "toolwork" && $4 == 2 { print $5 }' "$TMP/stat" >"$TMP/got.stat"
check "statsnoop: 300 heap paths, each its call's, in order" cmp -s "$TMP/want" "$TMP/got.stat"

# execsnoop -x: failed execs of heap paths with heap argv: 50, in order.
seq 0 49 | sed 's|^|/nonexistent-ember-heap/exec-|' >"$TMP/want.exec"
"$EMBER" execsnoop -x -- "$W" heapexec 50 >"$TMP/exec" 2>/dev/null
awk '$1 == "toolwork" && $4 == -2 { print $5 }' "$TMP/exec" >"$TMP/got.exec"
check "execsnoop -x: 50 failed execs of heap paths, each its own, in order" \
	cmp -s "$TMP/want.exec" "$TMP/got.exec"

# A path in argv (on the stack, often beyond the 8 KB copy): 20 of 20.
ARG=$TMP/argv-dir/a-path-passed-in-argv
mkdir -p "$TMP/argv-dir" && echo x >"$ARG"
named=0
for i in $(seq 20); do
	"$EMBER" opensnoop -- cat "$ARG" >"$TMP/argv" 2>/dev/null
	awk -v p="$ARG" '$2 == "cat" && $3 >= 0 && $5 == p { f = 1 } END { exit !f }' "$TMP/argv" &&
		named=$((named + 1))
done
check "a path in argv named in 20 of 20 runs ($named)" test "$named" = 20

# Debian's programs, beside strace: the share named, and no wrong name.
git init -q "$TMP/repo" && echo a >"$TMP/repo/a"
PY=/usr/bin/python3
run_both() { # NAME CMD...
	local name=$1; shift
	"$EMBER" opensnoop -- "$@" >"$TMP/$name.os" 2>/dev/null </dev/null
	strace -f -qq -e trace=open,openat,openat2 -o "$TMP/$name.st" "$@" >/dev/null 2>&1 </dev/null
	local all unnamed wrong
	all=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/' "$TMP/$name.os" | wc -l)
	unnamed=$(grep -c 'not copied\]\|\[entry not seen\]' "$TMP/$name.os")
	sed -n 's/^[0-9]* *open[a-z0-9]*([^"]*"\(.*\)", .*/\1/p' "$TMP/$name.st" | sort -u >"$TMP/$name.paths"
	wrong=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ && $5 !~ /^\[/ { print $5 }' "$TMP/$name.os" |
		sort -u | comm -23 - "$TMP/$name.paths" | wc -l)
	echo "$name: $all opens, $unnamed unnamed, $wrong named paths strace did not see"
	check "$name: at least 95% of $all opens named ($unnamed not)" \
		test "$all" -gt 0 -a $((unnamed * 20)) -le "$all"
	check "$name: every named path is one strace saw ($wrong not)" test "$wrong" = 0
}
if command -v strace >/dev/null && [ -x "$PY" ] && command -v git >/dev/null; then
	run_both cat cat /etc/hostname
	run_both ls ls /usr/share
	run_both python3 "$PY" -c 'import json, csv, email'
	run_both git git -C "$TMP/repo" status
else
	skip tools-paths-debian "needs strace, /usr/bin/python3 and git"
fi

# filelife: 5 files of a heap path, each deleted 100 ms after its birth.
mkdir -p "$TMP/life"
"$EMBER" filelife -- "$W" filelife 5 100 "$TMP/life" >"$TMP/life.out" 2>/dev/null
n=$(awk -v d="$TMP/life" '$3 == "toolwork" && $4 >= 0.09 && $4 < 1.5 &&
	index($5, d "/ember-life-") == 1' "$TMP/life.out" | wc -l)
check "filelife: 5 files born and deleted, aged about 0.1 s ($n)" test "$n" = 5

# uprobe_events unusable (/dev/null over it, in a mount namespace of our
# own): one warning saying why, and paths on the stack still named from
# the copy (toolwork open builds them there), heap ones shown as addresses.
UEV=/sys/kernel/tracing/uprobe_events
if command -v unshare >/dev/null && unshare -m sh -c "mount --bind /dev/null $UEV" 2>/dev/null; then
	unshare -m sh -c "mount --bind /dev/null $UEV && exec $EMBER opensnoop -- $W open 10 5" \
		>"$TMP/fb" 2>"$TMP/fb.err"
	check "without uprobes: one warning naming the stack copy and why" \
		test "$(grep -c 'warning: paths from the stack copy only .*: ' "$TMP/fb.err")" = 1
	n=$(awk '$2 == "toolwork" && ($5 == "/proc/self/stat" || $5 == "/nonexistent-ember-toolwork")' \
		"$TMP/fb" | wc -l)
	check "without uprobes: the 15 stack paths from the copy ($n)" test "$n" = 15
	unshare -m sh -c "mount --bind /dev/null $UEV && exec $EMBER opensnoop -- $W heapopen 5" \
		>"$TMP/fb2" 2>/dev/null
	n=$(awk '$2 == "toolwork" && $4 == 2 && $5 == "[path" && $9 == "copied]"' "$TMP/fb2" | wc -l)
	check "without uprobes: the 5 failed heap paths shown as addresses, not guessed ($n)" \
		test "$n" = 5
else
	skip "tools-paths without uprobes" "cannot bind-mount in a mount namespace"
fi

# Nothing left behind: no ember_PID group whose ember is gone.
left=$(sed -n 's/^[pr]:ember_\([0-9]*\)\/.*/\1/p' /sys/kernel/tracing/uprobe_events | sort -u |
	while read -r pid; do kill -0 "$pid" 2>/dev/null || echo "$pid"; done | wc -l)
check "no probe group of a finished ember left in uprobe_events ($left)" test "$left" = 0
idle_cpus
