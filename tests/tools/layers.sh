#!/usr/bin/env bash
# layers.sh - the command layer's rules (docs/ARCHITECTURE.md, issue #31):
# only cmd/ and ember.c print a command's messages and pick exit statuses,
# and no command calls another command's private helpers.
#
#   tests/tools/layers.sh [TOP]
#
# 1. `cmd_error`, `cmd_warn`, `EXIT_OK`, `EXIT_USAGE` and `EXIT_RUNTIME`
#    (whole words: XS_EXIT_GROUP is not one) appear in no C source outside
#    cmd/ and ember.c: a library room returns -1 with err_set(), or notes
#    or counts, and the command says them.
# 2. No cmd/cmd-*.c uses a non-static function or table defined in another
#    cmd/cmd-*.c: what two commands share lives in a shared file of the
#    layer (cmd/options.c, cmd/notes.c).  The entry points (cmd_*), the
#    option tables (struct opt_cmd) and tool_command are ember.c's; the bio
#    command's two files (cmd-bio.c, cmd-bio-replay.c) are one command.
#
# tests/, build outputs and .git are left out.  Each offence is printed as
# FILE:LINE: what.  Exit 0 when the rules hold, 1 when not, 2 on bad usage.
set -u
. "$(dirname "$0")/tree-lib.sh"

bad=0
offence() { echo "$*" >&2; bad=1; }

# Rule 1.
while read -r f; do
	case $f in cmd/* | ember.c) continue ;; esac
	while IFS=: read -r line text; do
		offence "$f:$line: a command's message or exit status outside cmd/:" \
			"$(echo "$text" | sed 's/^[[:space:]]*//')"
	done < <(grep -nwE 'cmd_error|cmd_warn|EXIT_OK|EXIT_USAGE|EXIT_RUNTIME' "$f")
done < <(sources)

# Rule 2.  The names a command file defines at file scope, not static:
# functions ("type name(") and tables ("type name[] =", "type name =").
defined() {
	grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *]\**[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(\(|\[\]? *=|=)' "$1" |
		grep -vE '^(static|extern|typedef)[[:space:]]|^const struct opt_cmd |;[[:space:]]*$' |
		sed -E 's/^[^(=[]*[ *]\**([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*[(=[].*/\1/' |
		grep -vE '^cmd_|^tool_command$' | sort -u
}
# One command's files: the bio command has two.
command_of() {
	case $1 in cmd/cmd-bio-replay.c) echo cmd/cmd-bio.c ;; *) echo "$1" ;; esac
}
# The lines of a file without its comments (one-line /* */ and comment
# lines), numbered: a name in a comment is no call.
code_lines() {
	grep -n '' "$1" | sed -E 's#/\*.*\*/##g; s#^([0-9]+:)[[:space:]]*(/\*|\*).*#\1#'
}

cmds=$(ls cmd/cmd-*.c 2>/dev/null)
for def in $cmds; do
	for name in $(defined "$def"); do
		for f in $cmds; do
			[ "$(command_of "$f")" = "$(command_of "$def")" ] && continue
			while IFS=: read -r line _; do
				offence "$f:$line: calls $name, a helper of $def (move what two" \
					"commands share into cmd/'s shared files)"
			done < <(code_lines "$f" | grep -wE "$name")
		done
	done
done
exit $bad
