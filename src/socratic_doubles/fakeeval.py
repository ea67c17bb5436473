"""A stand-in evaluator for CPU tests and benchmarks: same CLI, same `socratic.eval/1` JSON,
same per-scenario stderr lines, with numbers read from markers in the candidate's text.

    python -m socratic_doubles.fakeeval TASK_DIR --candidate FILE --json [--scenarios SET|ID,..]

Markers (C++ comments anywhere in the candidate):
    // speedup: 1.3            every scenario's speedup (default 1.0)
    // speedup[ID]: 0.9        one scenario's speedup
    // incorrect               every scenario fails its check;  // incorrect: ID,ID  some
    // build-error             the build fails
    // ban: cutlass            a ban hit
    // bound_fraction: 0.95    every scenario's bound fraction (default 0.3)
    // sleep: 0.2              seconds per scenario (to look like work)
    // incorrect-hidden        the hidden scenarios fail (drawn from the task's [hidden] space,
                               new ones every run, as the real evaluator draws them)
    // speedup-hidden: 0.8     every drawn scenario's speedup (hidden ones, and a space
                               evaluation's: `--space N [--seed S]`, with its coverage)
    // vs-fa3: 1.1             every correct row's speedup against a comparison (here fa3)
    // slow[head_dim == 192]: 0.4   the speedups (baseline's and comparisons') of the
                               scenarios where the expression holds, times 0.4
The scenarios run inside a GPU turn (socratic.gpulock, keyed by CUDA_VISIBLE_DEVICES) as the
real evaluator's GPU part does: fake evaluations sharing a "GPU" take turns too.
Use it with `SOCRATIC_EVALUATOR="python -m socratic_doubles.fakeeval"`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from socratic.contracts import (
    SCHEMA,
    BanHit,
    Bans,
    Build,
    Candidate,
    Comparison,
    EvalResult,
    GpuInfo,
    HiddenSummary,
    KernelResources,
    ScenarioResult,
    Summary,
)
from socratic.coverage import build as build_coverage
from socratic.errors import InputError
from socratic.expr import ExprError, evaluate
from socratic.gpulock import gpu_turn, visible_gpu_key
from socratic.taskfile import Scenario, Task, load_task, parse_space

# --rules demo: numbers from the demo kernels' content (doubles/demo_kernels/), for CPU dry runs
DEMO_RULES = [("kWarps / 2", "// incorrect"), ("rmsnorm_warp_kernel", "// speedup: 1.6"),
              ("rmsnorm_vec_kernel", "// speedup: 1.2\n// speedup[r1-c4k]: 1.02")]


def marker(text: str, name: str, default: float) -> float:
    m = re.search(rf"//\s*{re.escape(name)}\s*:\s*([0-9.eE+-]+)", text)
    return float(m.group(1)) if m else default


def slow_factor(text: str, values: dict) -> float:
    """The product of the `// slow[EXPR]: F` markers whose expression holds on `values`."""
    factor = 1.0
    for m in re.finditer(r"//\s*slow\[([^\]]+)\]\s*:\s*([0-9.eE+-]+)", text):
        try:
            if evaluate(m.group(1), values):
                factor *= float(m.group(2))
        except (ExprError, TypeError, ValueError, ZeroDivisionError):
            pass
    return factor


def _geomean_vs(rows: list[ScenarioResult]) -> dict[str, float]:
    out = {}
    for name in sorted({n for r in rows for n in (r.comparisons or {})}):
        vals = [c.speedup for r in rows if r.correct and (c := (r.comparisons or {}).get(name))]
        if vals:
            out[name] = round(math.exp(sum(math.log(v) for v in vals) / len(vals)), 6)
    return out


def _say_wait(gpu: str, holder) -> None:
    """The real evaluator's stderr line for an evaluation that waits for its GPU turn."""
    print(json.dumps({"event": "gpu_wait", "gpu": gpu,
                      "holder": holder.describe() if holder else "another evaluation"}),
          file=sys.stderr, flush=True)


def fake_libraries(task: Any) -> dict[str, str]:
    """The task's "built" baseline and reference: files in the build cache (SOCRATIC_CACHE)
    under the sources' hash, made when missing, as the real evaluator's cache holds them
    (a test poisons one to stand for a slowed baseline under the baseline's key)."""
    cache = Path(os.environ.get("SOCRATIC_CACHE") or Path.home() / ".cache" / "socratic")
    out = {}
    for what, src in (("baseline", task.baseline), ("reference", task.reference.source)):
        key = hashlib.sha256(Path(src).read_bytes()).hexdigest()[:24]
        lib = cache / "fake-builds" / key / f"{what}.so"
        if not lib.is_file():
            lib.parent.mkdir(parents=True, exist_ok=True)
            lib.write_bytes(b"fake library of " + key.encode())
        out[what] = hashlib.sha256(lib.read_bytes()).hexdigest()
    return out


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fakeeval")
    ap.add_argument("task_dir")
    ap.add_argument("--candidate")
    ap.add_argument("--scenarios")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rules", choices=["demo"], help="markers implied by the demo kernels")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--space", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--check-only", action="store_true")
    return ap


def _scenario_row(sc: Scenario, text: str, speed: float, hidden_speed: float, bound: float,
                  bad: re.Match[str] | None, bad_ids: set[str] | None, hidden_bad: bool) -> ScenarioResult:
    """One scenario's row as the markers in the candidate's text make it."""
    sp = marker(text, f"speedup[{sc.id}]", hidden_speed if sc.hidden else speed)
    factor = slow_factor(text, sc.values)
    sp *= factor
    comps = {m.group(1): Comparison(ms=0.05, speedup=round(float(m.group(2)) * factor, 6))
             for m in re.finditer(r"//\s*vs-(\w+)\s*:\s*([0-9.eE+-]+)", text)}
    correct = not (bad and (bad_ids is None or sc.id in bad_ids)) and not (sc.hidden and hidden_bad)
    base_ms = 0.05
    return ScenarioResult(
        id=sc.id, params={k: v for k, v in sc.values.items() if isinstance(v, (int, float, str))},
        correct=correct, failures=[] if correct else ["y: max error 0.5 > tol 0.0038 at unit 3"],
        error=None, err=0.0019 if correct else 0.5, err_baseline=0.0019,
        err_ratio=1.0 if correct else 263.0, errors={},
        baseline_ms=base_ms, candidate_ms=round(base_ms / sp, 6), speedup=sp, spread=0.004,
        pairs=60, tflops=1.0, tbps=2.0, bound_ms=base_ms * bound,
        bound_fraction=min(bound * sp, 2.0), below_bound=bound * sp > 1.0,
        comparisons=comps if correct else {})


def _result(task: Task, label: str, cand: Path, sha: str, build_ok: bool, ban: re.Match[str] | None,
            rows: list[ScenarioResult], hidden: list[Scenario], hidden_rows: list[ScenarioResult]) -> EvalResult:
    """The result document of the visible `rows` (and the hidden ones, if any)."""
    n_ok = sum(r.correct for r in rows)
    sps = [r.speedup for r in rows if r.speedup]
    all_correct = bool(rows) and n_ok == len(rows) and build_ok and ban is None
    result = EvalResult(
        schema=SCHEMA, task=task.name, set=label,
        candidate=Candidate(path=str(cand), sha256=sha),
        gpu=GpuInfo(name="Fake GPU", cc="9.0", sms=132, driver=13000),
        build=Build(ok=build_ok, cached=False, seconds=0.01, command="fake",
                    log="" if build_ok else "candidate.cu(3): error: expected a ';'",
                    resources=[KernelResources(kernel=task.entry, registers=32, spill_stores=0,
                                               spill_loads=0, shared_bytes=0, stack_bytes=0)]
                    if build_ok else [], libraries=fake_libraries(task)),
        bans=Bans(ok=ban is None, hits=[BanHit(library=ban.group(1), layer="source",
                                               where="candidate.cu:1", detail="fake")] if ban else []),
        scenarios=rows,
        summary=Summary(
            all_correct=all_correct, n=len(rows), n_correct=n_ok,
            geomean_speedup=round(math.exp(sum(math.log(s) for s in sps) / len(sps)), 6) if sps else None,
            min_speedup=min(sps) if sps else None,
            worst_scenario=min(rows, key=lambda r: r.speedup or 0.0).id if rows else None,
            geomean_vs=_geomean_vs(rows)),
        exit_code=0 if all_correct and all(r.correct for r in hidden_rows) else 1,
    )
    if hidden_rows:
        result.hidden = hidden_rows
        result.hidden_summary = HiddenSummary(n=len(hidden), n_correct=sum(r.correct for r in hidden_rows),
                                              failing=[r.id for r in hidden_rows if not r.correct])
    return result


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.space is not None:   # as `socratic eval --space N [--seed S]` selects
        args.scenarios = f"space:{args.space}" + (f"@{args.seed}" if args.seed is not None else "")
    try:  # the task as the evaluator reads it, with the evaluator's errors
        task = load_task(args.task_dir)
        if args.list:
            print(json.dumps({"task": task.name, "default_set": task.default_set,
                              "sets": {n: [s.id for s in scs] for n, scs in task.sets.items()}}))
            return 0
        label, scenarios = task.select(args.scenarios)
    except InputError as exc:
        print(f"socratic: error: {exc}", file=sys.stderr)
        return 2
    cand = Path(args.candidate) if args.candidate else task.baseline
    try:
        text = cand.read_text()
    except OSError:
        print(f"socratic: error: {cand}: no such candidate file", file=sys.stderr)
        return 2
    if args.rules == "demo":
        for needle, markers in DEMO_RULES:
            if needle in text:
                text += "\n" + markers + "\n"
                break
    sha = hashlib.sha256(cand.read_bytes()).hexdigest()   # of the file, as the evaluator's
    build_ok = "// build-error" not in text
    ban = re.search(r"//\s*ban:\s*(\w+)", text)
    bad = re.search(r"//\s*incorrect(?!-)(?::\s*([\w,.-]+))?", text)
    bad_ids = set(bad.group(1).split(",")) if bad and bad.group(1) else None
    speed = marker(text, "speedup", 1.0)
    bound = marker(text, "bound_fraction", 0.3)
    delay = marker(text, "sleep", 0.0)
    rows: list[ScenarioResult] = []
    space = parse_space(label)
    hidden_speed = marker(text, "speedup-hidden", speed)
    n_hidden = args.hidden if args.hidden is not None else \
        (task.hidden.count if task.hidden and space is None else 0)
    hidden = task.draw_hidden(n_hidden, secrets.randbits(62))
    hidden_bad = "// incorrect-hidden" in text
    if build_ok and ban is None and not args.check_only:
        with gpu_turn(visible_gpu_key(), f"fakeeval {task.name}", _say_wait) as turn:
            for i, sc in enumerate(scenarios + hidden):
                if delay:
                    time.sleep(delay)
                row = _scenario_row(sc, text, speed, hidden_speed, bound, bad, bad_ids, hidden_bad)
                rows.append(row)
                print(json.dumps({"event": "scenario", "index": i + 1, "total": len(scenarios) + len(hidden),
                                  **row.to_dict()}), file=sys.stderr, flush=True)
    hidden_ids = {h.id for h in hidden}
    hidden_rows = [r for r in rows if r.id in hidden_ids]
    rows = [r for r in rows if r.id not in hidden_ids]
    result = _result(task, label, cand, sha, build_ok, ban, rows, hidden, hidden_rows)
    if args.check_only:
        result.exit_code = 0 if build_ok and ban is None else 1
    if build_ok and ban is None and not args.check_only:
        result.gpu_lock, result.gpu_wait_s = turn.key, round(turn.wait_s, 3)
    if space is not None and space.seed is not None and rows:
        result.coverage = build_coverage(task, rows, space.seed)
    result.check()
    print(json.dumps(result.to_dict()))
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
