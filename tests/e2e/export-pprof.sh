#!/usr/bin/env bash
# export-pprof.sh - ember export --format pprof read by go tool pprof: the
# known-ratio leaves at the shares ember report gives, the totals equal to
# the samples and their periods, build-ids in the mappings, an inline frame
# as pprof shows it, labels, a perf-recorded file, and bad input.
# parallel-safe: records only its own processes and compares files offline, nothing load changes (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
	skip export-pprof "go tool pprof is not here (Debian's golang-go; make deps)"
	exit 0
fi
pprof() { go tool pprof "$@" 2>/dev/null; }

# The recording: ratio's leaves at about 50/30/20% with call chains.
if ! "$EMBER" record -q -F 999 -g -o "$TMP/r.data" -- "$WORKLOADS/ratio" 0.6 >/dev/null 2>&1; then
	fail export-record "ember record of the ratio workload failed"
	exit 0
fi
"$EMBER" export --format pprof -i "$TMP/r.data" -o "$TMP/r.pb.gz" 2>"$TMP/r.err"
rc=$?
if [ $rc -ne 0 ] || ! pprof -raw "$TMP/r.pb.gz" >"$TMP/r.raw"; then
	fail export-pprof-reads "exit $rc, or go tool pprof cannot read it: $(head -c 300 "$TMP/r.err")"
	exit 0
fi
pass "export-pprof-reads (go tool pprof -raw reads the profile)"

# Leaves: pprof's flat% against report's self share, within 0.1 points.
"$EMBER" report -i "$TMP/r.data" --stdio --no-children --sort sym -g none 2>/dev/null |
	awk '$1 ~ /%$/ { sub(/%/, "", $1); print $NF, $1 }' >"$TMP/report.shares"
pprof -top -nodecount=100 "$TMP/r.pb.gz" |
	awk '$2 ~ /%$/ && $NF ~ /^leaf_/ { sub(/%/, "", $2); print $NF, $2 }' >"$TMP/pprof.shares"
bad="" n=0
for leaf in leaf_a leaf_b leaf_c; do
	r=$(awk -v l=$leaf '$1 == l { print $2 }' "$TMP/report.shares")
	p=$(awk -v l=$leaf '$1 == l { print $2 }' "$TMP/pprof.shares")
	if [ -z "$r" ] || [ -z "$p" ] || ! within "$r" "$p" 0.1; then
		bad+=" $leaf report=${r:-none} pprof=${p:-none}"
	else
		n=$((n + 1))
	fi
done
if [ -z "$bad" ]; then
	pass "export-pprof-shares (leaf_a/b/c: pprof -top's flat% = report's, within 0.1: $(tr '\n' ' ' <"$TMP/pprof.shares"))"
else
	fail export-pprof-shares "$bad"
fi

# Totals: the samples and the sum of their periods (report's event count).
read -r count period < <(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
	s && $1 ~ /^[0-9]+$/ { c += $1; p += $2 } END { printf "%d %d\n", c, p }' "$TMP/r.raw")
samples=$("$EMBER" script -i "$TMP/r.data" -F comm 2>/dev/null | wc -l)
events=$("$EMBER" report -i "$TMP/r.data" --stdio -g none 2>/dev/null |
	awk -F': ' '/^# Event count/ { print $2; exit }')
if [ "$count" -gt 0 ] && [ "$count" = "$samples" ] && [ "$period" = "$events" ]; then
	pass "export-pprof-totals ($count samples, $period ns: script's lines, report's event count)"
else
	fail export-pprof-totals "pprof: $count samples, $period ns; script: $samples lines; report: $events"
fi
# pprof takes the first mapping for the program: the workload's.
check export-pprof-main-file grep -q '^File: ratio$' <(pprof -top "$TMP/r.pb.gz")
check export-pprof-types grep -q '^samples/count cpu/nanoseconds\[dflt\]' "$TMP/r.raw"
check export-pprof-period grep -q '^PeriodType: cpu nanoseconds' "$TMP/r.raw"

# Build-ids: the workload's mapping carries the one its ELF note has.
want=$(readelf -n "$WORKLOADS/ratio" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
if [ -n "$want" ] && awk '/^Mappings/ { m = 1 } m' "$TMP/r.raw" | grep -q "/ratio $want"; then
	pass "export-pprof-build-id (ratio's mapping has build-id $want)"
else
	fail export-pprof-build-id "no mapping of ratio with build-id '$want': $(awk '/^Mappings/ { m = 1 } m' "$TMP/r.raw" | head -3)"
fi

# Labels: pid, tid and comm on each sample.
"$EMBER" export -f pprof --labels -i "$TMP/r.data" -o "$TMP/l.pb.gz" 2>/dev/null
if pprof -raw "$TMP/l.pb.gz" | grep -q 'comm:\[ratio\]' &&
   pprof -raw "$TMP/l.pb.gz" | grep -qE 'pid:\[[0-9]+\]' &&
   pprof -tags "$TMP/l.pb.gz" | grep -q 'tid'; then
	pass "export-pprof-labels (pid, tid, comm)"
else
	fail export-pprof-labels "$(pprof -raw "$TMP/l.pb.gz" | sed -n '/^Samples/,+3p' | tr '\n' ' ')"
fi

# An inline frame: spin_inner inlined into outer_loop (-O2, --call-graph
# dwarf as report-srcline records it) is one location of two lines,
# innermost first, and pprof shows it "(inline)" under outer_loop.
if cc -O2 -g -fomit-frame-pointer -o "$TMP/inlined" "$TOP/tests/workloads/inlined.c" 2>/dev/null &&
   "$EMBER" record -q --call-graph dwarf -F 999 -o "$TMP/i.data" -- "$TMP/inlined" 0.3 >/dev/null 2>&1 &&
   "$EMBER" export -f pprof -i "$TMP/i.data" -o "$TMP/i.pb.gz" 2>/dev/null; then
	loc=$(pprof -raw "$TMP/i.pb.gz" | grep -A1 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ spin_inner inlined.c:' |
		grep -c 'outer_loop inlined.c:')
	if [ "$loc" -gt 0 ] && pprof -traces "$TMP/i.pb.gz" | grep -A1 'spin_inner (inline)' | grep -q outer_loop; then
		pass "export-pprof-inline ($loc locations: spin_inner's line then outer_loop's; -traces shows spin_inner (inline))"
	else
		fail export-pprof-inline "$(pprof -raw "$TMP/i.pb.gz" | grep -A1 spin_inner | head -4)"
	fi
else
	skip export-pprof-inline "could not build or record the inlined workload"
fi

# A perf-recorded file.
if have_perf && perf record -q -F 999 -g -o "$TMP/p.data" -- "$WORKLOADS/ratio" 0.3 >/dev/null 2>&1; then
	if "$EMBER" export -f pprof -i "$TMP/p.data" -o "$TMP/p.pb.gz" 2>"$TMP/p.err" &&
	   pprof -top "$TMP/p.pb.gz" | grep -q 'leaf_a$'; then
		pass "export-pprof-perf-file (perf record's file: leaf_a in -top)"
	else
		fail export-pprof-perf-file "$(head -c 300 "$TMP/p.err")"
	fi
else
	skip export-pprof-perf-file "perf (linux-perf) is not here or failed to record"
fi

# Bad input: one line, exit 2 for usage, 1 for a missing file.
bad_case() {
	local name=$1 want=$2; shift 2
	"$EMBER" export "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
	local rc=$? lines
	lines=$(wc -l <"$TMP/bad.err")
	if [ $rc -eq "$want" ] && [ "$lines" -eq 1 ] && grep -q '^ember export: ' "$TMP/bad.err"; then
		pass "export-bad-$name (exit $rc: $(cat "$TMP/bad.err"))"
	else
		fail "export-bad-$name" "exit $rc (want $want), $lines lines: $(head -c 300 "$TMP/bad.err")"
	fi
}
bad_case no-format 2 -i "$TMP/r.data"
bad_case format 2 --format xml -i "$TMP/r.data"
bad_case missing 1 --format pprof -i "$TMP/no-such.data" -o "$TMP/x.pb.gz"
bad_case event 1 --format pprof --event no-such-event -i "$TMP/r.data" -o "$TMP/x.pb.gz"
bad_case out 1 --format pprof -i "$TMP/r.data" -o "$TMP/no/such/dir/x.pb.gz"
