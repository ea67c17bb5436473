"""Where two kernels' executed instructions differ, from ncu's SASS source pages.

    ncu_counts.py OURS.source.csv THEIRS.source.csv [--per N ...]

Each CSV is `ncu -i REP --page source --csv --print-source sass` of one launch (collected with
the SourceCounters section). An instruction's executed count says how often a warp ran it:
in a persistent attention kernel, the key loop's instructions all share one count (warps x
key tiles after the first), and a work tile's straight-line code another (warps x work tiles).
So the counts group the code by how often it runs, and the groups can be set side by side:
for each of the largest groups, its instructions and their share of all executed, and, for
each count given with --per, the opcodes that differ between the two kernels' instructions
run exactly that often. Call s10c3 (session 10) read with it that v88's extra instructions
against FA3 sit at a work tile, not in the key loop.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PREDICATE = re.compile(r"^@!?U?P\w+\s+")


@dataclass
class Profile:
    name: str
    total: float = 0.0
    samples: float = 0.0
    by_count: Counter = field(default_factory=Counter)       # count -> instructions run that often
    ops_at: dict[float, Counter] = field(default_factory=dict)  # count -> opcode -> instructions
    stalls: Counter = field(default_factory=Counter)


def _num(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def load(path: Path) -> Profile:
    try:
        rows = list(csv.reader(path.open()))
    except OSError as e:
        sys.exit(f"ncu_counts.py: {path}: {e.strerror}")
    header = next((r for r in rows if "Instructions Executed" in r and "Source" in r), None)
    if header is None:
        sys.exit(f"ncu_counts.py: {path}: no 'Source' and 'Instructions Executed' columns (a source page CSV?)")
    col = {h: i for i, h in enumerate(header)}
    stall_cols = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    prof = Profile(path.name)
    for row in rows[rows.index(header) + 1:]:
        if len(row) < len(header):
            continue
        n = _num(row[col["Instructions Executed"]])
        if n == 0:
            continue
        op = PREDICATE.sub("", row[col["Source"]].strip()).split(" ")[0]
        prof.total += n
        prof.samples += _num(row[col.get("Warp Stall Sampling (All Samples)", 0)])
        prof.by_count[n] += 1
        prof.ops_at.setdefault(n, Counter())[op] += 1
        for h in stall_cols:
            prof.stalls[h] += _num(row[col[h]])
    return prof


def report(ours: Profile, theirs: Profile, per: list[float], top: int = 8) -> list[str]:
    lines = [f"executed instructions: {ours.name} {ours.total:.4g}, {theirs.name} {theirs.total:.4g} "
             f"(ratio {ours.total / theirs.total:.4f})"]
    for p in (ours, theirs):
        lines.append(f"{p.name}: the largest groups (count x instructions = executed, share)")
        groups = sorted(p.by_count.items(), key=lambda kv: -kv[0] * kv[1])[:top]
        lines += [f"  {n:>10.0f} x {k:>5d} = {n * k:>12.0f}  {100 * n * k / p.total:5.1f}%" for n, k in groups]
    for n in per:
        a, b = ours.ops_at.get(n, Counter()), theirs.ops_at.get(n, Counter())
        lines.append(f"run {n:.0f} times: {sum(a.values())} instructions against {sum(b.values())}; opcodes that differ")
        for op in sorted(set(a) | set(b), key=lambda o: (-abs(a[o] - b[o]), o)):
            if a[op] != b[op]:
                lines.append(f"  {op:<28} {a[op]:>5d} {b[op]:>5d} {a[op] - b[op]:+5d}")
    lines.append("stall samples, share: " + ", ".join(
        f"{h[6:]} {100 * ours.stalls[h] / ours.samples:.1f}%/{100 * theirs.stalls[h] / theirs.samples:.1f}%"
        for h, _ in (ours.stalls + theirs.stalls).most_common(6)))
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ours", type=Path)
    ap.add_argument("theirs", type=Path)
    ap.add_argument("--per", type=float, nargs="*", default=[], help="executed counts to compare opcode by opcode")
    args = ap.parse_args(argv)
    print("\n".join(report(load(args.ours), load(args.theirs), args.per)))


if __name__ == "__main__":
    main()
