"""e2e-buildid.py - rewrites a recording the way another machine or boot
would have written it, for tests/e2e/symbols-buildid.sh:

  kernel-id IN OUT      the HEADER_BUILD_ID entry of [kernel.kallsyms] gets
                        another build-id (this kernel's, every byte xor
                        0x5a); prints the new id in hex
  text IN OUT ADDR      the kernel map ([kernel.kallsyms]_text MMAP2)
                        says _text was at ADDR (hex): its start and pgoff
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
    elif cmd == "shift-kallsyms":
        shift_kallsyms(sys.argv[2], int(sys.argv[3], 16))
    else:
        sys.exit("unknown command " + cmd)
