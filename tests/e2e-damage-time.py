#!/usr/bin/env python3
"""tests/e2e-damage-time.py IN OUT N - copies a recording (file or stream)
with one byte of its Nth sample's time changed: byte 6, +1, which moves
the time about 3.3 days ahead (as one bad byte on a disk would).  ember's
samples begin IDENTIFIER, IP, TID, TIME, so the time is at offset 32.
Prints the changed record's byte offset."""
import struct
import sys

src, dst, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, 'rb').read())
if data[:8] != b'PERFILE2':
    sys.exit('not a perf.data file')
size = struct.unpack_from('<Q', data, 8)[0]
if size == 16:                       # a stream: records follow the header
    pos, end = 16, len(data)
else:
    pos, length = struct.unpack_from('<QQ', data, 40)
    end = pos + length
seen = 0
while pos + 8 <= end:
    kind, _, rec = struct.unpack_from('<IHH', data, pos)
    if rec < 8:
        break
    if kind == 9:                    # PERF_RECORD_SAMPLE
        seen += 1
        if seen == nth:
            data[pos + 32 + 6] = (data[pos + 32 + 6] + 1) & 0xff
            open(dst, 'wb').write(data)
            print(pos)
            sys.exit(0)
    pos += rec
sys.exit(f'only {seen} samples')
