# report-perf.sh - ember report and ember script read files written by
# Linux perf and agree with perf's own report and script on them.
source "$TOP/tests/e2e-lib.sh"
source "$TOP/tests/e2e-report-lib.sh"

if ! have_perf; then
	skip report-perf "perf (linux-perf) is not installed"
	exit 0
fi

# The known-ratio run samples one task: no spinner (steadier shares).
perf record -q -B -o "$TMP/ratio.data" -F 4999 -g -- "$WORKLOADS/ratio" 1 >/dev/null 2>&1
report_agrees perf-ratio "$TMP/ratio.data"
script_agrees perf-ratio "$TMP/ratio.data" comm,pid,tid,time,event,ip,sym

# The known-ratio design, self and children, within 3 points.
design_agrees perf-ratio "$TMP/ratio.data" --no-children leaf_a=50,leaf_b=30,leaf_c=20
design_agrees perf-ratio "$TMP/ratio.data" --children work=100,mid_ab=80,leaf_a=50

start_spinner 4
perf record -q -B -o "$TMP/all.data" -F 999 -a -g -- sleep 1 >/dev/null 2>&1
report_agrees perf-system-wide "$TMP/all.data"
script_agrees perf-system-wide "$TMP/all.data"

if ensure_tracefs; then
	perf record -q -B -o "$TMP/sched.data" -e sched:sched_switch -a -g -- sleep 0.5 >/dev/null 2>&1
	report_agrees perf-sched-switch "$TMP/sched.data"
	script_agrees perf-sched-switch "$TMP/sched.data"
	layout_agrees perf-sched-switch "$TMP/sched.data"
else
	skip perf-sched-switch "tracefs cannot be mounted"
fi

# The stream variant, read from stdin.
perf_stream_agrees perf-pipe -F 999 -g -- "$WORKLOADS/ratio" 0.5

# perf record -z: zstd-compressed records, inflated by ember's reader and
# read as the plain ones are (time order, call chains), from a file and
# from a stream; no view may warn of records it did not read.
if perf record -z -q -B -o "$TMP/z.data" -F 4999 -g -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1 &&
   perf report -i "$TMP/z.data" --header-only 2>/dev/null | grep -q '^# compressed : Zstd'; then
	report_agrees perf-compressed "$TMP/z.data"
	script_agrees perf-compressed "$TMP/z.data" comm,pid,tid,time,event,ip,sym
	if grep -q 'warning' "$TMP/perf-compressed.err" "$TMP/perf-compressed.serr"; then
		fail "perf-compressed: no warnings" "$(grep -h warning "$TMP/perf-compressed.err" "$TMP/perf-compressed.serr" | head -c 300)"
	else
		pass "perf-compressed: no warnings"
	fi
	perf_stream_agrees perf-compressed-pipe -z -F 999 -g -- "$WORKLOADS/ratio" 0.5
else
	skip perf-compressed "this perf cannot record -z (built without zstd)"
fi
