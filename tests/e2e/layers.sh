#!/usr/bin/env bash
# tests/e2e/layers.sh - the command layer's rules (tests/tools/layers.sh):
# no cmd_error, cmd_warn or EXIT_* outside cmd/ and ember.c, and no command
# calling another command's helpers; and the check itself fails when each
# is planted in a copy of the tree (a cmd_error put back into tools/run.c,
# an EXIT_RUNTIME into format/compress.c, the shared say-functions put
# back into cmd-collapse.c), naming the file and line.
# parallel-safe: reads the sources only (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=$SRC/tests/tools/layers.sh

if "$CHECK" "$SRC" 2>"$TMP/err"; then
	pass layers-clean
else
	fail layers-clean "$(head -c 600 "$TMP/err")"
fi

# A copy of the sources (headers and C only) to plant faults in.
copy() {
	rm -rf "$TMP/tree" && mkdir "$TMP/tree" &&
		(cd "$SRC" && find . \( -path ./tests -o -path './build*' -o -path ./.git \) -prune -o \
			\( -name '*.c' -o -name '*.h' \) -print0 | xargs -0 cp --parents -t "$TMP/tree")
}

# planted NAME WHAT: the copy, once changed, must fail the check with WHAT
# (a FILE:LINE: message) in what it says.
planted() {
	local name=$1 what=$2
	if "$CHECK" "$TMP/tree" 2>"$TMP/$name.err"; then
		fail "$name" "the planted fault passed the check"
	else
		check "$name" grep -qE "$what" "$TMP/$name.err"
	fi
}

copy
"$CHECK" "$TMP/tree" 2>"$TMP/copy.err"
check layers-copy-clean test $? -eq 0

copy
sed -i '0,/^{$/s||{\n\tcmd_error("x", "%s", err_msg());|' "$TMP/tree/tools/run.c"
planted layers-cmd-error-found '^tools/run\.c:[0-9]+: .*cmd_error\("x"'

copy
sed -i '0,/^{$/s||{\n\tif (0) exit(EXIT_RUNTIME);|' "$TMP/tree/format/compress.c"
planted layers-exit-found '^format/compress\.c:[0-9]+: .*EXIT_RUNTIME'

# A helper of one command another calls: the shared say-functions defined
# in cmd-collapse.c again, as they were.
copy
cat "$TMP/tree/cmd/notes.c" >>"$TMP/tree/cmd/cmd-collapse.c"
rm "$TMP/tree/cmd/notes.c"
planted layers-helper-found '^cmd/cmd-flame\.c:[0-9]+: calls collapse_say, a helper of cmd/cmd-collapse\.c'
check layers-helper-export-found grep -qE \
	'^cmd/cmd-export\.c:[0-9]+: calls offcpu_say_run, a helper of cmd/cmd-collapse\.c' \
	"$TMP/layers-helper-found.err"

# The bio command's two files may call each other.
check layers-bio-pair-allowed grep -qw bio_replay_cmd "$SRC/cmd/cmd-bio.c"
