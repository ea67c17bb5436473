"""A CPU model of the Hopper kernel's shared-memory arithmetic (issue 42; docs/research/hd96_192.md):
TMA boxes written in their swizzle, read back through the kernel's wgmma descriptors, every
element of every Q K^T and P V instruction checked against the element the math needs.

    python3 benchmarks/hd_layout_model.py

The model of the hardware: the swizzle is address based (the 16-byte chunk bits [4..] XOR'd
with address bits [7..]: 3 bits at 128B, 2 at 64B, as CUTLASS's Swizzle<3,4,3> / <2,4,3>),
and the descriptors follow the PTX ISA's canonical layouts: K-major rows ROWB bytes apart
with 8-row groups SBO apart; MN-major atoms of ROWB bytes along N, LBO apart, rows ROWB apart
along K, 8-row groups SBO apart. The kernel's formulas (desc_lo, make_q_desc, issue_qk,
issue_pv in tests/candidates/fa3_h200_best.cu, v100) are copied here term by term. The proven
d64/d128/d256 layouts pass it too; it checks arithmetic, not the hardware."""

from __future__ import annotations

import itertools
import sys


def swz(addr: int, rowb: int) -> int:
    mask = {128: 7, 64: 3}[rowb]
    return addr ^ (((addr >> 7) & mask) << 4)


def check(hd: int, bm: int, bn: int, stages: int, nc: int) -> int:
    pw = 64 if hd % 64 == 0 else 32
    rowb, kpp = 2 * pw, pw // 16
    sbo = 8 * rowb
    panels = hd // pw
    q_panel, kv_panel = bm * rowb, bn * rowb
    q_bytes, kv_bytes = panels * q_panel, panels * kv_panel
    base = 1024 * 37
    k_off = q_bytes
    v_off = k_off + stages * kv_bytes
    mem: dict[int, tuple[str, int, int]] = {}

    def tma(dst: int, tensor: str, col0: int, rows: int) -> None:   # box {pw, rows}
        assert dst % (8 * rowb) == 0, "a panel not aligned to its swizzle atom"
        for r in range(rows):
            for cb in range(0, rowb, 2):
                mem[swz(dst + r * rowb + cb, rowb)] = (tensor, r, col0 + cb // 2)

    for p in range(panels):
        tma(base + p * q_panel, "Q", pw * p, bm)
    for s, p in itertools.product(range(stages), range(panels)):
        tma(base + k_off + s * kv_bytes + p * kv_panel, f"K{s}", pw * p, bn)
        tma(base + v_off + s * kv_bytes + p * kv_panel, f"V{s}", pw * p, bn)

    def desc_lo(addr: int, lbo: int) -> int:
        return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16)

    def kmajor(lo: int, m: int, k: int) -> int:   # element (m, k < 16) of one instruction
        return swz(((lo & 0x3FFF) << 4) + (m % 8) * rowb + (m // 8) * sbo + 2 * k, rowb)

    def mnmajor(lo: int, k: int, n: int) -> int:   # element (k < 16, n)
        start, lbo = (lo & 0x3FFF) << 4, ((lo >> 16) & 0x3FFF) << 4
        return swz(start + 2 * (n % pw) + (n // pw) * lbo + (k % 8) * rowb + (k // 8) * sbo, rowb)

    errs = 0
    for c in range(nc):
        q_lo = desc_lo(base + c * 64 * rowb, 16)
        for kk in range(hd // 16):
            lo = q_lo + (((kk // kpp) * q_panel + (kk % kpp) * 32) >> 4)   # make_q_desc
            errs += sum(mem.get(kmajor(lo, m, k)) != ("Q", c * 64 + m, 16 * kk + k)
                        for m, k in itertools.product(range(64), range(16)))
    k_lo, v_lo = desc_lo(base + k_off, 16), desc_lo(base + v_off, kv_panel)
    for s in range(stages):
        for kk in range(hd // 16):   # issue_qk's B
            lo = k_lo + s * (kv_bytes >> 4) + (((kk // kpp) * kv_panel + (kk % kpp) * 32) >> 4)
            errs += sum(mem.get(kmajor(lo, n, k)) != (f"K{s}", n, 16 * kk + k)
                        for n, k in itertools.product(range(bn), range(16)))
        for kk in range(bn // 16):   # issue_pv's B
            lo = v_lo + s * (kv_bytes >> 4) + kk * ((16 * rowb) >> 4)
            errs += sum(mem.get(mnmajor(lo, k, n)) != (f"V{s}", 16 * kk + k, n)
                        for k, n in itertools.product(range(16), range(hd)))
    print(f"d{hd} {bm}x{bn}, {stages} stages, {nc} consumers: " + ("ok" if errs == 0 else f"{errs} MISMATCHES"))
    return errs


if __name__ == "__main__":
    shapes = [(64, 192, 128, 4, 3), (128, 128, 128, 2, 2), (256, 128, 80, 2, 2),
              (96, 128, 128, 2, 2), (192, 128, 112, 2, 2), (96, 192, 96, 2, 3)]
    sys.exit(1 if sum(check(*s) for s in shapes) else 0)
