"""e2e-buildid.py - rewrites a recording the way another machine or boot
would have written it, for tests/e2e/symbols-buildid.sh:

  kernel-id IN OUT      the HEADER_BUILD_ID entry of [kernel.kallsyms] gets
                        another build-id (this kernel's, every byte xor
                        0x5a); prints the new id in hex
  text IN OUT ADDR      the kernel map ([kernel.kallsyms]_text MMAP2)
                        says _text was at ADDR (hex): its start and pgoff
  kaslr IN OUT D        the recording another boot would have made, its
                        kernel D (hex) higher: kernel text addresses in the
                        samples (ip and callchain) and the kernel map moved
  shift-kallsyms OUT D  this kernel's /proc/kallsyms with every address
                        moved by D (hex): the kallsyms of another boot
"""
import struct
import sys


def kernel_id():
    notes = open("/sys/kernel/notes", "rb").read()
    off = 0
    while off + 12 <= len(notes):
        namesz, descsz, typ = struct.unpack_from("<III", notes, off)
        name_at = off + 12
        desc_at = name_at + ((namesz + 3) & ~3)
        if typ == 3 and notes[name_at:name_at + 4] == b"GNU\0":
            return notes[desc_at:desc_at + descsz]
        off = desc_at + ((descsz + 3) & ~3)
    sys.exit("no build-id in /sys/kernel/notes")


def find_once(data, key, what):
    at = data.find(key)
    if at < 0 or data.find(key, at + 1) >= 0:
        sys.exit("%s: found %s times" % (what, "no" if at < 0 else "several"))
    return at


def rewrite_kernel_id(src, dst):
    kid = kernel_id()
    data = bytearray(open(src, "rb").read())
    # build_id_event: header, pid, id[20] size reserved[3], filename
    at = find_once(data, kid + bytes([len(kid), 0, 0, 0]) + b"[kernel.kallsyms]\0",
                   "this kernel's build-id entry")
    other = bytes(b ^ 0x5A for b in kid)
    data[at:at + len(kid)] = other
    open(dst, "wb").write(data)
    print(other.hex())


def rewrite_text(src, dst, addr):
    data = bytearray(open(src, "rb").read())
    name = find_once(data, b"[kernel.kallsyms]_text\0", "the kernel map")
    rec = name - 72   # MMAP2: header, pid, tid, addr, len, pgoff, ids, prot, flags
    typ, = struct.unpack_from("<I", data, rec)
    if typ != 10:
        sys.exit("the kernel map is not an MMAP2 record")
    struct.pack_into("<Q", data, rec + 16, addr)   # start
    struct.pack_into("<Q", data, rec + 32, addr)   # pgoff: _text
    open(dst, "wb").write(data)


# perf_event_attr.sample_type bits, in the order a sample lays them out
# (read values and anything after the callchain are not needed here).
S_IDENTIFIER, S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN = 1 << 16, 1, 2, 4, 8, 16, 32
S_ID, S_CPU, S_PERIOD, S_STREAM_ID = 64, 128, 256, 512
KERNEL_IMAGE = (0xFFFFFFFF80000000, 0xFFFFFFFFC0000000)   # not modules, not markers


def sample_type(data):
    attr_size, attrs_off, attrs_size = struct.unpack_from("<QQQ", data, 16)
    types = {struct.unpack_from("<Q", data, attrs_off + i + 24)[0]
             for i in range(0, attrs_size, attr_size)}
    if len(types) != 1:
        sys.exit("kaslr: the recording's events sample differently")
    st = types.pop()
    if st & S_READ or not st & S_CALLCHAIN:
        sys.exit("kaslr: wants samples with callchains and no read values")
    return st


def shift_u64(data, at, delta):
    v, = struct.unpack_from("<Q", data, at)
    if KERNEL_IMAGE[0] <= v < KERNEL_IMAGE[1]:
        struct.pack_into("<Q", data, at, v + delta)


def shift_sample(data, at, st, delta):
    at += 8                                   # the record header
    at += 8 if st & S_IDENTIFIER else 0
    if st & S_IP:
        shift_u64(data, at, delta)
        at += 8
    for bit in (S_TID, S_TIME, S_ADDR, S_ID, S_STREAM_ID, S_CPU, S_PERIOD):
        at += 8 if st & bit else 0
    nr, = struct.unpack_from("<Q", data, at)
    for i in range(nr):
        shift_u64(data, at + 8 + 8 * i, delta)


def kaslr(src, dst, delta):
    data = bytearray(open(src, "rb").read())
    st = sample_type(data)
    data_off, data_size = struct.unpack_from("<QQ", data, 40)
    at, samples = data_off, 0
    while at + 8 <= data_off + data_size:
        typ, _, size = struct.unpack_from("<IHH", data, at)
        if size < 8:
            sys.exit("kaslr: a record of size %d at %d" % (size, at))
        if typ == 9:
            shift_sample(data, at, st, delta)
            samples += 1
        at += size
    open(dst, "wb").write(data)
    name = find_once(data, b"[kernel.kallsyms]_text\0", "the kernel map")
    text, = struct.unpack_from("<Q", data, name - 40)
    rewrite_text(dst, dst, text + delta)
    print(samples)


def shift_kallsyms(dst, delta):
    with open(dst, "w") as out:
        for line in open("/proc/kallsyms"):
            addr, rest = line.split(" ", 1)
            out.write("%016x %s" % ((int(addr, 16) + delta) & (2**64 - 1), rest))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "kernel-id":
        rewrite_kernel_id(sys.argv[2], sys.argv[3])
    elif cmd == "text":
        rewrite_text(sys.argv[2], sys.argv[3], int(sys.argv[4], 16))
    elif cmd == "kaslr":
        kaslr(sys.argv[2], sys.argv[3], int(sys.argv[4], 16))
    elif cmd == "shift-kallsyms":
        shift_kallsyms(sys.argv[2], int(sys.argv[3], 16))
    else:
        sys.exit("unknown command " + cmd)
