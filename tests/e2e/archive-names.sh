#!/usr/bin/env bash
# tests/e2e/archive-names.sh - ember archive writes its tar itself: a name
# with ':' (which tar(1) takes for HOST:FILE, a remote archive) is a local
# file, and -o into a missing folder is one line of ember's, not tar's two
# then ember's.
# parallel-safe: its own recording, cache (HOME) and files; checks no count or time (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

export HOME=$TMP/home
mkdir -p "$HOME"
cd "$TMP" || exit 1
"$EMBER" record -q -o "rec:1.data" -- "$WORKLOADS/spin" 1 0.3 >/dev/null 2>"$TMP/rec.err" ||
	{ fail "archive-names: record" "$(tail -1 "$TMP/rec.err")"; exit 0; }

# Relative, so that nothing before the ':' is a path: tar's remote form.
"$EMBER" archive -i "rec:1.data" >"$TMP/a.out" 2>&1
rc=$?
check "archive of rec:1.data: exit 0, rec:1.data.tar written here ($rc: $(tail -1 "$TMP/a.out"))" \
	eval 'test $rc = 0 && test -s "rec:1.data.tar"'
check "archive of rec:1.data: the tar lists the spin workload's cache entry" \
	eval 'tar tf "rec:1.data.tar" --force-local | grep -q "/spin/[0-9a-f]*/elf$"'
check "archive of rec:1.data: the unpack hint says --force-local" \
	grep -q "tar xf rec:1.data.tar --force-local -C ~/.debug" "$TMP/a.out"

"$EMBER" archive -i "rec:1.data" -o "$TMP/missing/a.tar" >"$TMP/m.out" 2>&1
rc=$?
check "archive -o into a missing folder: exit 1, one line ($(head -1 "$TMP/m.out"))" \
	eval 'test $rc = 1 && test "$(wc -l <"$TMP/m.out")" = 1 &&
	      grep -q "^ember archive: $TMP/missing/a.tar: cannot create the tar: No such file" "$TMP/m.out"'

# A failed archive leaves no tar behind: the recording cannot be read.
: >"$TMP/empty.data"
"$EMBER" archive -i "$TMP/empty.data" -o "$TMP/e.tar" >/dev/null 2>&1
rc=$?
check "archive of an unreadable recording: exit 1 ($rc), no tar left" \
	eval 'test $rc = 1 && test ! -e "$TMP/e.tar"'
