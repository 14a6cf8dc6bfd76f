#!/usr/bin/env python3
"""tests/e2e-man-check.py PAGE RENDERED - text run together in a man page.

The alternating font macros (.BR, .IR, ...) join their arguments with no
space between them, so running text put on such a line renders as one
long word ("Thedefaultiscycles").  Two checks, each printing one line per
finding and exiting 1 when there is one:
- the source: two plain words in a row among an alternating macro's
  arguments;
- the rendering (`man -l`'s text): a run of letters that is no word of the
  source but two of its words joined.
"""
import re
import sys

ALTERNATING = {'.BR', '.BI', '.IR', '.IB', '.RB', '.RI'}


def macro_args(text):
    """A macro line's arguments, with roff's double quotes undone."""
    out, i = [], 0
    while i < len(text):
        if text[i] == ' ':
            i += 1
            continue
        if text[i] != '"':
            j = text.find(' ', i)
            j = len(text) if j < 0 else j
            out.append(text[i:j])
            i = j
            continue
        j, arg = i + 1, ''
        while j < len(text) and not (text[j] == '"' and text[j + 1:j + 2] != '"'):
            arg += text[j]
            j += 2 if text[j] == '"' else 1
        out.append(arg)
        i = j + 1
    return out


def unescape(text):
    text = text.replace('\\-', '-')
    return re.sub(r'\\f[BIRP]|\\&|\\\(..', ' ', text)


def source_findings(path, lines):
    for n, line in enumerate(lines, 1):
        macro, _, rest = line.partition(' ')
        if macro not in ALTERNATING:
            continue
        args = [unescape(a).strip() for a in macro_args(rest)]
        for a, b in zip(args, args[1:]):
            if re.fullmatch(r'[A-Za-z]+[,.;:]?', a) and re.match(r'[A-Za-z]{2}', b):
                yield f'{path}:{n}: "{a}" and "{b}" are joined by {macro}: {line}'
                break


def render_findings(path, source, rendered):
    words = set(re.findall(r'[A-Za-z]+', unescape(source)))
    for run in sorted(set(re.findall(r'[A-Za-z]+', rendered)) - words):
        for i in range(2, len(run) - 1):
            if run[:i] in words and run[i:] in words:
                yield f'{path}: renders "{run}" ({run[:i]} + {run[i:]})'
                break


def main():
    path, rendered_path = sys.argv[1], sys.argv[2]
    source = open(path, encoding='utf-8').read()
    rendered = open(rendered_path, encoding='utf-8').read()
    found = list(source_findings(path, source.splitlines()))
    found += render_findings(path, source, rendered)
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
