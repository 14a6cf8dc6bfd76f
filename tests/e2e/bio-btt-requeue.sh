#!/usr/bin/env bash
# bio-btt-requeue.sh - ember bio's btt table against btt on a capture with
# requeues: the workload blkgen writes classic per-CPU blktrace files of
# requests on two devices, requeued and issued again (R then D, R then I
# and D, twice), merged back and front, or issued without an insert, at
# known times (no device here requeues on demand).  Every phase both print
# (Q2Q, Q2G, G2I, Q2M, I2D, M2D, D2C, Q2C), per device and for all of them,
# has the same N, MIN, AVG and MAX.
# parallel-safe: reads files it writes itself; records nothing
. "$(dirname "$0")/../e2e-lib.sh"

for t in btt blkparse; do
	command -v $t >/dev/null ||
		{ skip bio-btt-requeue "$t (Debian package blktrace) is not installed"; exit 0; }
done

"$WORKLOADS/blkgen" "$TMP/g" 140 >"$TMP/gen" || { fail "blkgen" "$(cat "$TMP/gen")"; exit 0; }
(cd "$TMP" && blkparse -q -i g -d g.bin -O >/dev/null 2>&1 && btt -A -i g.bin -o btt >/dev/null 2>&1)
[ -s "$TMP/btt.avg" ] || { fail "btt" "btt wrote no btt.avg from blkparse's dump"; exit 0; }
"$EMBER" bio -i "$TMP/g" >"$TMP/ember" 2>"$TMP/err"
check "ember bio reads the capture ($(cat "$TMP/gen"))" \
	eval 'test -s "$TMP/ember" -a ! -s "$TMP/err" && grep -q " 100 requeues" "$TMP/ember"'

# Both tables as lines "DEVICE PHASE N MIN AVG MAX" (DEVICE "all" for the
# whole), btt's from its Per Device and All Devices sections; a row left
# out counts N 0, a phase btt has no table of (M2D per device) is skipped.
python3 - "$TMP/btt.avg" "$TMP/ember" "$TMP/cmp" <<'PY'
import re, sys
phases = ["Q2Q", "Q2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C"]
def btt(path):
    rows, shown, sec, ph = {}, set(), None, None
    for line in open(path):
        if line.startswith("====="):
            sec = line.strip("= \n")
            continue
        f = line.split()
        if sec == "Per Device" and len(f) == 5 and f[1] == "MIN":
            ph = f[0]
            shown.add(ph)
        elif sec == "Per Device" and ph and (m := re.match(r"\(\s*(\d+),\s*(\d+)\)\s+(.*)", line)):
            mn, avg, mx, n = m.group(3).split()
            rows[(f"{m.group(1)},{m.group(2)}", ph)] = (int(n), mn, avg, mx)
        elif sec == "All Devices" and len(f) == 5 and f[0] in phases:
            rows[("all", f[0])] = (int(f[4]), f[1], f[2], f[3])
    return rows, shown
def ember(path):
    rows, dev = {}, None
    for line in open(path):
        f = line.split()
        if line.startswith("== all devices"):
            dev = "all"
        elif line.startswith("== "):
            dev = f[1]
        elif dev and len(f) == 5 and f[0] in phases:
            rows[(dev, f[0])] = (int(f[4]), f[1], f[2], f[3])
    return rows
(b, shown), e = btt(sys.argv[1]), ember(sys.argv[2])
with open(sys.argv[3], "w") as out:
    for dev in sorted({d for d, _ in b} | {d for d, _ in e}):
        for ph in phases:
            if dev != "all" and ph not in shown:
                continue
            none = (0, "-", "-", "-")
            x, y = b.get((dev, ph), none), e.get((dev, ph), none)
            print(dev, ph, "same" if x == y else "differ", "btt", *x, "ember", *y, file=out)
PY
rows=$(wc -l <"$TMP/cmp")
differ=$(grep -c ' differ ' "$TMP/cmp")
devs=$(awk '{ print $1 }' "$TMP/cmp" | sort -u | tr '\n' ' ')
check "N MIN AVG MAX of every phase agree with btt on $rows rows (devices: $devs): $differ differ$(grep ' differ ' "$TMP/cmp" | head -3 | tr '\n' ';')" \
	test "$rows" = 22 -a "$differ" = 0
# I2D counts at each issue, for the I/O an insert began at: 11 in each 7
# requests by construction (the requeued ones 2 and 3 times), 220 in all;
# M2D at each issue for the merged I/Os without an insert of their own, 100.
read -r n_i2d n_m2d < <(awk '$1 == "all" && $2 == "I2D" { i = $10 } $1 == "all" && $2 == "M2D" { m = $10 } END { print i + 0, m + 0 }' "$TMP/cmp")
check "ember counts I2D at each issue: N $n_i2d (220 by construction), M2D N $n_m2d (100)" \
	test "$n_i2d" = 220 -a "$n_m2d" = 100
