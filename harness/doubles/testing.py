"""Helpers shared by the harness tests and the overhead benchmark: a tiny task directory,
the fake evaluator's command, and a campaign wired to a fake API server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from socratic.harness.config import Config, TriggerConfig

FAKE_EVALUATOR = [sys.executable, "-m", "socratic.harness.doubles.fakeeval"]
FAKE_KEY = "sk-ant-api03-FAKEKEY-0123456789abcdefghijklmnopqrstuvwxyz-SECRET"

TASK_TOML = """\
name = "tiny"
entry = "tiny_fwd"
baseline = "baseline.cu"
default_set = "bench"

[goal]
min_speedup = {goal}
against = "baseline"

[sets.smoke]
scenarios = [ {{ id = "a" }} ]

[sets.bench]
scenarios = [ {{ id = "a" }}, {{ id = "b" }}, {{ id = "c" }} ]
"""

BASELINE = """\
// tiny baseline
extern "C" int tiny_fwd(const void* p, void* stream) { return 0; }
"""


def make_task(root: Path, goal: float = 1.2) -> Path:
    d = Path(root) / "tiny_task"
    d.mkdir(parents=True, exist_ok=True)
    (d / "task.toml").write_text(TASK_TOML.format(goal=goal))
    (d / "baseline.cu").write_text(BASELINE)
    (d / "reference.cu").write_text("// fp32 reference\n")
    return d


def fake_config(**kw: Any) -> Config:
    trig = kw.pop("triggers", None) or TriggerConfig()
    base = dict(model="claude-sonnet-4-6", evaluator=list(FAKE_EVALUATOR), retry_base_s=0.01,
                retry_max_s=0.05, api_timeout_s=20, poll_s=0.02, bash_timeout_s=20,
                eval_timeout_s=60)
    base.update(kw)
    return Config(triggers=trig, **base)


def candidate_source(speedup: float | None = None, *extra: str) -> str:
    lines = [BASELINE.rstrip()]
    if speedup is not None:
        lines.append(f"// speedup: {speedup}")
    lines.extend(extra)
    return "\n".join(lines) + "\n"
