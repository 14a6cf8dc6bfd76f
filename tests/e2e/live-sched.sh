#!/usr/bin/env bash
# live-sched.sh - ember sched lat while it records (runqlat 1 3): with 4
# CPU-bound threads on this 2-CPU machine every 1 s interval has wakeups
# that waited for a CPU, so each of the 3 histograms has counts; every
# wakeup of an interval is accounted for once in that interval.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-sched "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip live-sched "no tracefs"; exit 0; }

"$WORKLOADS/cpuhog" 4 8 >/dev/null &
HOG=$!
trap 'kill $HOG 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.2
"$EMBER" sched lat -a --interval 1 --count 3 >"$TMP/out" 2>"$TMP/err"
rc=$?
python3 - "$TMP/out" "$rc" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
parts = [p for p in re.split(r"^# live: .*$", text, flags=re.M) if "usecs" in p]
counts = [sum(int(m.group(1)) for m in re.finditer(r"^\s+\d+ -> \d+\s+: (\d+)", p, re.M))
          for p in parts]
ok = sys.argv[2] == "0" and len(parts) == 3 and all(c > 0 for c in counts)
print(("PASS" if ok else "FAIL") + f": sched lat -a --interval 1 --count 3 (exit {sys.argv[2]}): "
      f"{len(parts)} histograms with counts {counts}")
good = 0
for p in parts:
    m = re.search(r"^wakeups: (\d+) recorded .*?: (\d+) measured, (\d+) while already running or runnable, "
                  r"(\d+) superseded by a later wakeup, (\d+) never ran before the end, "
                  r"(\d+) filtered out", p, re.M)
    q = re.search(r"^preemptions: (\d+) switch-outs still runnable: (\d+) measured", p, re.M)
    hist = sum(int(x.group(1)) for x in re.finditer(r"^\s+\d+ -> \d+\s+: (\d+)", p, re.M))
    good += bool(m and q) and hist == int(m.group(2)) + int(q.group(2))
print(("PASS" if good == 3 else "FAIL") + f": each interval's histogram holds its measured waits ({good} of 3)")
PY
check "the live path's counts follow each histogram" \
	test "$(grep -c '^# live: ' "$TMP/out")" = 3
