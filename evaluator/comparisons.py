"""Comparison implementations (e.g. FlashAttention-3, cuDNN through torch SDPA), timed in
the same evaluation on the same GPU, in a process of their own: their libraries must
never be mapped into the candidate's process, where the run-time ban check looks.

A task names them in task.toml (`[comparisons] adapter = "compare.py"`, `names = [...]`);
the adapter module defines `FACTORIES = {name: factory}`, where
`factory(values: dict, torch) -> Callable[[], object]` allocates inputs for one scenario
and returns a function that runs the implementation once on torch's current stream.
A factory raises (ImportError, RuntimeError, ...) when it cannot run that scenario.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evaluator.task import Scenario, Task


def run_comparisons(task: Task, scenarios: list[Scenario], rows: list[dict], timeout_s: float) -> dict[str, str]:
    """Time each comparison on each correct scenario; add `comparisons` to the rows.
    Returns {name: reason} for implementations that could not run at all."""
    adapter = task.dir / task.comparisons.get("adapter", "compare.py")
    names = list(task.comparisons.get("names", []))
    timed = {r["id"]: r for r in rows if r.get("candidate_ms")}
    if not adapter.is_file() or not names or not timed:
        return {}
    job = {"adapter": str(adapter.resolve()), "names": names,
           "scenarios": [{"id": s.id, "values": s.values} for s in scenarios if s.id in timed]}
    try:
        proc = subprocess.run([sys.executable, "-m", "evaluator.compare_worker"], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout_s * max(1, len(job["scenarios"])),
                              cwd=str(Path(__file__).resolve().parent.parent))
        lines = proc.stdout.splitlines()
    except subprocess.TimeoutExpired as exc:
        lines = (exc.stdout or b"").decode(errors="replace").splitlines() if isinstance(exc.stdout, bytes) else []
    unavailable: dict[str, str] = {}
    for line in lines:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("type") == "unavailable":
            unavailable[msg["name"]] = msg["reason"]
        elif msg.get("type") == "time" and msg["id"] in timed:
            row = timed[msg["id"]]
            row.setdefault("comparisons", {})[msg["name"]] = {
                "ms": msg["ms"], "speedup": msg["ms"] / row["candidate_ms"]}
    return unavailable
