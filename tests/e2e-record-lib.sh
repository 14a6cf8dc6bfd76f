# tests/e2e-record-lib.sh - helpers for the tests/e2e/record-*.sh scripts
# (sourced after tests/e2e-lib.sh): running ember with its output captured,
# reading ember's files back with Linux perf, and keeping CPUs busy.
set -u

PERF=${PERF:-perf}
NCPU=$(nproc)
SPIN_PIDS=()

# Clean up spinners and background recorders as well as $TMP.
cleanup_record_tests() {
	local p
	for p in ${SPIN_PIDS[@]+"${SPIN_PIDS[@]}"}; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup_record_tests EXIT

# run_ember TAG ARGS... : runs $EMBER ARGS with stdout in $TMP/TAG.out and
# stderr in $TMP/TAG.err, under a timeout; sets RC.  Standard input is
# /dev/null so nothing waits on a terminal.
run_ember() {
	local tag=$1; shift
	timeout -k 5 60 "$EMBER" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" </dev/null
	RC=$?
}

# perf_stat FILE TYPE : how many records of TYPE (SAMPLE, LOST, COMM, ...)
# perf counts in FILE, from the aggregated section of `perf report --stats`;
# empty when perf cannot read the file.
perf_stat() {
	"$PERF" report -i "$1" --stats 2>/dev/null |
		awk -v t="$2" 'BEGIN { n = 0 }
			/stats:$/ && !/^Aggregated/ { exit }
			$1 == t && $2 == "events:" { n = $3 }
			END { print n }'
}

# perf_lost_sum FILE : total of the `lost` fields of the LOST records.
perf_lost_sum() {
	"$PERF" script -i "$1" --show-lost-events -F comm 2>/dev/null |
		awk '/PERF_RECORD_LOST / { s += $NF } END { print s + 0 }'
}

# perf_reads FILE : perf report and perf script both accept FILE, exit 0,
# and see at least one sample.  Prints why not on failure.
perf_reads() {
	local f=$1 n
	if ! "$PERF" report -i "$f" --stdio >"$TMP/pr.out" 2>"$TMP/pr.err"; then
		echo "perf report exit $?: $(head -c 300 "$TMP/pr.err")"; return 1
	fi
	if ! "$PERF" script -i "$f" >"$TMP/ps.out" 2>"$TMP/ps.err"; then
		echo "perf script exit $?: $(head -c 300 "$TMP/ps.err")"; return 1
	fi
	n=$(perf_stat "$f" SAMPLE)
	if [ "${n:-0}" -lt 1 ]; then
		echo "perf sees no samples"; return 1
	fi
	if grep -qiE 'not properly terminated|data size field is 0' "$TMP/pr.err"; then
		echo "perf says the file is incomplete: $(head -c 300 "$TMP/pr.err")"; return 1
	fi
	return 0
}

# looks_complete FILE : FILE exists and perf reads it as a finished
# recording (no warning that the recorder did not terminate properly).
looks_complete() {
	local f=$1
	[ -s "$f" ] || return 1
	"$PERF" report -i "$f" --stats >/dev/null 2>"$TMP/lc.err" || return 1
	! grep -qiE 'not properly terminated|data size field is 0|WARNING' "$TMP/lc.err"
}

# parse_end_line ERRFILE : finds `ember record: N samples, M lost, X MB
# written to FILE` and sets EL_N, EL_M, EL_MB, EL_FILE; fails if absent.
parse_end_line() {
	local line
	line=$(grep -E '^ember record: [0-9]+ samples, [0-9]+ lost, [0-9.]+ MB written to .+$' "$1" | tail -1)
	[ -n "$line" ] || return 1
	EL_N=$(sed -E 's/^ember record: ([0-9]+) samples.*/\1/' <<<"$line")
	EL_M=$(sed -E 's/^.* samples, ([0-9]+) lost.*/\1/' <<<"$line")
	EL_MB=$(sed -E 's/^.* lost, ([0-9.]+) MB.*/\1/' <<<"$line")
	EL_FILE=$(sed -E 's/^.* MB written to //' <<<"$line")
}

# spinner CPU SECONDS : a one-thread spin pinned to CPU, in the background,
# keeping that CPU busy (idle CPUs lose events, see DESIGN.md).
spinner() {
	taskset -c "$1" "$WORKLOADS/spin" 1 "$2" >/dev/null 2>&1 &
	SPIN_PIDS+=($!)
}

# busy_all SECONDS : one pinned spinner on every CPU.
busy_all() {
	local c
	for ((c = 0; c < NCPU; c++)); do spinner "$c" "$1"; done
}

stop_spinners() {
	local p
	for p in ${SPIN_PIDS[@]+"${SPIN_PIDS[@]}"}; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	SPIN_PIDS=()
}

# require_perf : skip the whole script (one SKIP line) without Linux perf.
require_perf() {
	if ! have_perf; then skip "$1" "Linux perf not installed (make deps)"; exit 0; fi
}

# self_pct REPORT SYMBOL : the percentage perf report --stdio --sort sym
# printed for SYMBOL (0 when absent).
self_pct() {
	awk -v s="$2" '$1 ~ /%$/ && $NF == s { v = $1; sub(/%/, "", v); print v; f = 1; exit }
		END { if (!f) print 0 }' "$1"
}
