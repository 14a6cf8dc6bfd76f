#!/usr/bin/env bash
# bench/replay.sh - how closely `ember bio --replay` keeps the recorded
# time: tests/workloads/biopattern (two threads, one per CPU, NIOS direct
# I/Os each, GAP_US apart on average) recorded on loop device A, then
# replayed onto loop device B with -W at the recorded rate and at -x 4,
# ROUNDS times each; prints the replay's own lateness (p50, p99, max) and
# its elapsed time against the recorded span divided by the factor.
# btreplay (Debian's blktrace) is not run beside it: btrecord reads classic
# blktrace files, which blktrace(8) cannot make here (kernel lockdown).
# Two SCHED_IDLE spinners keep both CPUs awake.  A benchmark, not a test.
#
#   EMBER=./ember bench/replay.sh   ROUNDS=5 NIOS=500 GAP_US=2000
set -u
: "${ROUNDS:=5}" "${NIOS:=500}" "${GAP_US:=2000}"
. "$(dirname "$0")/lib.sh"
bench_setup replay biopattern spin
A= B= SPINNERS=
cleanup() {
	for p in $SPINNERS; do kill "$p" 2>/dev/null; done
	for l in $A $B; do losetup -d "$l"; done
	rm -rf "$T"
}
trap cleanup EXIT
truncate -s 64M "$T/a.img" "$T/b.img"
A=$(losetup -f --show "$T/a.img") && B=$(losetup -f --show "$T/b.img") || exit 2
for i in $(seq "$NCPU"); do chrt -i 0 "$SPIN" 1 100000 >/dev/null 2>&1 & SPINNERS="$SPINNERS $!"; done

"$EMBER" record --block -d "$A" -o "$T/a.data" -- "$WORKLOADS/biopattern" "$A" "$NIOS" "$GAP_US" \
	>/dev/null 2>&1 || { echo "bench/replay.sh: recording A failed" >&2; exit 1; }
"$EMBER" bio -i "$T/a.data" -d "$A" --save-plan "$T/a.plan" | head -1

for x in 1 4; do
	for r in $(seq "$ROUNDS"); do
		"$EMBER" bio --plan "$T/a.plan" --replay "$B" -W -x "$x" >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
		awk -v x="$x" '/^replaying/ { for (i = 1; i <= NF; i++) if ($i == "over") span = $(i + 1) }
			/^replayed:/ { for (i = 1; i <= NF; i++) if ($i == "in") el = $(i + 1) }
			/^lateness:/ { l = $0; sub(/^lateness: /, "", l) }
			END { printf "x%d: elapsed %.3f s for %.3f s recorded / %d (%.1f%%), lateness %s\n",
				x, el, span, x, 100 * el / (span / x), l }' "$T/out"
	done
done
