#!/usr/bin/env bash
# tests/run.sh - runs every unit test binary and end-to-end script and ends
# with one line "N passed, N failed, N skipped".
#
# Protocol: each test program prints one line per check:
#   PASS: name            SKIP: name: reason            FAIL: name: why
# A program that exits non-zero without printing a FAIL counts as one failure.
# Environment (set by make check): EMBER, BUILD, WORKLOADS.
set -u
cd "$(dirname "$0")/.."
: "${EMBER:=$PWD/ember}" "${BUILD:=$PWD/build}" "${WORKLOADS:=$BUILD/workloads}"
export EMBER BUILD WORKLOADS
export TOP=$PWD
# Inflated copies of compressed debug files (symbols/inflate.c) go to a
# folder of this run's own, not the user's cache.
if [ -z "${EMBER_CACHE_DIR+set}" ]; then
	EMBER_CACHE_DIR=$(mktemp -d /tmp/ember-test-cache.XXXXXX)
	EMBER_CACHE_DIR_OWN=1
fi
export EMBER_CACHE_DIR

pass=0 fail=0 skip=0
failed_names=()
only=${TESTS:-}   # optional substring filter: TESTS=record make check
# Tests that neither record system-wide nor count or time what they record
# (unit tests, and e2e scripts with a "# parallel-safe" line) run first,
# TEST_JOBS at a time (default: the CPU count, at most 2); the others run
# one by one afterwards, alone on the machine, as their figures need.
jobs=${TEST_JOBS:-$(nproc)}
[ "$jobs" -gt 2 ] && jobs=2
OUTDIR=$(mktemp -d /tmp/ember-run.XXXXXX)
trap 'rm -rf "$OUTDIR" ${EMBER_CACHE_DIR_OWN:+"$EMBER_CACHE_DIR"}' EXIT
# The tests' python3 helpers (tests/*.py) need only the standard library:
# Debian's python3 comes first on PATH, since a version manager's shim
# found before it (pyenv's) takes 0.5 s a start, and the suite starts
# python3 hundreds of times.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$OUTDIR/bin" && ln -sf /usr/bin/python3 "$OUTDIR/bin/python3" &&
		export PATH="$OUTDIR/bin:$PATH"
fi

# run_to_file N NAME CMD...: runs one test program, keeping its output, exit
# status and seconds in $OUTDIR/N.*.
run_to_file() {
	local n=$1 name=$2; shift 2
	local t0=$SECONDS
	echo "$name" >"$OUTDIR/$n.name"
	timeout -k 10 400 "$@" >"$OUTDIR/$n.out" 2>&1
	echo "$? $((SECONDS - t0))" >"$OUTDIR/$n.rc"
}

# account N: adds test N's PASS/FAIL/SKIP lines to the totals and prints
# its summary (and its output when it failed).
account() {
	local n=$1 name out rc secs p f s
	name=$(<"$OUTDIR/$n.name"); out=$(<"$OUTDIR/$n.out")
	read -r rc secs <"$OUTDIR/$n.rc"
	p=$(grep -c '^PASS: ' <<<"$out"); f=$(grep -c '^FAIL: ' <<<"$out")
	s=$(grep -c '^SKIP: ' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		out+=$'\n'"FAIL: $name: exited with status $rc"
		f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		failed_names+=("$name")
		echo "== $name: $p passed, $f failed, $s skipped (${secs}s)"
		sed 's/^/   /' <<<"$out" | tail -60
	else
		echo "== $name: $p passed, $s skipped (${secs}s)"
		grep '^SKIP: ' <<<"$out" | sed 's/^/   /'
	fi
}

# The shared group starts its longest tests first (scripts with a
# "# long-running" line, then the unit tests, then the short scripts), so
# that no long test starts last and leaves the other CPU idle at the end.
shared_names=() shared_cmds=() alone_names=() alone_cmds=()
short_names=() short_cmds=()
for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	n=e2e/$(basename "$t" .sh)
	[ -n "$only" ] && [[ $n != *"$only"* ]] && continue
	if ! grep -q '^# parallel-safe' "$t"; then
		alone_names+=("$n"); alone_cmds+=("bash $t")
	elif grep -q '^# long-running' "$t"; then
		shared_names+=("$n"); shared_cmds+=("bash $t")
	else
		short_names+=("$n"); short_cmds+=("bash $t")
	fi
done
for t in "$BUILD"/tests/unit/test-*; do
	[ -x "$t" ] || continue
	n=unit/$(basename "$t")
	[ -n "$only" ] && [[ $n != *"$only"* ]] && continue
	shared_names+=("$n"); shared_cmds+=("$t")
done
shared_names+=("${short_names[@]}"); shared_cmds+=("${short_cmds[@]}")

k=0
for i in "${!shared_names[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	# shellcheck disable=SC2086  # the command is a path and its arguments
	run_to_file $k "${shared_names[$i]}" ${shared_cmds[$i]} &
	k=$((k + 1))
done
wait
for ((i = 0; i < k; i++)); do account $i; done
for i in "${!alone_names[@]}"; do
	# shellcheck disable=SC2086
	run_to_file $k "${alone_names[$i]}" ${alone_cmds[$i]}
	account $k
	k=$((k + 1))
done

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
