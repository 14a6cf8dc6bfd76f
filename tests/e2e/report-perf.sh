# report-perf.sh - ember report and ember script read files written by
# Linux perf and agree with perf's own report and script on them.
source "$TOP/tests/e2e-lib.sh"
CMP="python3 $TOP/tests/e2e-compare.py"

if ! have_perf; then
	skip report-perf "perf (linux-perf) is not installed"
	exit 0
fi

# report_agrees NAME FILE: same symbols, percentages within 0.2 points.
report_agrees() {
	local name=$1 file=$2
	"$EMBER" report -i "$file" --stdio --no-children --sort sym >"$TMP/$name.ember" 2>"$TMP/$name.err"
	perf report -i "$file" --stdio --no-children --sort sym >"$TMP/$name.perf" 2>/dev/null
	local why
	if why=$($CMP report "$TMP/$name.ember" "$TMP/$name.perf" 0.2); then
		pass "$name: report ($why)"
	else
		fail "$name: report" "$why $(head -c 300 "$TMP/$name.err")"
	fi
}

# script_agrees NAME FILE [FIELDS]: every sample's comm, pid, tid, cpu,
# time, event, ip and symbol as perf script prints them.  (A recording of
# one command has no cpu field: perf refuses to print it.)
script_agrees() {
	local name=$1 file=$2 fields=${3:-comm,pid,tid,cpu,time,event,ip,sym}
	"$EMBER" script -i "$file" -F $fields >"$TMP/$name.sember" 2>"$TMP/$name.serr"
	perf script -i "$file" -F $fields >"$TMP/$name.sperf" 2>/dev/null
	local why
	if why=$($CMP script "$TMP/$name.sember" "$TMP/$name.sperf"); then
		pass "$name: script ($why)"
	else
		fail "$name: script" "$why $(head -c 300 "$TMP/$name.serr")"
	fi
}

# Keep both CPUs busy so idle CPUs do not drop events (DESIGN.md quirks).
"$WORKLOADS/spin" 1 4 >/dev/null 2>&1 &
spinner=$!
trap 'kill $spinner 2>/dev/null; rm -rf "$TMP"' EXIT

perf record -q -o "$TMP/ratio.data" -F 999 -g -- "$WORKLOADS/ratio" 1.5 >/dev/null 2>&1
report_agrees perf-ratio "$TMP/ratio.data"
script_agrees perf-ratio "$TMP/ratio.data" comm,pid,tid,time,event,ip,sym

# The known-ratio design, self and children, within 3 points.
"$EMBER" report -i "$TMP/ratio.data" --stdio --no-children --sort sym >"$TMP/self.txt" 2>&1
if why=$($CMP design "$TMP/self.txt" leaf_a=50,leaf_b=30,leaf_c=20 3); then
	pass "perf-ratio: self matches design ($why)"
else
	fail "perf-ratio: self matches design" "$why"
fi
"$EMBER" report -i "$TMP/ratio.data" --stdio --children --sort sym >"$TMP/children.txt" 2>&1
if why=$($CMP design "$TMP/children.txt" work=100,mid_ab=80,leaf_a=50 3); then
	pass "perf-ratio: children match design ($why)"
else
	fail "perf-ratio: children match design" "$why"
fi

perf record -q -o "$TMP/all.data" -F 999 -a -g -- sleep 1 >/dev/null 2>&1
report_agrees perf-system-wide "$TMP/all.data"
script_agrees perf-system-wide "$TMP/all.data"

if ensure_tracefs; then
	perf record -q -o "$TMP/sched.data" -e sched:sched_switch -a -g -- sleep 0.5 >/dev/null 2>&1
	report_agrees perf-sched-switch "$TMP/sched.data"
	script_agrees perf-sched-switch "$TMP/sched.data"
	"$EMBER" script -i "$TMP/sched.data" >"$TMP/sched.txt" 2>&1
	perf script -i "$TMP/sched.data" >"$TMP/sched.perf" 2>/dev/null
	if why=$($CMP script "$TMP/sched.txt" "$TMP/sched.perf"); then
		pass "perf-sched-switch: default script layout with fields ($why)"
	else
		fail "perf-sched-switch: default script layout with fields" "$why"
	fi
else
	skip perf-sched-switch "tracefs cannot be mounted"
fi

# The stream variant, read from stdin.  perf 6.1 itself sometimes aborts on
# its own streams (an assertion in util/build-id.c): try a few recordings.
pipe_ok=no
for attempt in 1 2 3; do
	perf record -q -o - -F 999 -g -- "$WORKLOADS/ratio" 0.5 2>/dev/null >"$TMP/ratio.pipe"
	if perf report -i - --stdio --no-children --sort sym <"$TMP/ratio.pipe" \
		>"$TMP/pipe.perf" 2>/dev/null; then
		pipe_ok=yes
		break
	fi
done
if [ $pipe_ok = no ]; then
	skip "perf-pipe: report from stdin" "perf report crashed on all 3 of its own streams"
else
	"$EMBER" report -i - --stdio --no-children --sort sym <"$TMP/ratio.pipe" >"$TMP/pipe.ember" 2>&1
	if why=$($CMP report "$TMP/pipe.ember" "$TMP/pipe.perf" 0.2); then
		pass "perf-pipe: report from stdin ($why)"
	else
		fail "perf-pipe: report from stdin" "$why"
	fi
fi
