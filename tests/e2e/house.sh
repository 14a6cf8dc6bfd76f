#!/usr/bin/env bash
# tests/e2e/house.sh - the rooms of the source tree (docs/ARCHITECTURE.md):
# no folder includes a header of a folder that includes it, no file
# includes another folder's *-internal.h, only ember.c and cmd/ include
# cmd/, every cmd-*.c is in cmd/; and the check itself fails when each is
# planted in a copy of the tree (a cycle views/hist -> cmd -> views/hist;
# tools/ and cmd-record.c reaching into block-internal.h and
# record-internal.h; flamegraph/ including cmd.h; a
# command file in record/).
# parallel-safe: reads the sources only (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
GRAPH=$SRC/tests/tools/include-graph.sh
command -v tsort >/dev/null || { skip house "tsort (coreutils) is missing"; exit 0; }

if "$GRAPH" "$SRC" >"$TMP/graph" 2>"$TMP/err"; then
	pass house-no-cycles
else
	fail house-no-cycles "$(head -c 400 "$TMP/err")"
fi
# The graph is the one of the tree: the engine's users reach it.
check house-graph-edges grep -qx 'cmd -> replay ([0-9]*)' "$TMP/graph"

# A copy of the sources (headers and C only) to plant faults in.
copy() {
	rm -rf "$TMP/tree" && mkdir "$TMP/tree" &&
		(cd "$SRC" && find . \( -path ./tests -o -path './build*' -o -path ./.git \) -prune -o \
			\( -name '*.c' -o -name '*.h' \) -print0 | xargs -0 cp --parents -t "$TMP/tree")
}

copy
"$GRAPH" "$TMP/tree" >/dev/null 2>"$TMP/err0"
check house-copy-clean test $? -eq 0

# planted NAME FILE HEADER WHAT: HEADER included first in the copy's FILE
# must fail the check, with WHAT in its message.
planted() {
	local name=$1 file=$2 header=$3 what=$4
	copy
	sed -i "0,/^#include \"/s||#include \"$header\"\n#include \"|" "$TMP/tree/$file"
	if "$GRAPH" "$TMP/tree" >/dev/null 2>"$TMP/$name.err"; then
		fail "$name" "$file including $header passed the check"
	else
		check "$name" grep -q "$what" "$TMP/$name.err"
	fi
}
planted house-cycle-found views/hist/hist.c cmd/cmd.h 'views/hist'
planted house-internal-found tools/util.c block/block-internal.h \
	'tools/util.c includes block/block-internal.h'
# No command is let in either: record.h says what cmd-record.c needs.
planted house-internal-cmd-found cmd/cmd-record.c record/record-internal.h \
	'cmd/cmd-record.c includes record/record-internal.h'
planted house-cmd-layer-found flamegraph/tree.c cmd/cmd.h \
	'flamegraph/tree.c includes cmd/cmd.h'
copy
cp "$TMP/tree/cmd/cmd-record.c" "$TMP/tree/record/cmd-record.c"
if "$GRAPH" "$TMP/tree" >/dev/null 2>"$TMP/stray.err"; then
	fail house-cmd-file-found "a record/cmd-record.c passed the check"
else
	check house-cmd-file-found grep -q 'outside cmd/: record/cmd-record.c' "$TMP/stray.err"
fi
