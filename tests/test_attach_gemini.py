"""End to end with the real Gemini CLI: `socratic attach --agent gemini`, then `gemini -p` in
the workspace against socratic's fake Gemini API (src/socratic_doubles/fakegemini.py) and the fake
evaluator: the stop (AfterAgent) denied with scenario numbers, a question from `socratic
inject` reaching the model through AfterTool's additionalContext, the goal met, the
session folded.

Needs Gemini CLI (`npm install @google/gemini-cli@0.61.0`; .ci/run installs it):
$SOCRATIC_GEMINI, or `gemini` on PATH; skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic_doubles.fakegemini import FakeGemini, contents_text
from socratic_doubles.testing import FAKE_EVALUATOR

GEMINI = shutil.which(os.environ.get("SOCRATIC_GEMINI") or "gemini")
pytestmark = pytest.mark.skipif(
    GEMINI is None, reason="Gemini CLI not installed: `npm install @google/gemini-cli@0.61.0` "
    "and put its bin on PATH or in $SOCRATIC_GEMINI")

QUESTION = "Which scenario is furthest from the goal?"


def socratic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_gemini_attached_campaign(tmp_path):
    sess = tmp_path / "sess"
    env = dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), HOME=str(tmp_path))
    r = socratic("attach", "rmsnorm", "--agent", "gemini", "--goal-min-speedup", "1.3",
                 "--session-dir", str(sess), "--wait-minutes", "1", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ws = sess / "workspace"
    launch = json.loads((sess / "config.json").read_text())["attach"]["launch_prompt"]
    # the user's side: API-key auth, and the workspace trusted (Gemini asks once, interactively)
    user = tmp_path / ".gemini"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    (user / "trustedFolders.json").write_text(json.dumps({str(ws.resolve()): "TRUST_FOLDER"}))

    def inject_then_edit(body):
        q = socratic("inject", str(sess), "--text", QUESTION, env=env, cwd=tmp_path)
        assert q.returncode == 0, q.stderr
        return {"text": "Trying a faster version.", "tools": [(
            "run_shell_command", {"command": "echo '// speedup: 1.35' >> candidate.cu"})]}

    script = [
        {"text": "Baseline first.", "tools": [("run_shell_command", {"command": "./evaluate"})]},
        {"text": "It already runs at the memory bound: I am done."},
        inject_then_edit,
        {"text": "r1-c4k is furthest: I checked the table. Done."},
    ]
    with FakeGemini(script, default={"text": "(script ran out)"}) as api:
        genv = dict(env, GEMINI_API_KEY="gm-test-key-24680", GOOGLE_GEMINI_BASE_URL=api.url)
        run = subprocess.run([GEMINI, "-p", launch, "--yolo", "-m", "gemini-2.5-flash"],
                             cwd=ws, env=genv, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=300)
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
        requests = list(api.requests)
    events = read_jsonl(sess / "events.jsonl")[0]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["agent"] == "gemini"
    hooks = [e for e in events if e["type"] == "stophook"]
    assert [h["met"] for h in hooks] == [False, True]
    assert "r1-c4k: correct, speedup 1.000x vs baseline (goal >= 1.3x)" in contents_text(
        requests[2])
    qs = [(q["text"], q["source"]) for q in events if q["type"] == "question"]
    assert qs == [(QUESTION, "human")]  # neither the launch prompt nor the denial's re-prompt
    assert QUESTION in contents_text(requests[3]) and QUESTION not in contents_text(requests[2])
    calls = [e["input"]["command"] for e in events if e["type"] == "tool.call"]
    assert calls == ["./evaluate", "echo '// speedup: 1.35' >> candidate.cu"]
    texts = [e["text"] for e in events if e["type"] == "agent.text"]
    assert texts[0] == "Baseline first." and any("Done." in t for t in texts)
    assert len(texts) == len(set(texts))  # each message once, though Gemini rewrites them
    assert events[-1]["type"] == "campaign.end" and events[-1]["reason"] == "goal_met"
    for f in sess.rglob("*"):
        if f.is_file():
            assert b"gm-test-key-24680" not in f.read_bytes(), f
    from socratic.tui.state import fold

    state = fold(events)
    assert state.status == "ended" and state.end_reason == "goal_met" and state.tool_calls == 2
