"""Which kernels of two cubins have byte-identical code (.text): a stand-in for comparing
`cuobjdump -sass` where the machine has no cuobjdump (issue 42: the d64/d128/d256 kernels
before and after head dims 96/192 joined the Hopper template). Build each with

    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v K.cu -o K.cubin

then `python3 benchmarks/cubin_text_diff.py OLD.cubin NEW.cubin`. (.nv.info sections differ
whenever kernels are added or removed: they hold symbol indices.)"""

from __future__ import annotations

import struct
import sys

KINDS = (".text.", ".nv.info.", ".nv.shared.", ".nv.constant0.")


def sections(path: str) -> dict[str, bytes]:
    """An ELF64 file's sections by name (NOBITS ones empty)."""
    b = open(path, "rb").read()
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names_at = heads[shstrndx][4]
    out = {}
    for name, kind, _flags, _addr, off, size in heads:
        label = b[names_at + name:b.index(b"\0", names_at + name)].decode()
        out[label] = b"" if kind == 8 else b[off:off + size]
    return out


def main() -> int:
    old, new = sections(sys.argv[1]), sections(sys.argv[2])
    for name in sorted(set(old) | set(new)):
        if not name.startswith(KINDS):
            continue
        a, b = old.get(name), new.get(name)
        if a is None:
            state = "only-new"
        elif b is None:
            state = "only-old"
        else:
            state = "SAME" if a == b else f"DIFF ({len(a)} vs {len(b)} bytes)"
        print(f"{state:22s} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
