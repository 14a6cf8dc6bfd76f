#!/usr/bin/env bash
# tests/e2e/unwind-leaf.sh - leaf-frame repair of frame-pointer chains
# (--call-graph fp; plain -g unwinds with CFI while recording): a workload
# whose hot functions are frameless leaves (tests/workloads/leafy.c, built
# -O2 -fno-omit-frame-pointer) loses their callers in a frame-pointer walk
# (perf shows mid_ab at 0%); ember's -g snapshot gives them back at the
# design's percentage, --no-leaf-fix (report or record) does not, and perf
# still reads the file as a plain frame-pointer recording.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
# long-running: starts first among the parallel-safe tests (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-report-lib.sh"

if ! need_root; then skip unwind-leaf "needs root to record"; exit 0; fi
if ! have_perf; then skip unwind-leaf "perf is not installed"; exit 0; fi

W=$TMP/leafy
if ! cc -O2 -g -fno-omit-frame-pointer -o "$W" "$TOP/tests/workloads/leafy.c" 2>"$TMP/cc"; then
	fail leafy-build "$(head -c 300 "$TMP/cc")"; exit 0
fi
if objdump -d "$W" | grep -A2 '<leaf_a>:' | grep -q 'push.*%rbp'; then
	skip unwind-leaf "this compiler gives leaf functions a frame: nothing to repair"; exit 0
fi
"$W" --design >"$TMP/design"
design_of() { awk -v s="$1" '$2 == s { print $3 }' "$TMP/design"; }

# pct FILE SYM: the first percentage of SYM's row in a --stdio report.
pct() {
	awk -v s="$2" '$(NF-1) == "[.]" && $NF == s { sub("%", "", $1); print $1; f = 1; exit }
		END { if (!f) print 0 }' "$1"
}

start_spinner 20
# 1999 Hz for 3 s: about 6000 samples, so the 3 points allowed against the
# design are over four standard deviations of chance.
rec() {   # rec TAG ARGS...
	local tag=$1; shift
	"$EMBER" record -q --call-graph fp -F 1999 "$@" -o "$TMP/$tag.data" -- "$W" 3 >"$TMP/$tag.rec" 2>&1 ||
		{ fail "record-$tag" "$(head -c 300 "$TMP/$tag.rec")"; exit 0; }
}
rec fix
rec nofix --no-leaf-fix

report() {   # report FILE OUT [ARGS...]
	local f=$1 out=$2; shift 2
	"$EMBER" report -i "$f" --stdio --children --sort sym -gnone "$@" >"$out" 2>&1
}
report "$TMP/fix.data" "$TMP/e.fix"
report "$TMP/fix.data" "$TMP/e.off" --no-leaf-fix
report "$TMP/nofix.data" "$TMP/e.nofix"
perf report -i "$TMP/fix.data" --stdio --children --sort sym -g none >"$TMP/p.fix" 2>/dev/null

p=$(pct "$TMP/p.fix" mid_ab)
if within "$p" 0 1; then pass "perf-loses-mid_ab (perf --children: ${p}%)"
else fail perf-loses-mid_ab "perf shows mid_ab at ${p}%: the workload's leaves are not frameless"; fi

for sym in mid_ab work; do
	want=$(design_of "$sym") got=$(pct "$TMP/e.fix" $sym)
	if within "$got" "$want" 3; then pass "repaired-$sym (${got}%, design ${want}%)"
	else fail "repaired-$sym" "${got}% after repair, design ${want}% (tolerance 3)"; fi
done

got=$(awk '/^# leaf-fix:/ { print $3, $5 }' "$TMP/e.fix")
read -r fixed checked <<<"${got:-0 0}"
if [ "$checked" -gt 1000 ] && [ $((fixed * 100)) -ge $((checked * 90)) ]; then
	pass "repair-count ($fixed of $checked chains repaired)"
else
	fail repair-count "'# leaf-fix:' says $fixed of $checked chains repaired"
fi

for v in off nofix; do
	got=$(pct "$TMP/e.$v" mid_ab)
	if within "$got" 0 0.5; then pass "no-leaf-fix-$v (mid_ab ${got}%)"
	else fail "no-leaf-fix-$v" "mid_ab at ${got}% without the repair"; fi
done

# perf reads the snapshot file as plain -g: its children match ember's
# unrepaired ones (no dwarf frames appended), and self percentages agree.
ok=1
for sym in work leaf_a leaf_b leaf_c; do
	a=$(pct "$TMP/e.off" $sym) b=$(pct "$TMP/p.fix" $sym)
	within "$a" "$b" 1 || { ok=0; why="$sym: ember --no-leaf-fix ${a}%, perf ${b}%"; }
done
if [ $ok = 1 ]; then pass "perf-reads-snapshot-as-fp"; else fail perf-reads-snapshot-as-fp "$why"; fi
report_agrees leaf-self "$TMP/fix.data"

s1=$(stat -c %s "$TMP/fix.data") s0=$(stat -c %s "$TMP/nofix.data")
if [ "$s1" -gt "$s0" ]; then pass "snapshot-recorded ($s1 bytes with, $s0 without)"
else fail snapshot-recorded "the -g file is not larger with the snapshot ($s1 vs $s0 bytes)"; fi

# Two frameless levels in a row: the sleeper calls libc's nanosleep, which
# calls clock_nanosleep, neither with a frame in Debian's libc, so the
# frame-pointer walk from main's frame gives main's caller and loses both
# __nanosleep's caller (main) and clock_nanosleep's (__nanosleep).  The
# off-CPU snapshot and their CFI give both back.
"$EMBER" record -q --off-cpu -o "$TMP/sl.data" -- "$WORKLOADS/sleeper" 20 5 >"$TMP/sl.rec" 2>&1 ||
	{ fail off-cpu-two-frameless "$(head -c 300 "$TMP/sl.rec")"; exit 0; }
"$EMBER" offcpu -i "$TMP/sl.data" --folded >"$TMP/sl.fix" 2>&1
"$EMBER" offcpu -i "$TMP/sl.data" --folded --no-leaf-fix >"$TMP/sl.nofix" 2>&1
sleep_line() { grep -m1 'nanosleep.*schedule' "$1" | cut -d' ' -f1; }
if ! sleep_line "$TMP/sl.nofix" | grep -q 'nanosleep;.*nanosleep'; then
	skip off-cpu-two-frameless "libc's nanosleep does not call clock_nanosleep here: $(sleep_line "$TMP/sl.nofix")"
elif sleep_line "$TMP/sl.nofix" | grep -q ';main;'; then
	skip off-cpu-two-frameless "libc's sleep functions have frames here: nothing to repair"
elif sleep_line "$TMP/sl.fix" | grep -qE ';main;[^;]*nanosleep[^;]*;[^;]*nanosleep'; then
	pass "off-cpu-two-frameless (main;__nanosleep;clock_nanosleep restored)"
else
	fail off-cpu-two-frameless "main is not the sleeping stack's caller of nanosleep: $(sleep_line "$TMP/sl.fix")"
fi
