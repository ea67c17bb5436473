"""`socratic attach --headless`: the real Claude Code, Codex CLI and Gemini CLI run without
a terminal against socratic's fake APIs and the fake evaluator, until the goal is met; an
agent whose hooks never fired ends `hooks_silent`; a headless campaign stopped by SIGTERM
ends `interrupted` and `--resume` finishes it on the same session. The settling of the end
is also tested without the binaries.

The binaries are found as $SOCRATIC_CLAUDE / $SOCRATIC_CODEX / $SOCRATIC_GEMINI or on PATH
(.ci/run installs them, pinned); each test skips without its agent."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic.harness.attached import headless
from socratic_doubles.testing import FAKE_EVALUATOR
from tests.test_attach_codex import PROVIDER as CODEX_PROVIDER

BINARIES = {name: shutil.which(os.environ.get(f"SOCRATIC_{name.upper()}") or name)
            for name in ("claude", "codex", "gemini")}
TOOL = {"claude": ("Bash", "command"), "codex": ("exec_command", "cmd"),
        "gemini": ("run_shell_command", "command")}


def needs(agent: str):
    return pytest.mark.skipif(BINARIES[agent] is None, reason=f"{agent} is not installed "
                              f"(.ci/run installs it; or set $SOCRATIC_{agent.upper()})")


def shell(agent: str, command: str) -> tuple[str, dict]:
    name, key = TOOL[agent]
    return name, {key: command, **({"description": "step"} if agent == "claude" else {})}


@contextmanager
def fake_api(agent: str, tmp: Path, script: list, env: dict):
    """The agent's fake API serving `script`, and the environment that points it there
    (with the agent's binary first on PATH)."""
    from socratic_doubles.fakeapi import FakeAnthropic
    from socratic_doubles.fakegemini import FakeGemini
    from socratic_doubles.fakeopenai import FakeResponses

    path = f"{Path(BINARIES[agent]).parent}{os.pathsep}{env.get('PATH', '')}"
    if agent == "claude":
        with FakeAnthropic(script, default={"text": "(script ran out)"}) as api:
            yield dict(env, PATH=path, ANTHROPIC_BASE_URL=api.url,
                       ANTHROPIC_API_KEY="sk-test-headless-1234",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")
    elif agent == "codex":
        home = tmp / "codex-home"
        home.mkdir(exist_ok=True)
        with FakeResponses(script, default={"text": "(script ran out)"}) as api:
            (home / "config.toml").write_text(CODEX_PROVIDER.format(url=api.url))
            yield dict(env, PATH=path, CODEX_HOME=str(home), FAKE_OPENAI_KEY="sk-test-codex-98765")
    else:
        user = tmp / ".gemini"
        user.mkdir(exist_ok=True)
        (user / "settings.json").write_text(json.dumps(
            {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        with FakeGemini(script, default={"text": "(script ran out)"}) as api:
            yield dict(env, PATH=path, GEMINI_API_KEY="gm-test-key-24680",
                       GOOGLE_GEMINI_BASE_URL=api.url)


def socratic(*args: str, env: dict, cwd: Path, timeout: float = 300,
             ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def base_env(tmp: Path) -> dict:
    return dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), HOME=str(tmp))


def events(sess: Path) -> list[dict]:
    return read_jsonl(sess / "events.jsonl")[0]


def faster(agent: str) -> dict:
    return {"text": "A faster version.",
            "tools": [shell(agent, "echo '// speedup: 1.35' >> candidate.cu")]}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_each_agent_headless_reaches_the_goal(tmp_path, agent):
    if BINARIES[agent] is None:
        pytest.skip(f"{agent} is not installed")
    sess = tmp_path / "sess"
    env = base_env(tmp_path)
    script = [{"text": "Baseline first.", "tools": [shell(agent, "./evaluate")]},
              {"text": "I am done."},          # refused: 1.0x < 1.3x
              faster(agent), {"text": "Done."}]
    with fake_api(agent, tmp_path, script, env) as aenv:
        r = socratic("attach", "rmsnorm", "--agent", agent, "--headless", "--goal-min-speedup",
                     "1.3", "--session-dir", str(sess), env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "campaign ended: goal_met" in r.stderr
    ev = events(sess)
    assert [h["met"] for h in ev if h["type"] == "stophook"] == [False, True]
    assert len([e for e in ev if e["type"] == "tool.call"]) == 2
    assert ev[-1]["type"] == "campaign.end" and ev[-1]["reason"] == "goal_met"
    assert (sess / headless.AGENT_LOG).stat().st_size > 0   # the agent's own output kept


@needs("claude")
def test_an_agent_whose_hooks_never_fire_ends_hooks_silent(tmp_path):
    sess = tmp_path / "sess"
    env = base_env(tmp_path)
    r = socratic("attach", "rmsnorm", "--agent", "claude", "--session-dir", str(sess),
                 env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (sess / "workspace" / ".claude" / "settings.json").unlink()   # its hooks are gone,
    (sess / "agent" / "claude-settings.json").write_text("{}")     # here too (by hand)
    with fake_api("claude", tmp_path, [faster("claude"), {"text": "Done: 1.35x."}],
                  env) as aenv:
        r = socratic("attach", str(sess), "--resume", "--headless", env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    end = events(sess)[-1]
    assert end["type"] == "campaign.end" and end["reason"] == "hooks_silent", end
    assert (end["tools_reported"], end["tools_logged"], end["stop_consulted"]) == (1, 0, 0)
    assert "campaign ended: hooks_silent" in r.stderr
    # never counted a result: the report says the goal was not met
    rep = socratic("report", str(sess), env=env, cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "hooks_silent" in rep.stdout


def headless_in_tool(sess: Path, tmp: Path, aenv: dict, marker: str) -> subprocess.Popen:
    """`socratic attach rmsnorm --headless` (Claude Code, goal 1.3x) started, once its agent's
    output shows the tool call `marker` running."""
    proc = subprocess.Popen([sys.executable, "-m", "socratic", "attach", "rmsnorm",
                             "--agent", "claude", "--headless", "--goal-min-speedup",
                             "1.3", "--session-dir", str(sess)], env=aenv, cwd=tmp,
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    log = sess / headless.AGENT_LOG
    while time.monotonic() < deadline and not (log.exists() and marker.encode() in log.read_bytes()):
        time.sleep(0.1)
    return proc


@needs("claude")
def test_sigterm_interrupts_and_resume_finishes_on_the_same_session(tmp_path):
    sess = tmp_path / "sess"
    env = base_env(tmp_path)
    slow = "python3 -c 'import time; time.sleep(30)'"   # a bare `sleep 30` it refuses to run
    script = [{"text": "Looking.", "tools": [shell("claude", slow)]},
              faster("claude"), {"text": "Done."}]
    with fake_api("claude", tmp_path, script, env) as aenv:
        proc = headless_in_tool(sess, tmp_path, aenv, "time.sleep(30)")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-3000:]
        assert events(sess)[-1]["reason"] == "interrupted"
        r = socratic("attach", str(sess), "--resume", "--headless", env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    ev = events(sess)
    assert [e["reason"] for e in ev if e["type"] == "campaign.end"] == ["interrupted", "goal_met"]
    assert any(e["type"] == "campaign.resume" for e in ev)
    runs = [ln for ln in (sess / headless.AGENT_LOG).read_text().splitlines()
            if ln.startswith("--- socratic ")]
    # the second run is Claude Code's own resume, with the session id its hooks reported
    sid = json.loads((sess / "attach.json").read_text())["agent_session"]
    assert len(runs) == 2 and "--resume" not in runs[0] and f"--resume {sid}" in runs[1]


@needs("claude")
def test_socratics_own_resume_goes_on_after_the_engineers_stop(tmp_path):
    # a prompt may not undo the engineer's stop (the agent can run the hook client by hand:
    # test_attach_hooks), so `attach --resume --headless`, outside the agent's reach, does:
    # Claude Code's own session resumed, the campaign on to its goal
    from socratic.contracts import ControlCommand
    from socratic.eventlog import inject

    sess = tmp_path / "sess"
    env = base_env(tmp_path)
    slow = "python3 -c 'import time; time.sleep(3)'"
    script = [{"text": "Looking.", "tools": [shell("claude", slow)]}, faster("claude"), {"text": "Done."}]
    with fake_api("claude", tmp_path, script, env) as aenv:
        proc = headless_in_tool(sess, tmp_path, aenv, "time.sleep(3)")
        inject(sess, ControlCommand(action="stop"))   # the engineer's stop, while the tool runs
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-3000:]
        assert events(sess)[-1]["reason"] == "stopped"
        r = socratic("attach", str(sess), "--resume", "--headless", env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    ev = events(sess)
    resumes = [e for e in ev if e["type"] == "campaign.resume"]
    assert len(resumes) == 1 and resumes[0].get("ended") == "stopped", resumes
    assert [e["reason"] for e in ev if e["type"] == "campaign.end"] == ["stopped", "goal_met"]
    assert [h["met"] for h in ev if h["type"] == "stophook"] == [True]
    sid = json.loads((sess / "attach.json").read_text())["agent_session"]
    runs = [ln for ln in (sess / headless.AGENT_LOG).read_text().splitlines() if ln.startswith("--- socratic ")]
    assert len(runs) == 2 and f"--resume {sid}" in runs[1]


@needs("claude")
def test_an_agent_that_cannot_resume_its_session_ends_agent_exited_with_its_words(tmp_path):
    # its session id gone from its own store (another HOME, say): it exits at once, having
    # run nothing; that is no sign of silent hooks, and the engineer is told why
    from socratic.harness.attached.attach import attach
    from socratic.harness.attached.hooks import run_hook
    from socratic_doubles.testing import fake_config, make_task
    from tests.test_attach_hooks import tool_payload

    env = base_env(tmp_path)
    sess = attach(make_task(tmp_path), "claude", fake_config(), session_dir=tmp_path / "s",
                  wait_for_human=False).session.dir
    payload = {**tool_payload("claude", sess / "workspace", "ls", ""),
               "session_id": "0d4c6f0e-5b1a-4c1e-9a57-3f2e8d9c1b77"}   # one Claude never had
    run_hook("post-tool", payload, session_dir=sess)
    with fake_api("claude", tmp_path, [{"text": "Done."}], env) as aenv:
        r = socratic("attach", str(sess), "--resume", "--headless", env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    end = events(sess)[-1]
    assert end["type"] == "campaign.end" and end["reason"] == "agent_exited" and end["exit_code"] != 0, end
    assert "campaign ended: agent_exited" in r.stderr
    said = next(ln for ln in r.stderr.splitlines() if "exited with code" in ln)
    assert "0d4c6f0e-5b1a-4c1e-9a57-3f2e8d9c1b77" in said and "agent.log" in said, said


@pytest.mark.parametrize("agent, stops, refusals", [("claude", 9, 9), ("codex", 20, None),
                                                    ("gemini", 20, None)])
def test_the_stop_block_cap_is_a_recorded_decision(tmp_path, agent, stops, refusals):
    """Claude Code overrides its Stop hook on the 9th refusal in a row: socratic ends the
    campaign `stalled` on that one, with `refusals`, before the agent would. Codex CLI and
    Gemini CLI have no cap: they go on until socratic's own stall rule."""
    if BINARIES[agent] is None:
        pytest.skip(f"{agent} is not installed")
    from socratic.harness.attached.attach import attach
    from socratic_doubles.testing import fake_config, make_task

    env = base_env(tmp_path)
    sess = attach(make_task(tmp_path), agent, fake_config(max_empty_stops=20),
                  session_dir=tmp_path / "s", wait_for_human=False).session.dir
    with fake_api(agent, tmp_path, [{"text": f"Done ({i})."} for i in range(25)], env) as aenv:
        r = socratic("attach", str(sess), "--resume", "--headless", env=aenv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    ev = events(sess)
    assert sum(e["type"] == "stophook" for e in ev) == stops
    end = ev[-1]
    assert end["reason"] == "stalled" and end.get("refusals") == refusals, end


# ---------------------------------------------------------------------- without binaries

def test_tool_counts_from_each_agents_output():
    claude = "\n".join(json.dumps(x) for x in [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "a"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "a"},
                                                      {"type": "tool_use", "id": "b"}]}},
        {"type": "assistant", "parent_tool_use_id": "t",
         "message": {"content": [{"type": "tool_use", "id": "sub"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c"}]}},
        # refused before it ran (Claude Code blocks a standalone `sleep 30`): no hook fires
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c",
                                                  "content": "<tool_use_error>Blocked"}]}},
    ]) + "\nnot json\n"
    assert headless.claude_tools(claude) == 2
    codex = "\n".join(json.dumps(x) for x in [
        {"type": "item.started", "item": {"type": "command_execution"}},
        {"type": "item.completed", "item": {"type": "command_execution"}},
        {"type": "item.completed", "item": {"type": "agent_message"}}])
    assert headless.codex_tools(codex) == 1
    gemini = "\n".join(json.dumps(x) for x in [{"type": "tool_use"}, {"type": "tool_result"},
                                                {"type": "tool_use"}])
    assert headless.gemini_tools(gemini) == 2


def _attached(tmp_path: Path) -> Path:
    from socratic.harness.attached.attach import attach
    from socratic_doubles.testing import fake_config, make_task

    return attach(make_task(tmp_path), "claude", fake_config(),
                  session_dir=tmp_path / "s").session.dir


def _hook_tool_and_stop(sess: Path) -> None:
    from socratic.harness.attached.hooks import run_hook
    from tests.test_attach_hooks import stop_payload, tool_payload

    ws = sess / "workspace"
    run_hook("post-tool", tool_payload("claude", ws, "ls", "x"), session_dir=sess)
    run_hook("stop", stop_payload("claude", ws), session_dir=sess)


@pytest.mark.parametrize("reported, hooks_ran, reason", [
    (1, False, "hooks_silent"),     # a tool ran, nothing logged it
    (None, False, "hooks_silent"),  # nothing known of its tools, and no stop was consulted
    (3, True, "hooks_silent"),      # more tools than the hooks reported
    (1, True, "agent_exited"),      # the hooks worked; it exited with the campaign running
    (0, False, "agent_exited"),     # it failed before any tool (exit 3): nothing for hooks to say
])
def test_the_end_is_settled_on_the_record(tmp_path, reported, hooks_ran, reason):
    sess = _attached(tmp_path)
    first = headless.last_seq(sess) + 1
    if hooks_ran:
        _hook_tool_and_stop(sess)
    assert headless.settle_end(sess, first, 3, reported, False, False) == reason
    end = events(sess)[-1]
    assert end["type"] == "campaign.end" and end["reason"] == reason
    if reason == "agent_exited":
        assert end["exit_code"] == 3
    else:
        assert end.get("tools_reported") == reported   # absent: its output told nothing


def test_tools_the_hooks_missed_in_a_run_that_ended_are_a_problem_on_record(tmp_path):
    sess = _attached(tmp_path)
    first = headless.last_seq(sess) + 1
    _hook_tool_and_stop(sess)
    assert headless.settle_end(sess, first, 0, 1, False, False) == "agent_exited"
    # a run that ended by the hooks keeps its end; tools they missed are a `problem`
    sess2 = _attached(tmp_path / "b")
    first = headless.last_seq(sess2) + 1
    from socratic.harness.attached.attached_campaign import AttachedCampaign

    with AttachedCampaign.open(sess2) as camp:
        camp.end("max_tool_calls")
    assert headless.settle_end(sess2, first, 0, 2, False, False) == "max_tool_calls"
    problem = events(sess2)[-1]
    assert problem["type"] == "problem" and "ran 2 tools, its hooks reported 0" in problem["error"]


def test_interrupted_and_over_time_runs_end_so(tmp_path):
    sess = _attached(tmp_path)
    assert headless.settle_end(sess, headless.last_seq(sess) + 1, -15, 0, True, False) == "interrupted"
    sess2 = _attached(tmp_path / "b")
    assert headless.settle_end(sess2, 1, -9, 0, False, True) == "max_minutes"


def test_headless_bad_input_is_one_line(tmp_path):
    env = base_env(tmp_path)
    cases = [
        (["attach", "rmsnorm", "--agent", "manual", "--headless"], "no agent to run"),
        (["attach", "rmsnorm", "--agent", "claude", "--headless", "--launch"], "give one"),
        (["attach", "rmsnorm", "--agent", "claude", "--wait-for-human"], "only with --headless"),
        (["attach", str(tmp_path / "nope"), "--resume", "--headless"], "not a started campaign"),
        (["attach", str(tmp_path), "--resume"], "only with --headless"),
        (["attach", "rmsnorm"], "--agent is required"),
    ]
    bare = dict(env, PATH=os.path.dirname(sys.executable))   # no agent on PATH
    r = socratic("attach", "rmsnorm", "--agent", "codex", "--headless", "--session-dir",
                 str(tmp_path / "s"), env=bare, cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "`codex` not found on PATH" in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()
    for argv, words in cases:
        r = socratic(*argv, env=env, cwd=tmp_path, timeout=60)
        assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, (argv, r.stderr)
