#!/usr/bin/env python3
"""How long `socratic report` takes on a long campaign (target: under 2 s for 25,000 events).

    python3 benchmarks/report_load.py [--events 25000] [--lines 400] [--html]

Writes a synthetic session (benchmarks/make_synthetic_session.py) plus one kept candidate
per evaluation (a `--lines`-line source, each a few edits away from the one before, some
edits undoing earlier ones, so churn has real diffs to do), then times the CLI end to end
(`socratic report SESSION --json`, a fresh process: imports included) three times and
prints the median; `--html` times `--html FILE` as well.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _generator():
    spec = importlib.util.spec_from_file_location("make_synthetic_session",
                                                  HERE / "make_synthetic_session.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def write_candidates(session: Path, events: list[dict], lines: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    src = [f"  float v{i} = x[{i}] * w[{i % 17}];  // line {i}" for i in range(lines)]
    removed: list[str] = []
    out = session / "candidates"
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for e in events:
        if e["type"] != "eval.start":
            continue
        for _ in range(rng.randint(2, 12)):
            i = rng.randrange(len(src))
            if removed and rng.random() < 0.3:
                src.insert(i, removed.pop(rng.randrange(len(removed))))  # undo an old edit
            elif rng.random() < 0.5:
                removed.append(src.pop(i))
            else:
                src[i] = f"  float u{rng.getrandbits(24)} = acc * {rng.random():.3f}f;"
        (out / f"{e['candidate_sha'][:16]}.cu").write_text("\n".join(src) + "\n")
        n += 1
    return n


def timed(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t, r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=25_000)
    ap.add_argument("--lines", type=int, default=400, help="lines per candidate source")
    ap.add_argument("--html", action="store_true", help="time --html FILE too")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "long"
        gen = _generator()
        events = gen.make_events(args.events, seed=1)
        gen.write_session(session, events)
        kept = write_candidates(session, events, args.lines)
        cmd = [sys.executable, "-m", "socratic", "report", str(session), "--json"]
        runs = [timed(cmd) for _ in range(3)]
        doc = json.loads(runs[0][1])["sessions"][0]
        print(f"{args.events} events, {doc['evaluations']} evaluations, {kept} kept candidates "
              f"of {args.lines} lines, {doc['questions']} questions, churn "
              f"{doc['churn']['share']:.0%}")
        print(f"socratic report --json: median {statistics.median(t for t, _ in runs):.2f} s "
              f"(runs: {', '.join(f'{t:.2f}' for t, _ in runs)})")
        if args.html:
            page = Path(tmp) / "r.html"
            html_runs = [timed(cmd[:-1] + ["--html", str(page)])[0] for _ in range(3)]
            print(f"socratic report --html: median {statistics.median(html_runs):.2f} s "
                  f"({page.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
