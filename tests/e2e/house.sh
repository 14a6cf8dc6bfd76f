#!/usr/bin/env bash
# tests/e2e/house.sh - the rooms of the source tree (docs/ARCHITECTURE.md):
# no folder includes a header of a folder that includes it, no file
# includes another folder's *-internal.h, and the check itself fails when
# either is planted in a copy of the tree (a cycle views/hist -> cmd ->
# views/hist; tools/ reaching into block-internal.h).
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

copy
sed -i '0,/^#include "/s//#include "cmd\/cmd.h"\n#include "/' "$TMP/tree/views/hist/hist.c"
if "$GRAPH" "$TMP/tree" >/dev/null 2>"$TMP/err1"; then
	fail house-cycle-found "a views/hist -> cmd include passed the check"
else
	check house-cycle-found grep -q 'views/hist' "$TMP/err1"
fi

copy
sed -i '0,/^#include "/s//#include "block\/block-internal.h"\n#include "/' "$TMP/tree/tools/util.c"
if "$GRAPH" "$TMP/tree" >/dev/null 2>"$TMP/err2"; then
	fail house-internal-found "tools/util.c including block-internal.h passed the check"
else
	check house-internal-found grep -q 'tools/util.c includes block/block-internal.h' "$TMP/err2"
fi
