#!/usr/bin/env bash
# tests/e2e/live-output-path.sh - a live view or tool given -o into a folder
# that is missing (or a file where the folder should be) says so in one
# line and exits 1, before any recording starts: it once printed "stream
# ends before its header" first, and offcpu then crashed (139).
# parallel-safe: records nothing (each run stops before the recording) (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-output-path "needs root for live recordings"; exit 0; }
ensure_tracefs || { skip live-output-path "no tracefs"; exit 0; }
: >"$TMP/file"

# one NAME WHY PATH ARGS...: ember ARGS -o PATH -- true gives exit 1 and
# the one line "ember NAME: PATH: WHY".
one() {
	local name=$1 why=$2 path=$3; shift 3
	"$EMBER" "$@" -o "$path" -- true >"$TMP/out" 2>&1
	local rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$TMP/out")" = 1 ] &&
	   grep -q "^ember $name: $path: $why\$" "$TMP/out"; then
		pass "$* -o $path: exit 1, one line ($(cat "$TMP/out"))"
	else
		fail "$* -o $path" "exit $rc: $(head -c 400 "$TMP/out" | tr '\n' '|')"
	fi
}
for v in execsnoop offcpu "report --stdio" "sched lat" "syscount"; do
	set -- $v
	one "$1" "No such file or directory" "$TMP/missing/x.data" $v
done
one execsnoop "Not a directory" "$TMP/file/x.data" execsnoop
check "nothing was created in place of the missing folder" test ! -e "$TMP/missing"
