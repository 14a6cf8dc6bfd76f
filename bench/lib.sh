# bench/lib.sh - what the benchmarks share, sourced after their own
# defaults: the binaries they need, a scratch folder, and the two
# measurements most of them take (a spinning workload's rate, a child's CPU,
# a row run and timed, the best of a row's runs).
#
#   . "$(dirname "$0")/lib.sh"; bench_setup NAME [WORKLOAD...]

# bench_setup NAME WORKLOAD... : EMBER, WORKLOADS and PERF resolved and
# checked (each workload must be built in WORKLOADS), NCPU, SPIN, and T, a
# folder removed at exit.
bench_setup() {
	local name=$1; shift
	: "${EMBER:=./ember}" "${WORKLOADS:=build/workloads}" "${PERF:=perf}"
	EMBER=$(realpath "$EMBER"); WORKLOADS=$(realpath "$WORKLOADS")
	NCPU=$(nproc)
	SPIN=$WORKLOADS/spin
	local need
	for need in "$EMBER" "${@/#/$WORKLOADS/}"; do
		[ -x "$need" ] || { echo "bench/$name.sh: $need missing (make; make workloads)" >&2; exit 2; }
	done
	command -v "$PERF" >/dev/null || { echo "bench/$name.sh: Linux perf missing (make deps)" >&2; exit 2; }
	[ "$(id -u)" -eq 0 ] || echo "bench/$name.sh: not root; -a may be refused" >&2
	T=$(mktemp -d /tmp/ember-bench.XXXXXX)
	trap 'rm -rf "$T"' EXIT
}

# spin_rate : units/s of NCPU spinning threads over SECONDS_PER_RUN.
spin_rate() {
	"$SPIN" "$NCPU" "$SECONDS_PER_RUN" | awk '{ print $(NF - 1) }'
}

# cpu_of FILE : user+sys seconds of the children line of bash's `times`.
cpu_of() {
	awk 'NR == 2 { s = 0
		for (i = 1; i <= 2; i++) { split($i, p, /m/); sub(/s/, "", p[2]); s += p[1] * 60 + p[2] }
		printf "%.3f", s }' "$1"
}

# bench_run NAME CMD... : runs CMD (a command or a function), its output in
# $T/NAME.out and $T/NAME.err; sets WALL (seconds) and CPU (user+sys
# seconds of CMD and its children: recorder and workload together).
bench_run() {
	local name=$1; shift
	local t0 t1
	t0=$(date +%s.%N)
	( "$@" >"$T/$name.out" 2>"$T/$name.err"; times >"$T/$name.times" )
	t1=$(date +%s.%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	CPU=$(cpu_of "$T/$name.times")
}

# bench_best max|min NEW OLD : the better of two runs' figures, where OLD
# is empty or 0 before the first run and a failed run's NEW is 0.
bench_best() {
	awk -v w="$1" -v a="$2" -v b="$3" 'BEGIN {
		if (b == "" || b == 0) print a
		else if (a == "" || a == 0) print b
		else print ((w == "max") == (a > b) ? a : b) }'
}
