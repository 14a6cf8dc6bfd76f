# tree-lib.sh - sourced by the house checks (include-graph.sh, layers.sh):
# the source top they read (their first argument, or this checkout), and
# its C sources and headers, one path a line, sorted; tests/, build
# outputs and .git are left out.
TOP=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
[ -d "$TOP" ] || { echo "usage: $0 [SOURCE-TOP]" >&2; exit 2; }
cd "$TOP" || exit 2

sources() {
	find . \( -path ./tests -o -path './build*' -o -path ./.git \) -prune -o \
		\( -name '*.c' -o -name '*.h' \) -print | sed 's#^\./##' | sort
}
