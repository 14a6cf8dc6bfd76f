# report-ember.sh - ember report and ember script on ember's own files agree
# with perf's report and script on the same files, and with the known-ratio
# workload's design.
source "$TOP/tests/e2e-lib.sh"
source "$TOP/tests/e2e-report-lib.sh"

if ! have_perf; then
	skip report-ember "perf (linux-perf) is not installed"
	exit 0
fi
rec() { "$EMBER" record -q "$@" >/dev/null 2>"$TMP/rec.err" </dev/null; }

# The known-ratio runs sample one task's CPU time: no spinner needed, and
# none wanted (less contention, steadier shares); 10,000 samples each, so
# the 3 points allowed against the design are six standard deviations.
rec -F 4999 -g -o "$TMP/ratio.data" -- "$WORKLOADS/ratio" 2
report_agrees ember-ratio "$TMP/ratio.data"
script_agrees ember-ratio "$TMP/ratio.data"
design_agrees ember-ratio "$TMP/ratio.data" --no-children leaf_a=50,leaf_b=30,leaf_c=20
design_agrees ember-ratio "$TMP/ratio.data" --children work=100,mid_ab=80,leaf_a=50

# ember's stream, straight into ember's reader.
"$EMBER" record -q -F 4999 -g -o - -- "$WORKLOADS/ratio" 2 2>/dev/null </dev/null |
	"$EMBER" report -i - --stdio --no-children --sort sym >"$TMP/pipe.txt" 2>&1
if why=$($CMP design "$TMP/pipe.txt" leaf_a=50,leaf_b=30,leaf_c=20 3); then
	pass "ember-pipe: record -o - | report -i - ($why)"
else
	fail "ember-pipe: record -o - | report -i -" "$why"
fi

# System-wide parts: both CPUs kept busy (idle CPUs lose events here).
# script's lines match perf's for stacks unwound while recording; a stack
# the drain left for the report (behind, on a loaded machine: 6 lines of
# 21133 differed once under ASan) is unwound by each tool's own DWARF
# unwinder, with perf's inline frames.  Such a recording is made again
# once, and the line-for-line check skipped if the second is one too.
start_spinner 6
deferred=0
for try in 1 2; do
	"$EMBER" record -F 999 -a -g -o "$TMP/all.data" -- sleep 1 >/dev/null 2>"$TMP/all.err" </dev/null
	deferred=$(sed -n 's/.* \([0-9][0-9]*\) left for the report.*/\1/p' "$TMP/all.err")
	[ "${deferred:-0}" = 0 ] && break
done
report_agrees ember-system-wide "$TMP/all.data"
if [ "${deferred:-0}" = 0 ]; then
	script_agrees ember-system-wide "$TMP/all.data"
else
	skip ember-system-wide-script "the drain fell behind twice ($deferred stacks left for the report): perf unwinds those its own way"
fi

if ensure_tracefs; then
	rec -e sched:sched_switch -a -g -o "$TMP/sched.data" -- sleep 0.5
	report_agrees ember-sched-switch "$TMP/sched.data"
	layout_agrees ember-sched-switch "$TMP/sched.data"
else
	skip ember-sched-switch "tracefs cannot be mounted"
fi
