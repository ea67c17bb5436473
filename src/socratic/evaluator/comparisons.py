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

from socratic.contracts import Comparison, ContractError, ScenarioResult
from socratic.evaluator.protocol import (
    COMPARE_MESSAGES,
    CompareJob,
    ComparisonTime,
    HiddenScenario,
    Unavailable,
    parse_message,
)
from socratic.pyproc import clean_env, isolated_python, private_cwd
from socratic.taskfile import Scenario, Task


class ComparisonRun:
    """The comparison process, started before the candidate's evaluation so that its
    imports overlap with it; it touches the GPU only once `finish` sends the job."""

    def __init__(self, task: Task):
        self.task = task
        self.adapter = task.dir / task.comparisons.get("adapter", "compare.py")
        self.names = list(task.comparisons.get("names", []))
        self.proc = None
        if self.adapter.is_file() and self.names:
            # isolated (socratic.pyproc): a `statistics.py` where `socratic eval` is typed, or
            # a PYTHONPATH, must not reach the process that times the comparisons
            self.proc = subprocess.Popen(
                isolated_python("-m", "socratic.evaluator.compare_worker"), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=clean_env(), cwd=private_cwd())

    def finish(self, scenarios: list[Scenario], rows: list[ScenarioResult], timeout_s: float) -> dict[str, str]:
        """Time each implementation on each timed scenario; add `comparisons` to the rows.
        Returns {name: reason} for implementations that could not run at all."""
        if self.proc is None:
            return {}
        timed = {r.id: (r, r.candidate_ms) for r in rows if r.candidate_ms}
        job = CompareJob(adapter=str(self.adapter.resolve()), names=self.names,
                         scenarios=[HiddenScenario(id=s.id, values=s.values) for s in scenarios if s.id in timed])
        try:
            out, _ = self.proc.communicate(json.dumps(job.to_dict()),
                                           timeout=timeout_s * max(1, len(job.scenarios)))
        except subprocess.TimeoutExpired:
            self.cancel()
            out = ""
        unavailable: dict[str, str] = {}
        for line in out.splitlines():
            try:   # torch or the adapter may print lines of their own: only messages count
                msg = parse_message(json.loads(line), COMPARE_MESSAGES, "the comparison's message")
            except (json.JSONDecodeError, ContractError):
                continue
            if isinstance(msg, Unavailable):
                unavailable[msg.name] = msg.reason
            elif isinstance(msg, ComparisonTime) and msg.id in timed:
                row, cand_ms = timed[msg.id]
                row.comparisons = {**(row.comparisons or {}),
                                   msg.name: Comparison(ms=msg.ms, speedup=msg.ms / cand_ms)}
        return unavailable

    def cancel(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
