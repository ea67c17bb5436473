"""Each copy of the timed samples against the others, from the evaluations a device call kept
(evaluator.timing.copy_profile): one line per scenario with copies > 1, the figures its
thresholds (COPY_FIRST, COPY_SPREAD) are set from.

    python3 benchmarks/judge_h200/copy_profiles.py DIR [DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(folder: Path):
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict):
            continue
        for r in (doc.get("scenarios") or []) + (doc.get("hidden") or []):
            if (r.get("copies") or 1) > 1 and r.get("copy_first") is not None:
                yield path.stem, r


def main(folders: list[str]) -> int:
    print(f"{'evaluation':52s} {'scenario':14s} copies  first  spread speedup  failed-on-copies")
    for folder in folders:
        for name, r in rows(Path(folder)):
            flagged = any("do not each do their own work" in f for f in r.get("failures", []))
            speed = r.get("speedup")
            print(f"{name[:52]:52s} {r['id'][:14]:14s} {r['copies']:6d} {r['copy_first']:+.3f} {r['copy_spread']:.3f} "
                  f"{'   -  ' if speed is None else f'{speed:6.3f}'}  {'yes' if flagged else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
