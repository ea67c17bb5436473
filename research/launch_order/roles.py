"""Each role's time per place, per row and run, from the probe's timed samples.

  python3 research/launch_order/roles.py DIR [VARIANT...]

DIR holds `samples.VARIANT.jsonl` (probe.py writes one line per timed row: per-call ms of
every pair's baseline and candidate, the baseline first in even pairs). For each run (a
variant's rows in groups of ROWS) and each row with at least MIN_COPIES copies, it prints the
second baseline's median (us a call) and three differences (us a call):
  b1-b2  the baseline first against the baseline second: what the first place costs it;
  c2-b2  the candidate against the baseline in the second place (the verdict's main reading);
  c1-b1  the same in the first place.
A control (the baseline against itself) wants every difference near 0. Research only.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROWS = 14          # RMSNorm's control: the bench set's 10 rows and 4 hidden draws
MIN_COPIES = 4     # rows of fewer copies are 40 us calls and longer: the offsets hide there


def places(base: list[float], cand: list[float]) -> tuple[float, float, float, float]:
    """(b1, b2, c1, c2): each role's median per-call time in the first and second place, us."""
    def med(x: list[float]) -> float:
        return statistics.median(x) * 1e3
    return med(base[0::2]), med(base[1::2]), med(cand[1::2]), med(cand[0::2])


def table(path: Path, variant: str) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lines = []
    for run in range(len(rows) // ROWS):
        cells = []
        for r in rows[run * ROWS:(run + 1) * ROWS]:
            if r["copies"] < MIN_COPIES:
                continue
            b1, b2, c1, c2 = places(r["base"], r["cand"])
            cells.append(f"{r['copies']}x{b2:.1f}:{b1 - b2:+.2f}/{c2 - b2:+.2f}/{c1 - b1:+.2f}")
        lines.append(f"{variant:14s} #{run + 1}  " + " ".join(cells))
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    folder = Path(argv[0])
    variants = argv[1:] or sorted(p.name[len("samples."):-len(".jsonl")] for p in folder.glob("samples.*.jsonl"))
    missing = [v for v in variants if not (folder / f"samples.{v}.jsonl").is_file()]
    if missing:
        print(f"roles.py: {folder / f'samples.{missing[0]}.jsonl'}: no such file", file=sys.stderr)
        return 2
    print("variant        run  copies x b2 (us a call): b1-b2 / c2-b2 / c1-b1 (us a call)")
    for v in variants:
        print("\n".join(table(folder / f"samples.{v}.jsonl", v)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
