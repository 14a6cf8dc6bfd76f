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
	trap 'rm -rf "$EMBER_CACHE_DIR"' EXIT
fi
export EMBER_CACHE_DIR

pass=0 fail=0 skip=0
failed_names=()
only=${TESTS:-}   # optional substring filter: TESTS=record make check

run_one() {
	local name=$1; shift
	local out rc t0=$SECONDS
	out=$(timeout -k 10 400 "$@" 2>&1); rc=$?
	local secs=$((SECONDS - t0))
	local p f s
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

for t in "$BUILD"/tests/unit/test-*; do
	[ -x "$t" ] || continue
	n=unit/$(basename "$t")
	[ -n "$only" ] && [[ $n != *"$only"* ]] && continue
	run_one "$n" "$t"
done
for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	n=e2e/$(basename "$t" .sh)
	[ -n "$only" ] && [[ $n != *"$only"* ]] && continue
	run_one "$n" bash "$t"
done

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
