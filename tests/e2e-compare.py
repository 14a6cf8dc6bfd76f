#!/usr/bin/env python3
"""e2e-compare.py - compares ember's output with perf's on the same file.

  report A B TOL      per-symbol percentages of two `report --stdio
                      --no-children --sort sym` outputs: same symbols, each
                      within TOL points
  script A B          two `script -F comm,pid,tid,cpu,time,event,ip,sym`
                      outputs: the same samples, field by field
  design FILE SPEC TOL  report percentages against a design,
                      SPEC = "leaf_a=50,leaf_b=30"
  sections A B TOL    two reports of several events (perf report
                      --no-group): the same events, each with the same
                      sample and event counts and its rows within TOL
  branches A B TOL    two reports by branch (perf report's default for a
                      file with branch stacks): the same header lines and
                      branch statistics, each source -> target row within TOL
  group A B TOL       two reports of an event group (perf report's
                      default --group view): the same header lines, each
                      row's member percentages within TOL
Prints one line saying what differs and exits 1 on a difference.
"""
import re
import sys

ROW = re.compile(r"^\s+([\d.]+)%\s+(?:[\d.]+%\s+)?\[(.)\]\s(.*?)\s*$")


def report_rows(path):
    rows = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                key = m.group(3)
                rows[key] = rows.get(key, 0.0) + float(m.group(1))
    return rows


def compare_report(a, b, tol):
    ra, rb = report_rows(a), report_rows(b)
    if not ra or not rb:
        print(f"no rows: {len(ra)} in {a}, {len(rb)} in {b}")
        return 1
    only_a = sorted(set(ra) - set(rb))
    only_b = sorted(set(rb) - set(ra))
    if only_a or only_b:
        print(f"symbols differ: only in {a}: {only_a[:5]} only in {b}: {only_b[:5]}")
        return 1
    worst = max(ra, key=lambda k: abs(ra[k] - rb[k]))
    diff = abs(ra[worst] - rb[worst])
    if diff > tol:
        print(f"{worst}: {ra[worst]:.2f}% vs {rb[worst]:.2f}% (tolerance {tol})")
        return 1
    print(f"{len(ra)} symbols agree; largest difference {diff:.2f} points ({worst})")
    return 0


# ember record -g ends a user stack the copy could not hold with the
# address UNW_CUT_IP: perf names it [unknown], ember its cut marker.
CUT_FRAMES = {
    "ffffffffffffe000 [stack copy ended]": "ffffffffffffe000 [unknown]",
    "ffffffffffffe000 [stack copy ended] ([unknown])": "ffffffffffffe000 [unknown] ([unknown])",
}


def sample_lines(path):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            line = " ".join(line.split())
            line = CUT_FRAMES.get(line, line)
            if line:
                out.append(line)
    return out


def compare_script(a, b):
    la, lb = sample_lines(a), sample_lines(b)
    if len(la) != len(lb):
        print(f"{len(la)} lines in {a}, {len(lb)} in {b}")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            print(f"line {i + 1} differs:\n  {x}\n  {y}")
            return 1
    if len(la) != len(lb) or not la:
        return 1
    print(f"{len(la)} lines agree")
    return 0


def compare_design(path, spec, tol):
    rows = report_rows(path)
    bad = 0
    for part in spec.split(","):
        name, want = part.split("=")
        got = rows.get(name, 0.0)
        if abs(got - float(want)) > tol:
            print(f"{name}: {got:.2f}% (design {want}%, tolerance {tol})")
            bad = 1
    if not bad:
        got = [f"{p.split('=')[0]} {rows.get(p.split('=')[0], 0):.1f}% (design {p.split('=')[1]}%)"
               for p in spec.split(",")]
        print("matches the design: " + ", ".join(got))
    return bad


SECTION = re.compile(r"^# Samples: (\S+)\s+of events? '(.*)'")
EVENT_COUNT = re.compile(r"^# Event count \(approx\.\): (\d+)")


def report_sections(path):
    """{event: [samples, event count, {symbol: percent}]} in file order."""
    out, cur = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            m = SECTION.match(line)
            if m:
                cur = out.setdefault(m.group(2), [m.group(1), None, {}])
                continue
            m = EVENT_COUNT.match(line)
            if m and cur:
                cur[1] = int(m.group(1))
                continue
            m = ROW.match(line)
            if m and cur:
                cur[2][m.group(3)] = cur[2].get(m.group(3), 0.0) + float(m.group(1))
    return out


def compare_sections(a, b, tol):
    sa, sb = report_sections(a), report_sections(b)
    if list(sa) != list(sb) or not sa:
        print(f"events differ: {list(sa)} in {a}, {list(sb)} in {b}")
        return 1
    for ev in sa:
        (na, ca, ra), (nb, cb, rb) = sa[ev], sb[ev]
        if (na, ca) != (nb, cb):
            print(f"{ev}: {na} samples, count {ca} vs {nb} samples, count {cb}")
            return 1
        if set(ra) != set(rb) or not ra:
            print(f"{ev}: symbols differ: {sorted(set(ra) ^ set(rb))[:5]}")
            return 1
        worst = max(ra, key=lambda k: abs(ra[k] - rb[k]))
        if abs(ra[worst] - rb[worst]) > tol:
            print(f"{ev}: {worst}: {ra[worst]:.2f}% vs {rb[worst]:.2f}% (tolerance {tol})")
            return 1
    desc = ", ".join(f"{ev} {sa[ev][0]} samples / {sa[ev][1]}" for ev in sa)
    print(f"{len(sa)} events agree: {desc}")
    return 0


GROUP_ROW = re.compile(r"^\s+((?:[\d.]+%\s+)+)\[(.)\]\s(.*?)\s*$")


def group_report(path):
    """(header lines, {symbol: [percent per column]})"""
    heads, rows = [], {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("# Samples:") or line.startswith("# Event count"):
                heads.append(line.strip())
                continue
            m = GROUP_ROW.match(line)
            if m:
                vals = [float(v) for v in re.findall(r"([\d.]+)%", m.group(1))]
                old = rows.get(m.group(3), [0.0] * len(vals))
                rows[m.group(3)] = [x + y for x, y in zip(old, vals)]
    return heads, rows


def compare_columns(a, b, tol, parse, what):
    """Reports parsed by parse into (header lines, {row: [percents]}):
    the same header lines, the same rows, each percent within tol."""
    (ha, ra), (hb, rb) = parse(a), parse(b)
    if ha != hb or not ha:
        print(f"headers differ: {ha} in {a}, {hb} in {b}")
        return 1
    if set(ra) != set(rb) or not ra:
        print(f"rows differ: only in {a}: {sorted(set(ra) - set(rb))[:3]} "
              f"only in {b}: {sorted(set(rb) - set(ra))[:3]}")
        return 1
    worst, diff = None, 0.0
    for k in ra:
        if len(ra[k]) != len(rb[k]):
            print(f"{k}: {len(ra[k])} columns vs {len(rb[k])}")
            return 1
        d = max(abs(x - y) for x, y in zip(ra[k], rb[k]))
        if worst is None or d > diff:
            worst, diff = k, d
    if diff > tol:
        print(f"{worst}: {ra[worst]} vs {rb[worst]} (tolerance {tol})")
        return 1
    print(f"{ha[0][2:]}; {len(ra)} {what} agree, largest difference {diff:.2f} points")
    return 0


BRANCH_ROW = re.compile(r"^\s+([\d.]+)%\s+(.*?)\s*$")
STAT_LINE = re.compile(r"^\s*[A-Z_0-9]+:\s+[\d.]+%$")


def branch_report(path):
    """(header and statistics lines, {row keys: [percent]})"""
    heads, rows = [], {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# Samples:") or line.startswith("# Event count") or \
                    STAT_LINE.match(line):
                heads.append(" ".join(line.split()))
                continue
            m = BRANCH_ROW.match(line)
            if m:
                key = " ".join(m.group(2).split())
                rows[key] = [rows.get(key, [0.0])[0] + float(m.group(1))]
    return heads, rows


def main():
    cmd = sys.argv[1]
    if cmd == "report":
        return compare_report(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    if cmd == "script":
        return compare_script(sys.argv[2], sys.argv[3])
    if cmd == "branches":
        return compare_columns(sys.argv[2], sys.argv[3], float(sys.argv[4]), branch_report,
                               "branch rows (and statistics lines)")
    if cmd == "group":
        return compare_columns(sys.argv[2], sys.argv[3], float(sys.argv[4]), group_report,
                               "rows")
    if cmd == "sections":
        return compare_sections(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    if cmd == "design":
        return compare_design(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    print("unknown command")
    return 2


sys.exit(main())
