"""Per-candidate tables from a folder of `socratic eval --json` results.

    python3 summary.py DIR                 every result: summary line, then each scenario
    python3 summary.py DIR v6 v7 ...       bench results side by side: FA3 ratio and TFLOP/s
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

NAMES = ("fa3", "cudnn", "fa2")


def ratio(row: dict, name: str) -> float:
    return ((row.get("comparisons") or {}).get(name) or {}).get("speedup") or 0.0


def listing(folder: Path) -> None:
    for f in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            print(f"{f.name}: unreadable ({exc})")
            continue
        s = doc.get("summary", {})
        vs = {k: round(v, 3) for k, v in (s.get("geomean_vs") or {}).items()}
        print(f"== {f.name}: correct {s.get('n_correct')}/{s.get('n')} geomean vs baseline "
              f"{s.get('geomean_speedup') or 0:.3f} vs {vs} build={doc.get('build', {}).get('ok')}")
        for r in doc.get("scenarios", []):
            why = "" if r["correct"] else "  FAIL " + "; ".join(r.get("failures") or [])[:120]
            print(f"  {r['id']:34} {r.get('candidate_ms') or 0:8.4f} ms x{r.get('speedup') or 0:5.2f} "
                  + " ".join(f"{n}:{ratio(r, n):5.3f}" for n in NAMES)
                  + f" {r.get('tflops') or 0:5.0f} TF/s{why}")


def side_by_side(folder: Path, names: list[str]) -> None:
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    for name in names:
        doc = json.loads((folder / f"{name}.bench.json").read_text())
        for r in doc["scenarios"]:
            rows.setdefault(r["id"], {})[name] = (ratio(r, "fa3"), r.get("tflops") or 0.0)
    print(f"{'scenario':34}" + "".join(f"{n:>14}" for n in names) + "   (xFA3 TF/s)")
    for sid, by in rows.items():
        print(f"{sid:34}" + "".join(f"{by.get(n, (0.0, 0.0))[0]:8.3f} {by.get(n, (0.0, 0.0))[1]:4.0f}" for n in names))
    geo = []
    for n in names:
        vals = [by[n][0] for by in rows.values() if by.get(n, (0.0, 0.0))[0] > 0]
        geo.append(math.exp(sum(map(math.log, vals)) / len(vals)) if vals else 0.0)
    print(f"{'geomean vs fa3':34}" + "".join(f"{g:8.3f}     " for g in geo))


if __name__ == "__main__":
    if len(sys.argv) > 2:
        side_by_side(Path(sys.argv[1]), sys.argv[2:])
    else:
        listing(Path(sys.argv[1]))
