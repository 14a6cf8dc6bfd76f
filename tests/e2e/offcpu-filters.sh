#!/usr/bin/env bash
# offcpu-filters.sh - the shared filters in the off-CPU views, on
# workloads whose behaviour is known by construction: a sleeper pinned to
# CPU 0 (10 sleeps of 50 ms) shows its off-CPU time under --cpu 0 and none
# under --cpu 1 in every view (offcpu's table, --threads and --folded,
# flame --wall, export --off-cpu, sched lat); --threads walls stay within
# the recording and the --time window; --state, --min-us and --max-us
# apply to --threads; export --off-cpu maps each frame to its file.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip offcpu-filters "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip offcpu-filters "no tracefs"; exit 0; }
command -v taskset >/dev/null || { skip offcpu-filters "taskset (util-linux) is missing"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip offcpu-filters "needs 2 CPUs"; exit 0; }

# Other tests may run sleepers and spinners at the same time: these go by
# names of their own.
cp "$WORKLOADS/sleeper" "$TMP/pinsleeper"
cp "$WORKLOADS/spin" "$TMP/pinspin"

# Idle CPUs lose events (DESIGN.md quirks): SCHED_IDLE spinners keep
# both busy while leaving the machine idle to the scheduler.
busy_cpus 12 || { skip offcpu-filters "chrt (util-linux) is missing"; exit 0; }
F=$TMP/pinned.data
ok=
for try in 1 2 3; do
	"$EMBER" record --off-cpu=wakeups -a -m 2048 -o "$F" -- taskset -c 0 "$TMP/pinsleeper" 10 50 \
		>/dev/null 2>"$TMP/rec.err" || continue
	grep -q ' 0 lost' "$TMP/rec.err" && { ok=1; break; }
done
idle_cpus
[ -n "$ok" ] || { skip offcpu-filters "no recording without lost events: $(tail -1 "$TMP/rec.err")"; exit 0; }

# shown_us FILE: the table's footer total, in microseconds.
shown_us() { awk '/off-CPU intervals shown/ { printf "%d", $6 * 1e6 }' "$1"; }
# folded_us FILE: the sum of the folded counts.
folded_us() { awk '{ t += $NF } END { printf "%d", t }' "$1"; }
# threads_off FILE: OFF_MS of the sleeper's row, or "none".
threads_off() { awk '$3 == "pinsleeper" { print $(NF - 4); found = 1 } END { if (!found) print "none" }' "$1"; }

for c in 0 1; do
	"$EMBER" offcpu -i "$F" --comm pinsleeper --cpu $c >"$TMP/table$c" 2>/dev/null
	"$EMBER" offcpu -i "$F" --comm pinsleeper --cpu $c --threads >"$TMP/threads$c" 2>/dev/null
	"$EMBER" offcpu -i "$F" --comm pinsleeper --cpu $c --folded >"$TMP/folded$c" 2>/dev/null
done
t0=$(shown_us "$TMP/table0") t1=$(shown_us "$TMP/table1")
check "table --cpu: the sleeper pinned to CPU 0 slept ${t0:-?} us there (>= 450000), ${t1:-?} us on CPU 1 (0)" \
	test "${t0:-0}" -ge 450000 -a "${t1:-1}" = 0
o0=$(threads_off "$TMP/threads0") o1=$(threads_off "$TMP/threads1")
check "--threads --cpu: OFF_MS ${o0} on CPU 0 (>= 450), on CPU 1: ${o1} (none or 0)" \
	awk -v a="$o0" -v b="$o1" 'BEGIN { exit !(a != "none" && a >= 450 && (b == "none" || b == 0)) }'
f0=$(folded_us "$TMP/folded0") f1=$(folded_us "$TMP/folded1")
check "--folded --cpu: ${f0} us on CPU 0 (>= 450000), ${f1} us on CPU 1 (0)" \
	test "$f0" -ge 450000 -a "$f1" = 0

# flame --wall: the sleeper's frame (its comm, the root of its stacks).
for c in 0 1; do
	"$EMBER" flame --wall -i "$F" --comm pinsleeper --cpu $c -o "$TMP/wall$c.svg" >/dev/null 2>&1
done
wall_us() {
	[ -s "$1" ] || { echo 0; return; }
	python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
total = 0
for g in ET.parse(sys.argv[1]).getroot().iter(S + "g"):
    t = g.find(S + "title")
    if t is not None and t.text.startswith("pinsleeper ("):
        total += int(g.get("n"))
print(total)
PY
}
w0=$(wall_us "$TMP/wall0.svg") w1=$(wall_us "$TMP/wall1.svg")
check "flame --wall --cpu: sleeper ${w0} us on CPU 0 (>= 450000), ${w1} us on CPU 1 (0)" \
	test "${w0:-0}" -ge 450000 -a "${w1:-1}" = 0

# export --off-cpu, as speedscope JSON: the sleeper's weights.
for c in 0 1; do
	"$EMBER" export --format speedscope --off-cpu -i "$F" --comm pinsleeper --cpu $c \
		-o "$TMP/ex$c.json" >/dev/null 2>&1
done
ex_ns() {
	python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print(-1); sys.exit()
print(sum(sum(p.get("weights", [])) for p in d["profiles"]))
PY
}
e0=$(ex_ns "$TMP/ex0.json") e1=$(ex_ns "$TMP/ex1.json")
check "export --off-cpu --cpu: ${e0} ns on CPU 0 (>= 450000000), ${e1} ns on CPU 1 (0)" \
	test "${e0%.*}" -ge 450000000 -a "${e1%.*}" = 0

# sched lat: the sleeper's waits end on CPU 0, where it runs.
for c in 0 1; do
	"$EMBER" sched lat -i "$F" --comm pinsleeper --cpu $c >"$TMP/lat$c" 2>/dev/null
done
measured() { awk '/^run-queue waits/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "measured,") print $i }' "$1"; }
l0=$(measured "$TMP/lat0") l1=$(measured "$TMP/lat1")
check "sched lat --cpu: ${l0:-?} waits on CPU 0 (>= 10 wakeups), ${l1:-?} on CPU 1 (0)" \
	test "${l0:-0}" -ge 10 -a "${l1:-1}" = 0

# --threads walls: no thread's wall is longer than the recording (the
# threads a system-wide recording lists at its start, pid 1's among them,
# are no births at time 0); on + off never exceed it.  (The span is that
# of the samples script prints, the records around them may reach a
# little further: 1 ms of slack, against walls of minutes before.)
first=$("$EMBER" script -i "$F" -F time 2>/dev/null | head -1 | tr -d ' :')
last=$("$EMBER" script -i "$F" -F time 2>/dev/null | tail -1 | tr -d ' :')
"$EMBER" offcpu -i "$F" --threads >"$TMP/all-threads" 2>/dev/null
check_walls() {   # FILE LIMIT_MS WHAT
	awk -v lim="$2" 'NR > 1 { n++; wall = $(NF - 6); on = $(NF - 5); off = $(NF - 4)
		if (wall > lim + 1 || on + off > wall + 0.01) { bad++; if (!ex) ex = $0 } }
		END { if (bad || !n) { printf "%d of %d rows: %s\n", bad, n, ex; exit 1 } }' "$1" >"$TMP/why"
	local rc=$?
	if [ $rc = 0 ]; then pass "$3"; else fail "$3" "$(cat "$TMP/why")"; fi
}
span_ms=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
check_walls "$TMP/all-threads" "$span_ms" "--threads on -a: every wall within the recording's ${span_ms} ms, on + off within the wall"
check "--threads on -a: pid 1's threads never seen are left out ($(awk '$1 == 1 && $(NF - 5) + $(NF - 4) == 0' "$TMP/all-threads" | wc -l) such rows)" \
	test "$(awk '$1 == 1 && $(NF - 5) + $(NF - 4) == 0' "$TMP/all-threads" | wc -l)" = 0

# A 0.2 s window in the middle: walls, on + off and the table's
# per-thread totals within 0.2 s.
mid=$(awk -v a="$first" -v b="$last" 'BEGIN { m = (a + b) / 2; printf "%.6f,%.6f", m - 0.1, m + 0.1 }')
"$EMBER" offcpu -i "$F" --threads --time "$mid" >"$TMP/win-threads" 2>/dev/null
check_walls "$TMP/win-threads" 200 "--threads --time (0.2 s): every wall within 200 ms"
"$EMBER" offcpu -i "$F" --time "$mid" --comm pinsleeper >"$TMP/win-table" 2>/dev/null
wt=$(shown_us "$TMP/win-table")
check "table --time (0.2 s): the sleeper's off-CPU total ${wt} us within 200000 (and > 100000)" \
	test "${wt:-0}" -le 200000 -a "${wt:-0}" -gt 100000

# --min-us and --max-us in --threads: the 50 ms sleeps are all under
# 100 ms.
"$EMBER" offcpu -i "$F" --threads --comm pinsleeper --min-us 100000 >"$TMP/min" 2>/dev/null
"$EMBER" offcpu -i "$F" --threads --comm pinsleeper --max-us 100000 >"$TMP/max" 2>/dev/null
mn=$(threads_off "$TMP/min") mx=$(threads_off "$TMP/max")
check "--threads --min-us 100000: OFF_MS $mn (0); --max-us 100000: OFF_MS $mx (>= 450)" \
	awk -v a="$mn" -v b="$mx" 'BEGIN { exit !(a == 0 && b >= 450) }'

# export --off-cpu's pprof mappings: each names its file, none empty.
if command -v go >/dev/null && timeout 120 go tool pprof -h >/dev/null 2>&1; then
	"$EMBER" export --format pprof --off-cpu -i "$F" --comm pinsleeper -o "$TMP/off.pb.gz" 2>/dev/null
	timeout 120 go tool pprof -raw "$TMP/off.pb.gz" >"$TMP/raw" 2>&1
	sed -n '/^Mappings/,$p' "$TMP/raw" | grep -E '^ *[0-9]+: ' >"$TMP/maps"
	check "export --off-cpu: $(wc -l <"$TMP/maps") pprof mappings, none empty, libc and the kernel named" \
		eval '! grep -q "0x0/0x0/0x0" "$TMP/maps" && grep -q "libc.so" "$TMP/maps" && grep -q kernel.kallsyms "$TMP/maps"'
else
	skip "export --off-cpu mappings" "go tool pprof is not installed"
fi

# --state S does not count preempted (R) time: three spinners pinned to
# one CPU never sleep, and wait runnable about 2/3 of the time.
# The workers are the threads that are not the process's first.
"$EMBER" record -q --off-cpu -a -m 2048 -o "$TMP/spin.data" -- taskset -c 1 "$TMP/pinspin" 3 1 \
	>/dev/null 2>&1
"$EMBER" offcpu -i "$TMP/spin.data" --threads --comm pinspin --state S >"$TMP/S" 2>/dev/null
"$EMBER" offcpu -i "$TMP/spin.data" --threads --comm pinspin --state R >"$TMP/R" 2>/dev/null
s=$(awk 'NR > 1 && $1 != $2 { t += $(NF - 4) } END { printf "%.1f", t }' "$TMP/S")
r=$(awk 'NR > 1 && $1 != $2 { t += $(NF - 4); n++ } END { printf "%.1f %d", t, n }' "$TMP/R")
check "--threads --state S: spinners' S time ${s} ms (< 30); --state R: ${r% *} ms in ${r#* } threads (>= 1000 in 3)" \
	awk -v s="$s" -v r="${r% *}" -v n="${r#* }" 'BEGIN { exit !(s < 30 && r >= 1000 && n == 3) }'
