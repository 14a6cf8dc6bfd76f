#!/usr/bin/env bash
# tests/e2e/filters.sh - the one filter layer: every view that reads a
# recording (report, script, collapse, flame, export, offcpu's table,
# --folded and --threads, flame --wall, export --off-cpu, sched lat) with
# each of --pid, --tid, --comm, --cpu and --time alone, on one system-wide
# recording (record --off-cpu=wakeups -F 499 -a) of programs pinned to each
# CPU and a two-thread one.  tests/e2e-filters.py checks each view's total
# against the same total computed from the recording's own records.
set -u
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip filters "needs root to record system-wide"; exit 0; }
ensure_tracefs || { skip filters "no tracefs"; exit 0; }
command -v taskset >/dev/null || { skip filters "taskset (util-linux) is missing"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip filters "needs 2 CPUs"; exit 0; }

# Names of their own, so other tests' programs are not taken for them.
cp "$WORKLOADS/toolwork" "$TMP/filtera"
cp "$WORKLOADS/toolwork" "$TMP/filterb"
cp "$WORKLOADS/offcpu" "$TMP/filterow"
# Every switch is needed: an idle CPU loses events (DESIGN.md quirks).
busy_cpus 20 || { skip filters "chrt (util-linux) is missing"; exit 0; }
F=$TMP/m.data
ok=
for try in 1 2 3; do
	"$EMBER" record --off-cpu=wakeups -F 499 -a -m 1024 -o "$F" -- sh -c \
		"taskset -c 0 $TMP/filtera runsleep 20 20 & taskset -c 1 $TMP/filterb runsleep 20 20 &
		 $TMP/filterow; wait" >/dev/null 2>"$TMP/rec.err" || continue
	grep -q ' 0 lost' "$TMP/rec.err" && { ok=1; break; }
	echo "note: try $try: $(grep lost "$TMP/rec.err")"
done
idle_cpus
[ -n "$ok" ] || { skip filters "no recording without lost events: $(tail -1 "$TMP/rec.err")"; exit 0; }

ids() { "$EMBER" script -i "$F" -F comm,pid,tid 2>/dev/null | awk -v c="$1" '$1 == c { print $2; exit }'; }
pid=$(ids filtera) tid=$(ids pipewriter)
pid=${pid%/*} tid=${tid#*/}
if [ -z "$pid" ] || [ -z "$tid" ]; then
	fail filters-workload "the recording has no filtera process (${pid:-none}) or pipewriter thread (${tid:-none})"
	exit 0
fi
have_perf || { skip filters "perf is not installed (the recording's end comes from perf script)"; exit 0; }
python3 "$TOP/tests/e2e-filters.py" "$EMBER" "$F" "$TMP" "$pid" "$tid" filterb | tee "$TMP/out"
if [ -n "${FILTERS_KEEP:-}" ] && grep -q ^FAIL "$TMP/out"; then cp "$F" "$FILTERS_KEEP"; echo "$pid $tid" > "$FILTERS_KEEP.ids"; fi
