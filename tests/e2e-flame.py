#!/usr/bin/env python3
"""e2e-flame.py - helpers for the flame graph end-to-end tests.

  fold [--period] [--pid] [--tid] [--annotate] < perf-script-text
        folds `perf script` output by the documented rules of
        stackcollapse-perf.pl (our own reimplementation, for comparison):
        process frame = comm (spaces -> _), optionally -PID or -PID/TID;
        frames root first; +0x offsets dropped; "[unknown]" frames named
        [file basename] when the file is known; ';' -> ':', the argument
        list from the first '(' dropped (except Go-style ".(...)."
        names and "(anonymous namespace)"), quotes removed; names with
        "->" split as inline chains (later parts _[i]); --annotate marks
        kernel (_[k]) and /tmp/perf-N.map (_[j]) frames; only the first
        event's samples; counts are samples, or periods with --period.
        One deliberate difference, shared with ember: [vdso] is user space,
        never _[k].
  svg FILE SPEC TOL   the SVG is well-formed XML and the named frames'
        widths (summed over all their frames) match SPEC (leaf_a=50,...)
        in percent of the root within TOL points
  neutral FILE COLOUR every frame of FILE is filled with COLOUR
Prints one line saying what it found; exits 1 on a mismatch.
"""
import re
import sys
import xml.etree.ElementTree as ET

HEADER = re.compile(r"^(\S.+?)\s+(\d+)/*(\d+)*\s+")
EVENT = re.compile(r":\s*(\d+)*\s+(\S+):\s*$")
FRAME = re.compile(r"^\s*(\w+)\s*(.+) \((.*)\)")
SVG = "{http://www.w3.org/2000/svg}"


def tidy(func, pname):
    func = func.replace(";", ":")
    if not re.search(r"\.\(.*\)\.", func):
        m = re.search(r"\((?!anonymous namespace\))", func)
        if m:
            func = func[:m.start()]
    func = func.replace('"', "").replace("'", "")
    if pname.startswith("java") and "/" in func and func.startswith("L"):
        func = func[1:]
    return func


def is_kernel(mod):
    if mod in ("[vdso]", "[vsyscall]"):
        return False
    return bool(re.search(r"(^\[|vmlinux$)", mod)) and "unknown" not in mod


def frame_names(raw, mod, pname, annotate):
    raw = re.sub(r"\+0x[\da-f]+$", "", raw)
    if raw.startswith("("):
        return []
    out = []
    for i, func in enumerate(raw.split("->")):
        if func == "[unknown]":
            func = "[%s]" % mod.rsplit("/", 1)[-1] if mod != "[unknown]" else "[unknown]"
        func = tidy(func, pname)
        if i > 0:
            func += "_[i]"
        elif annotate and is_kernel(mod):
            func += "_[k]"
        elif annotate and re.search(r"/tmp/perf-\d+\.map", mod):
            func += "_[j]"
        out.append(func)
    return out


def fold(args):
    period_w, with_pid = "--period" in args, "--pid" in args
    with_tid, annotate = "--tid" in args, "--annotate" in args
    counts, stack, pname, count, event_filter = {}, [], None, 1, None
    for line in sys.stdin:
        if line.startswith("#"):
            continue
        line = line.rstrip("\n")
        if not line:
            if pname is not None:
                key = ";".join([pname] + stack)
                counts[key] = counts.get(key, 0) + count
            stack, pname = [], None
            continue
        m = HEADER.match(line)
        if m:
            comm, pid, tid = m.group(1), m.group(2), m.group(3)
            if not tid:
                pid, tid = "?", pid
            e = EVENT.search(line)
            period = 1
            if e:
                if event_filter is None:
                    event_filter = e.group(2)
                elif e.group(2) != event_filter:
                    continue
                if e.group(1) and period_w:
                    period = int(e.group(1))
            count = period or 1
            pname = comm + ("-%s/%s" % (pid, tid) if with_tid else "-%s" % pid if with_pid else "")
            pname = pname.replace(" ", "_")
            continue
        m = FRAME.match(line)
        if m and pname is not None:
            stack[:0] = frame_names(m.group(2), m.group(3), pname, annotate)
    for k in sorted(counts, key=lambda s: s.encode()):
        print(k, counts[k])
    return 0


def frames(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(SVG + "g"):
        title, rect = g.find(SVG + "title"), g.find(SVG + "rect")
        if title is None or rect is None:
            continue
        name = title.text[:title.text.rfind(" (")]
        out.append((name, float(rect.get("width")), rect.get("fill"), int(g.get("n"))))
    return out


def check_svg(path, spec, tol):
    try:
        fr = frames(path)
    except ET.ParseError as e:
        print(f"not well-formed XML: {e}")
        return 1
    if not fr or fr[0][0] != "all":
        print("no root frame 'all'")
        return 1
    root_w, bad, got = fr[0][1], [], []
    for part in spec.split(","):
        name, want = part.split("=")
        w = sum(f[1] for f in fr if f[0] == name)
        pct = 100 * w / root_w
        got.append(f"{name} {pct:.1f}%")
        if abs(pct - float(want)) > tol:
            bad.append(f"{name}: {pct:.1f}% (design {want}%)")
    print(("; ".join(bad) if bad else "well-formed; " + ", ".join(got)) + f" ({len(fr)} frames)")
    return 1 if bad else 0


def check_neutral(path, colour):
    fr = frames(path)
    other = [f for f in fr if f[2] != colour]
    if not fr or other:
        print(f"{len(other)} of {len(fr)} frames not {colour}: {other[:3]}")
        return 1
    print(f"all {len(fr)} frames {colour}")
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "fold":
        return fold(sys.argv[2:])
    if len(sys.argv) == 5 and sys.argv[1] == "svg":
        return check_svg(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    if len(sys.argv) == 4 and sys.argv[1] == "neutral":
        return check_neutral(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
