"""A stand-in evaluator for CPU tests and benchmarks: same CLI, same `socratic.eval/1` JSON,
same per-scenario stderr lines, with numbers read from markers in the candidate's text.

    python -m socratic.harness.doubles.fakeeval TASK_DIR --candidate FILE --json [--scenarios SET|ID,..]

Markers (C++ comments anywhere in the candidate):
    // speedup: 1.3            every scenario's speedup (default 1.0)
    // speedup[ID]: 0.9        one scenario's speedup
    // incorrect               every scenario fails its check;  // incorrect: ID,ID  some
    // build-error             the build fails
    // ban: cutlass            a ban hit
    // bound_fraction: 0.95    every scenario's bound fraction (default 0.3)
    // sleep: 0.2              seconds per scenario (to look like work)
Use it with `SOCRATIC_EVALUATOR="python -m socratic.harness.doubles.fakeeval"`.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import re
import sys
import time
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def k(n: int) -> str:
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}m"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10}k"
    return str(n)


def with_ids(task: dict, rows: list[dict]) -> list[dict]:
    """Scenario ids from the task's `id` template (`r{rows:k}-c{cols:k}`), as the evaluator."""
    tmpl = task.get("id")
    for r in rows:
        if "id" in r:
            continue
        if tmpl:
            r["id"] = re.sub(r"\{(\w+)(?::k)?\}", lambda m: k(r[m.group(1)]) if m.group(0)
                             .endswith(":k}") else str(r[m.group(1)]), tmpl)
        else:
            r["id"] = "-".join(f"{a[0]}{b}" for a, b in r.items())
    return rows


# --rules demo: numbers from the demo kernels' content (doubles/demo_kernels/), for CPU dry runs
DEMO_RULES = [("kWarps / 2", "// incorrect"), ("rmsnorm_warp_kernel", "// speedup: 1.6"),
              ("rmsnorm_vec_kernel", "// speedup: 1.2\n// speedup[r1-c4k]: 1.02")]


def scenarios_of(task: dict, spec: str | None) -> list[dict]:
    return with_ids(task, _scenarios_of(task, spec))


def _scenarios_of(task: dict, spec: str | None) -> list[dict]:
    sets = task.get("sets") or {}
    name = spec or task.get("default_set") or next(iter(sets), None)
    if name in sets:
        s = sets[name]
        rows = [dict(x) for x in s.get("scenarios", [])] if isinstance(s, dict) else []
        grids = s.get("grid", []) if isinstance(s, dict) else s
        for g in grids if isinstance(grids, list) else [grids]:
            keys = list(g)
            for combo in itertools.product(*(v if isinstance(v, list) else [v]
                                             for v in g.values())):
                rows.append(dict(zip(keys, combo)))
        return rows
    wanted = [x for x in (spec or "").split(",") if x]
    every = [r for s in sets.values() if isinstance(s, dict) for r in s.get("scenarios", [])]
    rows = [dict(r) for r in every if r.get("id") in wanted]
    if not rows:
        raise SystemExit(f"unknown scenario set or id: {spec}")
    return rows


def marker(text: str, name: str, default: float) -> float:
    m = re.search(rf"//\s*{re.escape(name)}\s*:\s*([0-9.eE+-]+)", text)
    return float(m.group(1)) if m else default


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fakeeval")
    ap.add_argument("task_dir")
    ap.add_argument("--candidate")
    ap.add_argument("--scenarios")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rules", choices=["demo"], help="markers implied by the demo kernels")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    task_path = Path(args.task_dir) / "task.toml"
    try:
        task = tomllib.loads(task_path.read_text())
    except OSError:
        print(f"fakeeval: error: {task_path}: not found", file=sys.stderr)
        return 2
    if args.list:
        sets = {name: [r["id"] for r in scenarios_of(task, name)] for name in task.get("sets", {})}
        print(json.dumps({"task": task.get("name"), "default_set": task.get("default_set"),
                          "sets": sets}))
        return 0
    cand = Path(args.candidate or Path(args.task_dir) / task["baseline"])
    try:
        text = cand.read_text()
    except OSError:
        print(f"fakeeval: error: {cand}: not found", file=sys.stderr)
        return 2
    if args.rules == "demo":
        for needle, markers in DEMO_RULES:
            if needle in text:
                text += "\n" + markers + "\n"
                break
    rows_in = scenarios_of(task, args.scenarios)
    sha = hashlib.sha256(text.encode()).hexdigest()
    build_ok = "// build-error" not in text
    ban = re.search(r"//\s*ban:\s*(\w+)", text)
    bad = re.search(r"//\s*incorrect(?::\s*([\w,.-]+))?", text)
    bad_ids = set(bad.group(1).split(",")) if bad and bad.group(1) else None
    speed = marker(text, "speedup", 1.0)
    bound = marker(text, "bound_fraction", 0.3)
    delay = marker(text, "sleep", 0.0)
    doc = {
        "schema": "socratic.eval/1", "task": task.get("name"), "set": args.scenarios
        or task.get("default_set"),
        "candidate": {"path": str(cand), "sha256": sha},
        "gpu": {"name": "Fake GPU", "cc": "9.0", "sms": 132, "driver": 13000},
        "build": {"ok": build_ok, "cached": False, "seconds": 0.01, "command": "fake",
                  "log": "" if build_ok else "candidate.cu(3): error: expected a ';'",
                  "resources": [{"kernel": task.get("entry", "k"), "registers": 32,
                                 "spill_stores": 0, "spill_loads": 0, "shared_bytes": 0,
                                 "stack_bytes": 0}] if build_ok else []},
        "bans": {"ok": ban is None, "hits": [{"library": ban.group(1), "layer": "source",
                                              "where": "candidate.cu:1", "detail": "fake"}]
                 if ban else []},
        "scenarios": [], "summary": {}, "exit_code": 0,
    }
    rows = []
    if build_ok and ban is None:
        for i, sc in enumerate(rows_in):
            sid = str(sc.get("id"))
            if delay:
                time.sleep(delay)
            sp = marker(text, f"speedup[{sid}]", speed)
            correct = not (bad and (bad_ids is None or sid in bad_ids))
            base_ms = 0.05
            row = {"id": sid, "params": {k: v for k, v in sc.items() if k != "id"},
                   "correct": correct, "failures": [] if correct else
                   ["y: max error 0.5 > tol 0.0038 at unit 3"],
                   "err": 0.0019 if correct else 0.5, "err_baseline": 0.0019,
                   "err_ratio": 1.0 if correct else 263.0, "errors": {},
                   "baseline_ms": base_ms, "candidate_ms": round(base_ms / sp, 6),
                   "speedup": sp, "spread": 0.004, "pairs": 60, "tflops": 1.0, "tbps": 2.0,
                   "bound_ms": base_ms * bound, "bound_fraction": min(bound * sp, 2.0),
                   "below_bound": bound * sp > 1.0, "comparisons": {}, "error": None}
            rows.append(row)
            print(json.dumps({"event": "scenario", "index": i + 1, "total": len(rows_in), **row}),
                  file=sys.stderr, flush=True)
    doc["scenarios"] = rows
    n_ok = sum(r["correct"] for r in rows)
    sps = [r["speedup"] for r in rows]
    doc["summary"] = {
        "all_correct": bool(rows) and n_ok == len(rows) and build_ok and ban is None,
        "n": len(rows), "n_correct": n_ok,
        "geomean_speedup": round(math.exp(sum(math.log(s) for s in sps) / len(sps)), 6)
        if sps else None,
        "min_speedup": min(sps) if sps else None,
        "worst_scenario": min(rows, key=lambda r: r["speedup"])["id"] if rows else None,
        "geomean_vs": {},
    }
    doc["exit_code"] = 0 if doc["summary"]["all_correct"] else 1
    print(json.dumps(doc))
    return doc["exit_code"]


if __name__ == "__main__":
    raise SystemExit(main())
