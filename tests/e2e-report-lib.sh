# tests/e2e-report-lib.sh - helpers for the views/script tests (sourced
# after tests/e2e-lib.sh): ember's report and script compared with perf's on
# the same file.
CMP="python3 $TOP/tests/e2e-compare.py"

# report_agrees NAME FILE: same symbols, percentages within 0.2 points.
report_agrees() {
	local name=$1 file=$2 why
	"$EMBER" report -i "$file" --stdio --no-children --sort sym >"$TMP/$name.ember" 2>"$TMP/$name.err"
	perf report -i "$file" --stdio --no-children --sort sym >"$TMP/$name.perf" 2>/dev/null
	if why=$($CMP report "$TMP/$name.ember" "$TMP/$name.perf" 0.2); then
		pass "$name: report ($why)"
	else
		fail "$name: report" "$why $(head -c 300 "$TMP/$name.err")"
	fi
}

# script_agrees NAME FILE [FIELDS [ARGS...]]: (ARGS go to both) every sample's comm, pid, tid, cpu,
# time, event, ip and symbol as perf script prints them.  (A recording of
# one command by perf has no cpu field: perf refuses to print it.)
script_agrees() {
	local name=$1 file=$2 fields=${3:-comm,pid,tid,cpu,time,event,ip,sym} why
	shift $(($# < 3 ? $# : 3))
	"$EMBER" script -i "$file" -F "$fields" "$@" >"$TMP/$name.sember" 2>"$TMP/$name.serr"
	perf script -i "$file" -F "$fields" "$@" >"$TMP/$name.sperf" 2>/dev/null
	if why=$($CMP script "$TMP/$name.sember" "$TMP/$name.sperf"); then
		pass "$name: script ($why)"
	else
		fail "$name: script" "$why $(head -c 300 "$TMP/$name.serr")"
	fi
}

# layout_agrees NAME FILE: perf script's default layout, tracepoint fields
# and all, line for line.
layout_agrees() {
	local name=$1 file=$2 why
	# Warnings (a file deleted while recorded) go apart, as perf's do.
	"$EMBER" script -i "$file" >"$TMP/$name.layout" 2>"$TMP/$name.layout-err"
	perf script -i "$file" >"$TMP/$name.layout-perf" 2>/dev/null
	if why=$($CMP script "$TMP/$name.layout" "$TMP/$name.layout-perf"); then
		pass "$name: default script layout with fields ($why)"
	else
		fail "$name: default script layout with fields" "$why"
	fi
}

# stdin_report_agrees NAME STREAM: ember and perf report the stream read
# from standard input alike; returns 1, saying nothing, when perf fails
# on it (perf 6.1 aborts on some of its own streams).
stdin_report_agrees() {
	local name=$1 stream=$2 why
	perf report -i - --stdio --no-children --sort sym <"$stream" >"$TMP/$name.stdin-perf" \
		2>/dev/null || return 1
	"$EMBER" report -i - --stdio --no-children --sort sym <"$stream" >"$TMP/$name.stdin-ember" 2>&1
	if why=$($CMP report "$TMP/$name.stdin-ember" "$TMP/$name.stdin-perf" 0.2); then
		pass "$name: report from stdin ($why)"
	else
		fail "$name: report from stdin" "$why"
	fi
}

# perf_stream_agrees NAME ARGS...: perf record ARGS -o - (up to three
# recordings, until perf reads one back), reported from stdin alike.
perf_stream_agrees() {
	local name=$1 attempt; shift
	for attempt in 1 2 3; do
		perf record -q -B -o - "$@" 2>/dev/null >"$TMP/$name.pipe"
		stdin_report_agrees "$name" "$TMP/$name.pipe" && return 0
	done
	skip "$name: report from stdin" "perf report crashed on all 3 of its own streams"
}

# design_agrees NAME REPORT-ARGS SPEC: ember's percentages of the
# known-ratio workload against its design (within 3 points).
design_agrees() {
	local name=$1 file=$2 mode=$3 spec=$4 why
	"$EMBER" report -i "$file" --stdio $mode --sort sym >"$TMP/$name.design" 2>&1
	if why=$($CMP design "$TMP/$name.design" "$spec" 3); then
		pass "$name: $mode matches the design ($why)"
	else
		fail "$name: $mode matches the design" "$why"
	fi
}

# Keep both CPUs busy so idle CPUs do not drop events (DESIGN.md quirks).
start_spinner() {
	"$WORKLOADS/spin" 1 "$1" >/dev/null 2>&1 &
	SPINNER=$!
	trap 'kill $SPINNER 2>/dev/null; rm -rf "$TMP"' EXIT
}
