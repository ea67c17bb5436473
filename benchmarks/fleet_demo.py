"""A live fleet on any machine (no GPU, no API key): a scripted agent behind the local fake
Messages API and the fake evaluator, run by the real `socratic fleet run` (local executor,
fake GPUs 0 and 1), so the fleet screen can be tried and captured:

    python benchmarks/fleet_demo.py /tmp/fleet-demo &      # about 3 minutes
    socratic watch /tmp/fleet-demo/fleet                     # the fleet screen

Campaigns: three `auto`, two `none`, one `human` (it waits for your question once its
stop attempts fail: press / or i on it; with none it ends `max_minutes` after 3 minutes). Each agent writes a candidate, evaluates a few
times (0.3 s per scenario, so evaluations on one fake GPU take turns) and declares done.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_EVALUATOR, FAKE_KEY, candidate_source, make_task

FLEET = """
[fleet]
executor = "local"
max_parallel = 5
gpus = ["0", "1"]

[[campaign]]
task = "{task}"
questions = "auto"
repeat = 3
max_turns = 40

[[campaign]]
task = "{task}"
questions = "none"
repeat = 2
max_turns = 40

[[campaign]]
task = "{task}"
questions = "human"
max_turns = 40
max_minutes = 3
goal_min_speedup = 1.8
"""


def agent(body: dict) -> dict:
    """Stateless: the step follows from the conversation so far (any number of campaigns
    share the server)."""
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    speed = 1.0 + 0.1 * min(turns, 6)
    step: dict = {"delay": 2.0}
    if turns < 8 and turns % 2 == 0:
        step.update(text=f"Trying a faster variant ({speed:.1f}x expected).",
                    tools=[("write_file", {"path": "candidate.cu", "content": candidate_source(
                        speed, "// sleep: 0.3")})])
    elif turns < 8:
        step.update(text="Measuring it.", tools=[("evaluate", {})])
    else:
        step.update(text="Done: every scenario meets the goal.")
    return step


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="a new folder for the task and the fleet")
    args = ap.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    task = make_task(args.root)
    spec = args.root / "fleet.toml"
    spec.write_text(FLEET.format(task=task))
    with FakeAnthropic(default=agent) as api:
        env = dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=api.url,
                   SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), ANTHROPIC_MODEL="claude-demo")
        env.pop("CUDA_VISIBLE_DEVICES", None)
        t0 = time.monotonic()
        code = subprocess.call([sys.executable, "-m", "socratic", "fleet", "run", str(spec),
                                "--session-dir", str(args.root / "fleet")], env=env)
        print(f"fleet_demo: the fleet ran {time.monotonic() - t0:.0f} s, exit {code}",
              file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
