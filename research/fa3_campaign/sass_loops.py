"""The main loops of a Hopper attention kernel's SASS, by instruction mix.

    sass_loops.py SASS [SASS ...] [--function SUBSTRING]

SASS is `cuobjdump -sass` output (one kernel or several: --function picks those whose
mangled name holds SUBSTRING). A main loop is a backward branch whose body holds wgmma (HGMMA) and
exponentials (MUFU, 16 or more);
for each, the op counts, and the blocks inside it that a forward branch can skip (masking,
for instance), so the path a plain tile takes can be read off: the loop less those blocks.
Static counts, not a profile: they say how many instructions an iteration issues, not
where time goes. Each function's global stores are counted by width too (a 16-byte store
written as four 4-byte ones costs no loop instruction). Each loop also says how many of its
exponentials issue between the wait for
S (WARPGROUP.DEPBAR.LE gsb0, 0x1) and the wait for P V (gsb0, 0x0): the softmax work that
runs under P V. 0 means the softmax waits for P V first (v48's loops, session 4). See README.md ("What stands between v7 and FA3") for what they showed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
TARGET = re.compile(r"0x([0-9a-f]+)")
SHOWN = ["HGMMA", "MUFU", "FFMA", "FMUL", "FADD", "FMNMX", "F2FP", "FSEL", "ISETP", "IMAD",
         "SHFL", "SYNCS", "BAR", "STSM", "BRA"]


@dataclass
class Instr:
    addr: int
    op: str          # opcode without modifiers: FSEL, HGMMA, ...
    text: str
    mnemonic: str = ""   # the opcode with its modifiers, no predicate: STG.E.128, ...


def parse(text: str, function: str | None) -> list[tuple[str, list[Instr]]]:
    """(function name, instructions) for each function in cuobjdump -sass output."""
    funcs: list[tuple[str, list[Instr]]] = []
    for line in text.splitlines():
        if "Function :" in line:
            funcs.append((line.split("Function :", 1)[1].strip(), []))
            continue
        m = INSTR.match(line)
        if m and funcs:
            mnemonic = re.sub(r"^@!?U?P\w+\s+", "", m.group(2)).split()[0]   # without the predicate guard
            funcs[-1][1].append(Instr(int(m.group(1), 16), mnemonic.split(".")[0], m.group(2), mnemonic))
    return [(n, ins) for n, ins in funcs if function is None or function in n]


def branch_target(i: Instr) -> int | None:
    if i.op != "BRA":
        return None
    m = TARGET.search(i.text)
    return int(m.group(1), 16) if m else None


def wgmma_loops(ins: list[Instr]) -> list[list[Instr]]:
    """Bodies of backward branches that issue wgmma and exponentials (the softmax), innermost
    (shortest) first: the loops a key tile goes through."""
    start = {i.addr: k for k, i in enumerate(ins)}
    loops = []
    for k, i in enumerate(ins):
        t = branch_target(i)
        if t is not None and t < i.addr and t in start:
            body = ins[start[t]:k + 1]
            ops = Counter(x.op for x in body)
            if ops["HGMMA"] and ops["MUFU"] >= 16:    # a tile's softmax: 2 rows x BN/8 x 2 and more
                loops.append(body)
    return sorted(loops, key=len)


def skippable(body: list[Instr]) -> list[list[Instr]]:
    """Outermost blocks inside the loop that a forward branch in it jumps over."""
    lo, hi = body[0].addr, body[-1].addr
    spans = []
    for i in body:
        t = branch_target(i)
        if t is not None and i.addr < t <= hi and "@" in i.text:   # conditional, forward, inside
            spans.append((i.addr, t))
    outer = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    return [[x for x in body if a < x.addr < t] for a, t in sorted(set(outer)) if a >= lo]


def under_pv(body: list[Instr]) -> int:
    """Exponentials issued after the wait for S and before the wait for P V."""
    n, state = 0, 0
    for i in body:
        if i.op == "WARPGROUP" and "DEPBAR" in i.text:
            level = i.text.rstrip(" ;").rsplit(",", 1)[-1].strip()
            if level == "0x1":
                state = 1
            elif level == "0x0" and state == 1:
                return n
        elif i.op == "MUFU" and "EX2" in i.text and state == 1:
            n += 1
    return n


def stores(ins: list[Instr]) -> str:
    """A function's global stores by width: STG.E is 4 bytes, STG.E.64 8, STG.E.128 16; TMA
    stores (UTMASTG) apart. Session 11: v96's register epilogues had 4-byte stores where the
    source writes 16 (NVVM had split each uint4 into four), which no loop count showed."""
    widths: Counter = Counter()
    for i in ins:
        if i.op == "STG":
            mods = i.mnemonic.split(".")
            widths[next((int(m) // 8 for m in mods if m in ("64", "128")), 4)] += 1
        elif i.op == "UTMASTG":
            widths["tma"] += 1
    parts = [f"{w} B x{widths[w]}" for w in (16, 8, 4) if widths[w]]
    parts += [f"TMA x{widths['tma']}"] if widths["tma"] else []
    return ", ".join(parts) or "none"


def mix(instrs: list[Instr]) -> str:
    c = Counter(x.op for x in instrs)
    return " ".join(f"{op}={c[op]}" for op in SHOWN if c[op])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sass", nargs="+", type=Path)
    ap.add_argument("--function", help="only functions whose mangled name holds this")
    ap.add_argument("--loops", type=int, default=1, help="innermost loops shown per function")
    a = ap.parse_args(argv)
    for path in a.sass:
        try:
            text = path.read_text()
        except OSError as e:
            print(f"sass_loops: {path}: {e.strerror}", file=sys.stderr)
            return 2
        funcs = parse(text, a.function)
        if not funcs:
            print(f"sass_loops: {path}: no function{' matching ' + a.function if a.function else ''}"
                  " in it (is it cuobjdump -sass output?)", file=sys.stderr)
            return 2
        for name, ins in funcs:
            print(f"== {path.name}: {name[:110]}")
            print(f"  global stores: {stores(ins)}")
            for body in wgmma_loops(ins)[:a.loops]:
                print(f"  loop {body[0].addr:#x}-{body[-1].addr:#x}: {len(body)} instructions  {mix(body)}")
                ex2 = sum(1 for x in body if x.op == "MUFU" and "EX2" in x.text)
                print(f"    exponentials under P V (between the waits for S and for P V): {under_pv(body)} of {ex2}")
                blocks = skippable(body)
                for b in blocks:
                    if b:
                        print(f"    skippable {b[0].addr:#x}-{b[-1].addr:#x}: {len(b)}  {mix(b)}")
                skipped = {x.addr for b in blocks for x in b}
                plain = [x for x in body if x.addr not in skipped]
                print(f"    without the skippable blocks: {len(plain)} instructions  {mix(plain)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
