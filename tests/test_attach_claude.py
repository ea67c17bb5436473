"""End to end with the real Claude Code: `socratic attach --agent claude`, then `claude -p`
in the workspace against socratic's scripted fake Messages API and the fake evaluator.
Its stops are refused with scenario numbers until the candidate meets the goal, a
question sent with `socratic inject` reaches the model through additionalContext, the goal
is met, and the session folds in the TUI's reducer.

Needs Claude Code (`npm install @anthropic-ai/claude-code@2.1.328`; .ci/run installs it):
found as $SOCRATIC_CLAUDE, or `claude` on PATH; skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_EVALUATOR

CLAUDE = shutil.which(os.environ.get("SOCRATIC_CLAUDE") or "claude")
pytestmark = pytest.mark.skipif(
    CLAUDE is None, reason="Claude Code not installed: `npm install "
    "@anthropic-ai/claude-code@2.1.328` and put its bin on PATH or in $SOCRATIC_CLAUDE")

QUESTION = "Which scenario is furthest from the goal, and why?"


def socratic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def request_text(body: dict) -> str:
    return json.dumps(body.get("messages") or [], ensure_ascii=False)


def test_claude_code_attached_campaign(tmp_path):
    sess = tmp_path / "sess"
    env = dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), HOME=str(tmp_path))
    r = socratic("attach", "rmsnorm", "--agent", "claude", "--goal-min-speedup", "1.3",
                 "--session-dir", str(sess), "--wait-minutes", "1", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "claude --permission-mode bypassPermissions" in r.stderr
    launch = json.loads((sess / "config.json").read_text())["attach"]["launch_prompt"]

    def inject_then_edit(body):
        q = socratic("inject", str(sess), "--text", QUESTION, env=env, cwd=tmp_path)
        assert q.returncode == 0, q.stderr
        return {"text": "Trying a faster version.", "tools": [(
            "Bash", {"command": "echo '// speedup: 1.35' >> candidate.cu",
                     "description": "faster"})]}

    script = [
        {"text": "Baseline first.", "tools": [("Bash", {"command": "./evaluate",
                                                         "description": "evaluate"})]},
        {"text": "It already runs at the memory bound: I am done."},
        inject_then_edit,
        {"text": "r1-c4k is furthest: I checked the table. Done."},
    ]
    with FakeAnthropic(script, default={"text": "(script ran out)"}) as api:
        cenv = dict(env, ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-test-attach-1234",
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")
        run = subprocess.run([CLAUDE, "-p", launch, "--output-format", "stream-json",
                              "--verbose", "--permission-mode", "bypassPermissions"],
                             cwd=sess / "workspace", env=cenv, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        requests = list(api.requests)
    events = read_jsonl(sess / "events.jsonl")[0]
    types = [e["type"] for e in events]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "campaign.start" and events[0]["agent"] == "claude"
    # the refused stop: its reason names failing scenarios with numbers, and reached the model
    hooks = [e for e in events if e["type"] == "stophook"]
    assert [h["met"] for h in hooks] == [False, True]
    assert hooks[0]["reused"] is True          # the agent's own ./evaluate, by source hash
    assert any(f["scenario"] == "r1-c4k" and f["speedup"] == 1.0 for f in hooks[0]["failing"])
    after_refusal = request_text(requests[2])
    assert "r1-c4k: correct, speedup 1.000x vs baseline (goal >= 1.3x)" in after_refusal
    # the injected question: logged once, delivered at the next tool result's safe point
    qs = [e for e in events if e["type"] == "question"]
    assert [(q["text"], q["source"]) for q in qs] == [(QUESTION, "human")]   # launch prompt: not a question
    assert QUESTION in request_text(requests[3]) and QUESTION not in request_text(requests[2])
    assert "additional context" in request_text(requests[3]).lower()
    # the agent's words and tools, evaluations, the end
    texts = [e["text"] for e in events if e["type"] == "agent.text"]
    assert "Baseline first." in texts and any("Done." in t for t in texts)
    # the agent's words before its ./evaluate come before that evaluation in the log
    order = [e["type"] if e["type"] != "agent.text" else e["text"] for e in events]
    assert order.index("Baseline first.") < order.index("eval.start")
    calls = [e for e in events if e["type"] == "tool.call"]
    assert [c["input"]["command"] for c in calls] == [
        "./evaluate", "echo '// speedup: 1.35' >> candidate.cu"]
    assert [e["source"] for e in events if e["type"] == "eval.end"] == ["agent", "stophook"]
    assert "trigger" in types and "usage" in types
    assert events[-1]["type"] == "campaign.end" and events[-1]["reason"] == "goal_met"
    # no key in the session
    for f in sess.rglob("*"):
        if f.is_file():
            assert b"sk-test-attach-1234" not in f.read_bytes(), f
    # replayable: the TUI's reducer folds it
    from socratic.tui.state import fold

    state = fold(events)
    assert state.status == "ended" and state.end_reason == "goal_met"
    assert state.tool_calls == 2 and len(state.evals) == 2
    assert [b.ok for b in state.blocks if b.kind == "stophook"] == [False, True]
    assert [b.kind for b in state.blocks].count("question") == 1
