"""The hooks an agent session runs are socratic's, unchanged (issue 40): pinned at attach
(`campaign.start.hooks`), checked at every agent session start, before every launch and at
each stop; a difference is a `problem` (`where: hooks`) and a contradiction in the report.
Codex takes its hooks from the session folder through config overrides; Gemini, which
cannot, has its workspace file put back before each launch. CPU only: hooks run in-process.
The same attacks with the real agents: tests/test_attach_confined.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic.harness.attached import agentspec
from socratic.harness.attached.attach import attach
from socratic.harness.attached.hooks import run_hook
from socratic.harness.core.sessionlog import SessionLog
from socratic.report import build_report
from socratic_doubles.testing import candidate_source, fake_config, make_task

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def make(tmp_path: Path, agent: str):
    a = attach(make_task(tmp_path, goal=1.3), agent, fake_config(),
               session_dir=tmp_path / "s", wait_s=0.5)
    (a.session.workspace / "candidate.cu").write_text(candidate_source(1.0))
    return a.session.dir, a.session.workspace


def hook_problems(sess: Path) -> list[str]:
    return [e["error"] for e in read_jsonl(sess / "events.jsonl")[0]
            if e["type"] == "problem" and e["where"] == "hooks"]


def session_start(sess: Path, ws: Path, name: str = "SessionStart") -> dict:
    return run_hook("session-start", {"session_id": "s1", "cwd": str(ws),
                                      "hook_event_name": name, "source": "startup"},
                    session_dir=sess)


def test_the_hook_files_are_pinned_at_attach(tmp_path):
    sess, ws = make(tmp_path, "gemini")
    start = read_jsonl(sess / "events.jsonl")[0][0]
    assert start["type"] == "campaign.start"
    assert "agent/workspace-hooks/.gemini/settings.json" in start["hooks"]
    assert all(len(v) == 64 for v in start["hooks"].values())
    assert session_start(sess, ws, "SessionStart") is not None
    assert hook_problems(sess) == []        # an honest session: nothing said


def test_a_gemini_stop_hook_removed_is_named_at_session_start_and_in_the_report(tmp_path):
    sess, ws = make(tmp_path, "gemini")
    f = ws / ".gemini" / "settings.json"
    d = json.loads(f.read_text())
    del d["hooks"]["AfterAgent"]
    d["hooksConfig"] = {"enabled": False}
    f.write_text(json.dumps(d))
    out = session_start(sess, ws)
    said = hook_problems(sess)
    assert len(said) == 1 and "AfterAgent hook is missing" in said[0]
    assert "hooksConfig.enabled is False" in said[0]
    assert "not the ones socratic wrote" in json.dumps(out)
    session_start(sess, ws)                  # said once, not at every session
    assert len(hook_problems(sess)) == 1
    r = build_report([sess]).sessions[0]
    assert any("AfterAgent hook is missing" in c for c in r.contradictions)


def test_a_changed_hook_client_is_named(tmp_path):
    sess, ws = make(tmp_path, "claude")
    client = sess / "agent" / "hookclient"
    if not client.exists():
        pytest.skip("no C compiler: the hooks run the Python client")
    client.chmod(0o755)
    client.write_bytes(b"#!/bin/sh\necho '{}'\n")    # as an unconfined process could
    session_start(sess, ws)
    said = hook_problems(sess)
    assert len(said) == 1 and "agent/hookclient: changed since attach" in said[0]


def test_codex_takes_its_hooks_from_the_session_folder(tmp_path):
    """Config overrides (`-c hooks.<Event>=...`) outrank every config.toml, and the hooks
    are forced on; the workspace's hooks.json is emptied for the launch and put back."""
    from socratic.harness.attached.agentlaunch import check_hooks

    sess, ws = make(tmp_path, "codex")
    spec = agentspec.load("codex")
    settings = sess / "agent" / "codex-hooks.json"
    argv = spec.confine.argv(["codex", "exec", "go"], settings)
    assert argv[:3] == ["codex", "-c", "features.hooks=true"] and argv[-2:] == ["exec", "go"]
    inline = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv if a.startswith("hooks.")}
    assert set(inline) == {"hooks.SessionStart", "hooks.UserPromptSubmit", "hooks.PostToolUse",
                           "hooks.Stop"}
    want = json.loads(settings.read_text())["hooks"]["Stop"]
    assert tomllib.loads("v = " + inline["hooks.Stop"])["v"] == want
    pristine = (ws / ".codex" / "hooks.json").read_text()
    undo = check_hooks(sess, spec, SessionLog(sess, 0.0, role="attach"))
    assert json.loads((ws / ".codex" / "hooks.json").read_text()) == {"hooks": {}}
    for u in undo:
        u()
    assert (ws / ".codex" / "hooks.json").read_text() == pristine
    assert hook_problems(sess) == []


def test_a_launch_puts_back_geminis_hooks_and_says_so(tmp_path):
    from socratic.harness.attached.agentlaunch import check_hooks

    sess, ws = make(tmp_path, "gemini")
    spec = agentspec.load("gemini")
    f = ws / ".gemini" / "settings.json"
    pristine = f.read_text()
    f.write_text(json.dumps({"hooks": {}}))
    assert check_hooks(sess, spec, SessionLog(sess, 0.0, role="attach")) == []
    assert f.read_text() == pristine
    said = hook_problems(sess)
    assert len(said) == 1 and "put back before the launch" in said[0]


def test_a_handler_of_the_agents_own_beside_the_stop_hook_is_named(tmp_path):
    """A second AfterAgent handler that lets the agent stop (Gemini runs every matching
    hook) is no longer socratic's stop hook alone."""
    sess, ws = make(tmp_path, "gemini")
    f = ws / ".gemini" / "settings.json"
    d = json.loads(f.read_text())
    d["hooks"]["AfterAgent"].append({"hooks": [{"type": "command", "timeout": 5000,
                                                "command": "echo '{\"decision\": \"allow\"}'"}]})
    f.write_text(json.dumps(d))
    session_start(sess, ws)
    said = hook_problems(sess)
    assert len(said) == 1 and "AfterAgent has handlers socratic did not write" in said[0]
