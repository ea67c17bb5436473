"""Helpers shared by the harness tests and the overhead benchmark: a tiny task directory,
the fake evaluator's command, a campaign wired to a fake API server, and evaluation
results built to the contract."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from socratic.contracts import SCHEMA, EvalResult, parse_eval
from socratic.harness.core.config import Config, TriggerConfig

FAKE_EVALUATOR = [sys.executable, "-m", "socratic_doubles.fakeeval"]
FAKE_KEY = "sk-ant-api03-FAKEKEY-0123456789abcdefghijklmnopqrstuvwxyz-SECRET"

# a complete task (the one loader checks everything); the fake evaluator builds nothing
TASK_TOML = """\
name = "tiny"
entry = "tiny_fwd"
baseline = "baseline.cu"
default_set = "bench"

[goal]
min_speedup = {goal}
against = "baseline"

[build]
command = "nvcc -O3 -shared -Xcompiler -fPIC {{src}} -o {{out}}"

[reference]
source = "reference.cu"
entry = "tiny_fwd_ref"
units = "n"

[params]
fields = [ {{ name = "y", type = "ptr", buffer = "y" }}, {{ name = "n", type = "i32", value = "n" }} ]

[[buffers]]
name = "y"
role = "output"
dtype = "f32"
shape = ["n"]
per_unit = 1

[defaults]
n = 4

[sets.smoke]
scenarios = [ {{ id = "a" }} ]

[sets.bench]
scenarios = [ {{ id = "a" }}, {{ id = "b" }}, {{ id = "c" }} ]
"""

BASELINE = """\
// tiny baseline
extern "C" int tiny_fwd(const void* p, void* stream) { return 0; }
"""


HIDDEN_TOML = """
[hidden]
count = 2
[hidden.fields]
n = { min = 1, max = 1000000 }
"""


def make_task(root: Path, goal: float = 1.2, hidden: bool = False, goal_hidden: bool = False) -> Path:
    """The tiny task; `hidden`: with a [hidden] space; `goal_hidden`: its [goal] hidden = true."""
    d = Path(root) / "tiny_task"
    d.mkdir(parents=True, exist_ok=True)
    text = TASK_TOML.format(goal=goal)
    if goal_hidden:
        text = text.replace('against = "baseline"\n', 'against = "baseline"\nhidden = true\n', 1)
    (d / "task.toml").write_text(text + (HIDDEN_TOML if hidden else ""))
    (d / "baseline.cu").write_text(BASELINE)
    (d / "reference.cu").write_text("// fp32 reference\n")
    return d


def fake_config(**kw: Any) -> Config:
    trig = kw.pop("triggers", None) or TriggerConfig()
    base: dict[str, Any] = {
        "model": "claude-sonnet-4-6", "evaluator": list(FAKE_EVALUATOR), "retry_base_s": 0.01,
        "retry_max_s": 0.05, "api_timeout_s": 20, "poll_s": 0.02, "bash_timeout_s": 20,
        "eval_timeout_s": 60}
    base.update(kw)
    return Config(triggers=trig, **base)


def candidate_source(speedup: float | None = None, *extra: str) -> str:
    lines = [BASELINE.rstrip()]
    if speedup is not None:
        lines.append(f"// speedup: {speedup}")
    lines.extend(extra)
    return "\n".join(lines) + "\n"


def eval_result(rows: list[dict[str, Any]], *, build_ok: bool = True,
                summary: dict[str, Any] | None = None) -> EvalResult:
    """A `socratic.eval/1` result around `rows` (each row: id, correct and what the test
    cares about, e.g. speedup, bound_fraction), with the fields a test does not care about
    filled in; the summary follows the rows unless `summary` overrides parts of it."""
    full = [{"params": {}, "failures": [], "error": None, "err": 0.001, "err_baseline": 0.001,
             "err_ratio": 1.0, "errors": {}, **r} for r in rows] if build_ok else []
    speeds = [r["speedup"] for r in full if r["correct"] and r.get("speedup")]
    n_ok = sum(1 for r in full if r["correct"])
    return parse_eval({
        "schema": SCHEMA, "task": "tiny", "set": "bench",
        "candidate": {"path": "candidate.cu", "sha256": "0" * 64}, "gpu": None,
        "build": {"ok": build_ok, "cached": False, "seconds": 0.0, "command": "nvcc",
                  "log": "", "resources": []},
        "bans": {"ok": True, "hits": []}, "scenarios": full,
        "summary": {"all_correct": bool(full) and n_ok == len(full), "n": len(full),
                    "n_correct": n_ok,
                    "geomean_speedup": math.prod(speeds) ** (1 / len(speeds)) if speeds else None,
                    "min_speedup": min(speeds) if speeds else None,
                    "worst_scenario": full[0]["id"] if full else None, "geomean_vs": {},
                    **(summary or {})},
        "exit_code": 0 if n_ok == len(full) and full else 1})
