"""End to end with the real Codex CLI: `socratic attach --agent codex`, then `codex exec` in
the workspace against socratic's fake Responses API (src/socratic_doubles/fakeopenai.py) and the fake
evaluator: the stop refused with scenario numbers, a question from `socratic inject`
reaching the model through additionalContext, the goal met, the session folded.

Needs Codex (`npm install @openai/codex@0.171.0`; .ci/run installs it): $SOCRATIC_CODEX,
or `codex` on PATH; skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic_doubles.fakeopenai import FakeResponses, input_text
from socratic_doubles.testing import FAKE_EVALUATOR

CODEX = shutil.which(os.environ.get("SOCRATIC_CODEX") or "codex")
pytestmark = pytest.mark.skipif(
    CODEX is None, reason="Codex CLI not installed: `npm install @openai/codex@0.171.0` and "
    "put its bin on PATH or in $SOCRATIC_CODEX")

QUESTION = "Which scenario is furthest from the goal?"
PROVIDER = """model = "gpt-test"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
"""


def socratic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_codex_attached_campaign(tmp_path):
    sess = tmp_path / "sess"
    env = dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), HOME=str(tmp_path))
    r = socratic("attach", "rmsnorm", "--agent", "codex", "--goal-min-speedup", "1.3",
                 "--session-dir", str(sess), "--wait-minutes", "1", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    launch = json.loads((sess / "config.json").read_text())["attach"]["launch_prompt"]

    def inject_then_edit(body):
        q = socratic("inject", str(sess), "--text", QUESTION, env=env, cwd=tmp_path)
        assert q.returncode == 0, q.stderr
        return {"text": "Trying a faster version.",
                "tools": [("exec_command", {"cmd": "echo '// speedup: 1.35' >> candidate.cu"})]}

    script = [
        {"text": "Baseline first.", "tools": [("exec_command", {"cmd": "./evaluate"})]},
        {"text": "It already runs at the memory bound: I am done."},
        inject_then_edit,
        {"text": "r1-c4k is furthest: I checked the table. Done."},
    ]
    home = tmp_path / "codex-home"
    home.mkdir()
    with FakeResponses(script, default={"text": "(script ran out)"}) as api:
        (home / "config.toml").write_text(PROVIDER.format(url=api.url))
        cenv = dict(env, CODEX_HOME=str(home), FAKE_OPENAI_KEY="sk-test-codex-98765")
        run = subprocess.run([CODEX, "exec", "--skip-git-repo-check", "--trust",
                              "--dangerously-bypass-hook-trust",
                              "--dangerously-bypass-approvals-and-sandbox", launch],
                             cwd=sess / "workspace", env=cenv, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=300)
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
        requests = list(api.requests)
    events = read_jsonl(sess / "events.jsonl")[0]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["agent"] == "codex"
    hooks = [e for e in events if e["type"] == "stophook"]
    assert [h["met"] for h in hooks] == [False, True]
    # Codex hands the reason on as a <hook_prompt>, its `>` escaped
    assert "r1-c4k: correct, speedup 1.000x vs baseline (goal &gt;= 1.3x)" in input_text(
        requests[2])
    qs = [(q["text"], q["source"]) for q in events if q["type"] == "question"]
    assert qs == [(QUESTION, "human")]
    assert QUESTION in input_text(requests[3]) and QUESTION not in input_text(requests[2])
    calls = [e["input"]["command"] for e in events if e["type"] == "tool.call"]
    assert calls == ["./evaluate", "echo '// speedup: 1.35' >> candidate.cu"]
    texts = [e["text"] for e in events if e["type"] == "agent.text"]
    assert texts[0] == "Baseline first." and any("Done." in t for t in texts)
    assert events[-1]["type"] == "campaign.end" and events[-1]["reason"] == "goal_met"
    for f in sess.rglob("*"):
        if f.is_file():
            assert b"sk-test-codex-98765" not in f.read_bytes(), f
    from socratic.tui.state import fold

    state = fold(events)
    assert state.status == "ended" and state.end_reason == "goal_met" and state.tool_calls == 2
