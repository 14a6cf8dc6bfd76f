# report-perf-formats.sh - ember reads the perf.data variants perf record
# writes with its less common options, and agrees with perf on each:
# --sample-cpu -T, event groups (with and without :S), --switch-output's
# several files, streams with tracing data, and branch stacks (LBR call
# stacks and -b, which this VM cannot record: made from a -g recording by
# tests/tools/brstack, each sample's stack from its own chain).
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
# long-running: starts first among the parallel-safe tests (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"
source "$TOP/tests/e2e-report-lib.sh"

if ! have_perf; then
	skip report-perf-formats "perf (linux-perf) is not installed"
	exit 0
fi

# sections_agree NAME FILE: one report section per event, as perf report
# --no-group prints them: same samples, event counts and rows.
sections_agree() {
	local name=$1 file=$2 why
	"$EMBER" report -i "$file" --stdio --no-children --sort sym --no-group >"$TMP/$name.ember" 2>"$TMP/$name.err"
	perf report -i "$file" --stdio --no-children --sort sym --no-group >"$TMP/$name.perf" 2>/dev/null
	if why=$($CMP sections "$TMP/$name.ember" "$TMP/$name.perf" 0.01); then
		pass "$name: report per event ($why)"
	else
		fail "$name: report per event" "$why $(head -c 300 "$TMP/$name.err")"
	fi
}

# group_agrees NAME FILE MODE: perf report's default view of a group file,
# one table with a column per member.
group_agrees() {
	local name=$1 file=$2 mode=$3 why
	"$EMBER" report -i "$file" --stdio $mode --sort sym >"$TMP/$name.gember" 2>"$TMP/$name.err"
	perf report -i "$file" --stdio $mode --sort sym >"$TMP/$name.gperf" 2>/dev/null
	if why=$($CMP group "$TMP/$name.gember" "$TMP/$name.gperf" 0.01); then
		pass "$name: report $mode, the group in one table ($why)"
	else
		fail "$name: report $mode, the group in one table" "$why $(head -c 300 "$TMP/$name.err")"
	fi
}

# --sample-cpu and -T (--timestamp): cpu and time fields in every sample.
perf record -q -o "$TMP/cpu.data" --sample-cpu -T -F 999 -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
report_agrees perf-sample-cpu "$TMP/cpu.data"
script_agrees perf-sample-cpu "$TMP/cpu.data" comm,pid,tid,cpu,time,event,ip,sym

# An event group: each member samples on its own.
perf record -q -o "$TMP/group.data" -e '{cpu-clock,task-clock}' -F 999 -- \
	"$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
sections_agree perf-group "$TMP/group.data"
group_agrees perf-group "$TMP/group.data" --no-children
script_agrees perf-group "$TMP/group.data" comm,pid,tid,time,event,period,ip,sym

# The leader samples and reads the group (PERF_SAMPLE_READ): each member
# is weighed by how much its counter grew since its last sample.
perf record -q -o "$TMP/read.data" -e '{cpu-clock,task-clock}:S' -F 999 -- \
	"$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
sections_agree perf-group-read "$TMP/read.data"
group_agrees perf-group-read "$TMP/read.data" --no-children
script_agrees perf-group-read "$TMP/read.data" comm,pid,tid,time,event,period,ip,sym

# The same from a stream, where GROUP_DESC comes as a HEADER_FEATURE.
perf record -q -o - -e '{cpu-clock,task-clock}' -F 999 -- "$WORKLOADS/ratio" 0.3 \
	2>/dev/null >"$TMP/group.pipe"
"$EMBER" report -i - --stdio --sort sym <"$TMP/group.pipe" >"$TMP/gpipe.ember" 2>&1
perf report -i - --stdio --sort sym <"$TMP/group.pipe" >"$TMP/gpipe.perf" 2>/dev/null
if why=$($CMP group "$TMP/gpipe.ember" "$TMP/gpipe.perf" 0.01); then
	pass "perf-group-pipe: report from stdin, the group in one table ($why)"
else
	fail "perf-group-pipe: report from stdin, the group in one table" "$why"
fi

# Members that sample different code: page faults land in the fault
# path, which the clock sees little of; rows one member lacks show 0.00%.
perf record -q -o "$TMP/mixed.data" -e '{task-clock,page-faults}' -F 4999 -- \
	"$WORKLOADS/touch" >/dev/null 2>&1
group_agrees perf-group-mixed "$TMP/mixed.data" --no-children
sections_agree perf-group-mixed "$TMP/mixed.data"

# With call graphs: children and self columns per member.
perf record -q -o "$TMP/groupg.data" -e '{cpu-clock,task-clock}' -F 999 -g -- \
	"$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
group_agrees perf-group-g "$TMP/groupg.data" --children
group_agrees perf-group-g "$TMP/groupg.data" --no-children

# --switch-output: a new file each second, perf.data.YYYYMMDDHHMMSSss.
mkdir -p "$TMP/switch"
perf record -q -o "$TMP/switch/perf.data" --switch-output=1s -F 999 -g -- \
	"$WORKLOADS/ratio" 2.5 >/dev/null 2>&1
nfiles=0
for f in "$TMP"/switch/perf.data.[0-9]*; do
	[ -f "$f" ] || continue
	nfiles=$((nfiles + 1))
	report_agrees "perf-switch-output-$nfiles" "$f"
	script_agrees "perf-switch-output-$nfiles" "$f" comm,pid,tid,time,event,ip,sym
done
if [ "$nfiles" -ge 2 ]; then
	pass "perf-switch-output: $nfiles files"
else
	fail "perf-switch-output" "want 2 or more files, perf wrote $nfiles: $(ls "$TMP/switch")"
fi

# A stream of tracepoint samples: features, attrs and tracing data come
# as records (HEADER_FEATURE, HEADER_ATTR, HEADER_TRACING_DATA).
if ensure_tracefs; then
	# A shell sleeping 30 times, not -a: this script runs beside others
	# (parallel-safe), whose short-lived processes perf and ember would
	# name apart.
	perf record -q -o - -e sched:sched_switch -g -- \
		sh -c 'for i in $(seq 30); do sleep 0.01; done' 2>/dev/null >"$TMP/tp.pipe"
	"$EMBER" script -i - <"$TMP/tp.pipe" >"$TMP/tp.ember" 2>"$TMP/tp.err"
	perf script -i - <"$TMP/tp.pipe" >"$TMP/tp.perf" 2>/dev/null
	if why=$($CMP script "$TMP/tp.ember" "$TMP/tp.perf") && ! [ -s "$TMP/tp.err" ]; then
		pass "perf-pipe-tracepoint: default script layout from stdin ($why)"
	else
		fail "perf-pipe-tracepoint: default script layout from stdin" "$why $(head -c 300 "$TMP/tp.err")"
	fi
else
	skip perf-pipe-tracepoint "tracefs cannot be mounted"
fi

# Branch stacks, built from a frame-pointer recording of the known-ratio
# workload.  perf report shows such files by branch by default, and with
# --no-branch-stack as usual, with call graphs (from the LBR for lbr).
BRSTACK="$BUILD/tests/tools/brstack"
# children_agree KIND: ember's and perf's --children tables of KIND.data
# agree.  Once in three full runs (never alone) one address differed (ember
# 0x389, perf 0x7fdfe7dfe389): the recording is made again once then, the
# failed try named and its files kept in /tmp/ember-failed-branch.* for a
# look; a second difference fails below.
children_agree() {
	"$EMBER" report -i "$TMP/$1.data" --stdio --children --sort sym --no-branch-stack \
		>"$TMP/$1.try-ember" 2>&1
	perf report -i "$TMP/$1.data" --stdio --children --sort sym --no-branch-stack -g callee \
		>"$TMP/$1.try-perf" 2>/dev/null
	$CMP report "$TMP/$1.try-ember" "$TMP/$1.try-perf" 0.2
}
for try in 1 2; do
	perf record -q -o "$TMP/fp.data" -F 999 -g -- "$WORKLOADS/ratio" 1 >/dev/null 2>&1
	differs=""
	for kind in lbr any; do
		"$BRSTACK" $kind "$TMP/fp.data" "$TMP/$kind.data" 2>/dev/null || continue
		why=$(children_agree $kind) || differs+=" $kind: $why"
	done
	[ -z "$differs" ] && break
	keep=$(mktemp -d /tmp/ember-failed-branch.XXXXXX)
	cp "$TMP"/fp.data "$TMP"/*.try-ember "$TMP"/*.try-perf "$TMP"/lbr.data "$TMP"/any.data "$keep/" 2>/dev/null
	echo "note: branch stacks, try $try: --children differs:$differs (files kept in $keep)"
done
for kind in lbr any; do
	if ! "$BRSTACK" $kind "$TMP/fp.data" "$TMP/$kind.data" 2>"$TMP/$kind.conv"; then
		fail "perf-branch-$kind: making the file" "$(head -c 300 "$TMP/$kind.conv")"
		continue
	fi
	# (-g callee: in the caller order --children picks, perf 6.1 looks
	# up an LBR chain's kernel frames as user addresses, and names none.)
	for mode in --no-children --children; do
		"$EMBER" report -i "$TMP/$kind.data" --stdio $mode --sort sym --no-branch-stack \
			>"$TMP/$kind.ember" 2>&1
		perf report -i "$TMP/$kind.data" --stdio $mode --sort sym --no-branch-stack -g callee \
			>"$TMP/$kind.perf" 2>/dev/null
		if why=$($CMP report "$TMP/$kind.ember" "$TMP/$kind.perf" 0.2); then
			pass "perf-branch-$kind: report $mode ($why)"
		else
			fail "perf-branch-$kind: report $mode" "$why"
		fi
	done
	script_agrees "perf-branch-$kind" "$TMP/$kind.data" comm,tid,time,ip,sym,weight,brstack
	"$EMBER" report -i "$TMP/$kind.data" --stdio >"$TMP/$kind.bember" 2>&1
	perf report -i "$TMP/$kind.data" --stdio >"$TMP/$kind.bperf" 2>/dev/null
	if why=$($CMP branches "$TMP/$kind.bember" "$TMP/$kind.bperf" 0.01); then
		pass "perf-branch-$kind: report by branch, perf's default ($why)"
	else
		fail "perf-branch-$kind: report by branch, perf's default" "$why"
	fi
done
# The LBR file's chains hold the sampled ip alone: the callers come only
# from the branch stack, so main and work hold every sample only when it is
# used (the leaves' shares vary with the machine's load: not checked here).
design_agrees perf-branch-lbr "$TMP/lbr.data" "--children --no-branch-stack" main=100,work=100
