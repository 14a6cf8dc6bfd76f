#!/bin/sh
# longest.sh - lists the longest functions in ember's C sources, to watch
# that none grows past a screen.  A function runs from its opening line
# (the line at column 0 that names it) to its closing '}' at column 0,
# both counted: the style keeps '{' and '}' of a function at column 0.
# Usage: tests/tools/longest.sh [N]   (top N, default 10; run from the root)
n=${1:-10}
find . -name '*.c' -not -path './tests/*' -not -path './build/*' | sort |
xargs awk '
	FNR == 1 { head = 0; start = 0 }
	# A header: a line at column 0 naming something with a "(", not a
	# preprocessor line, comment, brace or label.
	/^[A-Za-z_].*\(/ && !start { head = FNR; name = $0 }
	/^\{/ && head && !start { start = head }
	/^\}/ && start {
		sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
		printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
		start = 0; head = 0
	}
	/^[^A-Za-z_{}#\/ \t*]/ && !start { head = 0 }
' | sort -k1,1nr -k2 | head -n "$n"
