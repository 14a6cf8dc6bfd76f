# pyloop.py - a pure-Python CPU load for Debian's own python3 (built
# without frame pointers): main -> mid -> leaf for SECS seconds, then the
# number of mid() calls made.  Used by record-online.sh, bench/online.sh
# and make demo.   usage: python3 pyloop.py SECS
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def mid(n):
    return leaf(n)


def main():
    end, calls = time.time() + float(sys.argv[1]), 0
    while time.time() < end:
        mid(2000)
        calls += 1
    print(calls)


main()
