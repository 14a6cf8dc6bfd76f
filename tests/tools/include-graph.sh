#!/usr/bin/env bash
# include-graph.sh - the folder-level include graph of ember's sources, and
# the checks of the house rules (docs/ARCHITECTURE.md, "The rooms"): no
# folder includes a header of a folder that (through others) includes it,
# no file includes another folder's internal header (*-internal.h), the
# command layer is included by ember.c alone, and every command file
# (cmd-*.c) is in cmd/.
#
#   tests/tools/include-graph.sh [TOP]         print the graph, check it
#
# A folder is the directory a .c or .h file is in (views/hist, block/btreplay
# and pmc/stat are folders of their own); "." is ember.c's.  Each edge
# "A -> B (N)" says N files of A include a header of B.  tests/, build
# outputs and generated code are left out: unit tests may reach inside.
# Exit 0 when the rules hold, 1 with the cycle or the header named when
# not, 2 on bad usage.
set -u
. "$(dirname "$0")/tree-lib.sh"
# "FROM-FILE INCLUDED-PATH" for each quoted include with a folder in it.
includes() {
	sources | while read -r f; do
		sed -nE 's/^#[[:space:]]*include[[:space:]]+"([^"]+\/[^"]+)".*/\1/p' "$f" |
			while read -r inc; do echo "$f $inc"; done
	done
}

list=$(includes)
# Folder edges, counted by file.
edges=$(echo "$list" | while read -r f inc; do
	a=$(dirname "$f") b=$(dirname "$inc")
	[ "$a" != "$b" ] && echo "$a $b"
done | sort | uniq -c | awk '{ printf "%s -> %s (%d)\n", $2, $3, $1 }')

echo "$edges"
rc=0

loops=$(echo "$edges" | awk '{ print $1, $3 }' | tsort 2>&1 >/dev/null)
if [ -n "$loops" ]; then
	echo "include-graph: folders include each other:" >&2
	echo "$loops" | sed 's/^/  /' >&2
	rc=1
fi

while read -r f inc; do
	case $inc in *-internal.h) ;; *) continue ;; esac
	[ "$(dirname "$f")" = "$(dirname "$inc")" ] && continue
	echo "include-graph: $f includes $inc, internal to $(dirname "$inc")/" >&2
	rc=1
done <<<"$list"
while read -r f inc; do
	case $inc in cmd/*) ;; *) continue ;; esac
	case $f in cmd/* | ember.c) continue ;; esac
	echo "include-graph: $f includes $inc: only ember.c and cmd/ include the command layer" >&2
	rc=1
done <<<"$list"

stray=$(find . \( -path ./tests -o -path './build*' -o -path ./.git -o -path ./cmd \) -prune -o \
	-name 'cmd-*.c' -print | sed 's#^\./##')
if [ -n "$stray" ]; then
	echo "include-graph: command files outside cmd/:" $stray >&2
	rc=1
fi
exit $rc
