# tests/e2e-lib.sh - shared helpers for end-to-end scripts (sourced).
# Speaks tests/run.sh's protocol: pass NAME, fail NAME WHY, skip NAME WHY.
set -u
: "${EMBER:?set by make check}" "${WORKLOADS:?set by make check}"
TMP=$(mktemp -d /tmp/ember-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
skip() { echo "SKIP: $1: $2"; }

# check NAME CONDITION-COMMAND... : pass if the command succeeds.
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi
}

need_root() {
	[ "$(id -u)" -eq 0 ]
}

have_perf() {
	command -v perf >/dev/null 2>&1 && perf --version >/dev/null 2>&1
}

# Make sure tracefs is there (tracepoint tests need it).
ensure_tracefs() {
	[ -d /sys/kernel/tracing/events ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/tracing/events ]
}

# within A B TOL : |A - B| <= TOL (floating point)
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# busy_cpus SECONDS: SCHED_IDLE spinners on every CPU for at most SECONDS
# (killed by idle_cpus or at exit), for tests that need every event:
# an idle CPU loses some (DESIGN.md quirks).  Any normal task preempts a
# SCHED_IDLE one at once, so to the scheduler the machine stays idle.
# False, with nothing started, when chrt (util-linux) is missing.
SPIN_PID=
busy_cpus() {
	command -v chrt >/dev/null || return 1
	chrt -i 0 "$WORKLOADS/spin" "$(nproc)" "$1" >/dev/null 2>&1 &
	SPIN_PID=$!
	trap 'idle_cpus; rm -rf "$TMP"' EXIT
	sleep 0.2
}
idle_cpus() {
	[ -n "$SPIN_PID" ] && kill "$SPIN_PID" 2>/dev/null
	SPIN_PID=
}
