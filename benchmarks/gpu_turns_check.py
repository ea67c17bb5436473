"""GPU turns on a real GPU: evaluations that share a GPU take turns for their GPU part, and
their timings stay clean. Run on a GPU node (one GPU is enough):

    python benchmarks/gpu_turns_check.py                  # rmsnorm, bench set
    python benchmarks/gpu_turns_check.py --task flash_attn_fwd --control
    python benchmarks/gpu_turns_check.py --fleet          # two fleet campaigns (fake API)

1. Two `socratic eval TASK --json` of the baseline against itself, started together on the
   same GPU: one waits for the other's turn (gpu_wait_s > 0, waiting line on stderr) and
   every scenario's speedup of both lands within [0.99, 1.01].
2. --control: the same two with separate lock folders (no turns): how far the speedups
   stray when two evaluations time on one GPU at once (printed, not checked).
3. --fleet: `socratic fleet run` of two campaigns sharing the GPU, with a scripted agent
   behind the local fake API and the real evaluator: each campaign evaluates the baseline
   three times; every evaluation's speedups land within [0.99, 1.01], and the campaigns'
   eval.wait events show the turns. Needs the harness's Python packages (anthropic).
Exit code 0 when every check holds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAND = (0.99, 1.01)


def two_evals(task: str, scenarios: str | None, locks: list[str]) -> list[dict]:
    procs = []
    for lock in locks:
        env = dict(os.environ, SOCRATIC_GPU_LOCKS=lock)
        argv = [sys.executable, "-m", "socratic", "eval", task, "--json", "--no-compare"]
        if scenarios:
            argv += ["--scenarios", scenarios]
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
        time.sleep(0.5)
    docs = []
    for p in procs:
        out, err = p.communicate(timeout=1800)
        doc = json.loads(out)
        doc["_waits"] = [json.loads(line) for line in err.splitlines() if '"gpu_wait"' in line]
        docs.append(doc)
    return docs


def speedups(doc: dict) -> list[float]:
    return [r["speedup"] for r in doc["scenarios"] if isinstance(r.get("speedup"), float)]


def report(label: str, docs: list[dict]) -> bool:
    ok = True
    for i, doc in enumerate(docs):
        sp = speedups(doc)
        inside = all(BAND[0] <= s <= BAND[1] for s in sp) and bool(sp)
        ok &= inside and doc["summary"]["all_correct"]
        print(f"{label} eval {i + 1}: {len(sp)} scenarios, speedup {min(sp):.4f}..{max(sp):.4f}"
              f" ({'inside' if inside else 'OUTSIDE'} [{BAND[0]}, {BAND[1]}]), "
              f"gpu_wait_s {doc.get('gpu_wait_s')}, lock {doc.get('gpu_lock')}, "
              f"waiting lines {len(doc['_waits'])}")
    return ok


def fleet_check(task: str) -> bool:
    from fleetbench import fleet_toml, run_fleet, scripted_agent

    agent = scripted_agent([("evaluate", {})] * 3)   # evaluate the baseline three times, stop
    spec = fleet_toml(task, 2, max_parallel=2, options={"max_turns": 6, "goal_min_speedup": 5.0})
    with tempfile.TemporaryDirectory() as tmp:
        code, campaigns = run_fleet(spec, Path(tmp) / "fleet", agent)
        ok = code in (0, 1)
        for c in campaigns:
            for e in c.evals:
                doc = json.loads(e.result.read_text()) if e.result else {"scenarios": []}
                sp = speedups(doc)
                inside = bool(sp) and all(BAND[0] <= x <= BAND[1] for x in sp)
                ok &= inside
                span = f"{min(sp):.4f}..{max(sp):.4f}" if sp else "none"
                print(f"fleet {c.name} eval {e.n}: speedup {span} "
                      f"({'inside' if inside else 'OUTSIDE'}), waited {e.gpu_wait_s} s")
            print(f"fleet {c.name}: {c.waits} eval.wait events")
        return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="rmsnorm")
    ap.add_argument("--scenarios", help="a set or ids (default: the task's default set)")
    ap.add_argument("--control", action="store_true", help="also run without turns")
    ap.add_argument("--fleet", action="store_true", help="also two fleet campaigns")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as shared:
        docs = two_evals(args.task, args.scenarios, [shared, shared])
    ok = report("with turns", docs)
    waited = any((d.get("gpu_wait_s") or 0) > 0.5 and d["_waits"] for d in docs)
    print(f"one evaluation waited for the other's turn: {'yes' if waited else 'NO'}")
    if args.control:
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            report("no turns (control)", two_evals(args.task, args.scenarios, [a, b]))
    if args.fleet:
        ok &= fleet_check(args.task)
    print("PASS" if ok and waited else "FAIL")
    return 0 if ok and waited else 1


if __name__ == "__main__":
    raise SystemExit(main())
