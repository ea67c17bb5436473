"""The hooks as Claude Code runs them (`sh -c COMMAND` from .claude/settings.json, the
payload on stdin, in the workspace), with the session server and without it: files in
the workspace that would shadow a module, a stop that fails closed, damaged state files
rebuilt from the log, a log without its start, hooks answered while an evaluation runs,
kill -9 at any moment, and a full disk."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socratic.contracts import AskCommand, ControlCommand
from socratic.eventlog import inject, read_jsonl
from socratic.harness.attached.attach import attach
from socratic_doubles.testing import (
    FAKE_EVALUATOR,
    candidate_source,
    fake_config,
    make_task,
)

MODES = ("server", "direct")


def make(tmp_path: Path, wait_s: float = 30, **cfg):
    task = make_task(tmp_path, goal=1.2)
    return attach(task, "claude", fake_config(**cfg), session_dir=tmp_path / "s", wait_s=wait_s)


def commands(ws: Path) -> dict[str, str]:
    hooks = json.loads((ws / ".claude" / "settings.json").read_text())["hooks"]
    return {"post-tool": hooks["PostToolUse"][0]["hooks"][0]["command"],
            "stop": hooks["Stop"][0]["hooks"][0]["command"],
            "prompt": hooks["UserPromptSubmit"][0]["hooks"][0]["command"]}


def env_for(mode: str) -> dict[str, str]:
    return dict(os.environ, SOCRATIC_HOOK_SERVER="0" if mode == "direct" else "1",
                SOCRATIC_HOOK_SERVER_IDLE_S="20")


def tool(ws: Path, i: int) -> dict:
    return {"session_id": "s", "transcript_path": None, "cwd": str(ws),
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": f"echo {i}"}, "tool_use_id": f"t-{i}",
            "tool_response": {"stdout": f"{i}\n", "stderr": "", "interrupted": False}}


def stop(ws: Path) -> dict:
    return {"session_id": "s", "transcript_path": None, "cwd": str(ws),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "I am done."}


def prompt(ws: Path, text: str) -> dict:
    return {"session_id": "s", "transcript_path": None, "cwd": str(ws),
            "hook_event_name": "UserPromptSubmit", "prompt": text}


def ensure_server(sess: Path, env: dict[str, str]) -> None:
    """A session server, as a launcher starts one (a hook never does any more)."""
    from socratic.harness.attached.hookclient import connect, socket_path

    path = socket_path(str(sess.resolve()))
    if os.path.exists(path) and (s := connect(path)) is not None:
        s.close()
        return
    with open(sess / "hookserver.log", "ab") as log:
        subprocess.Popen([sys.executable, "-I", "-m", "socratic", "hook", "serve", "--session",
                          str(sess.resolve())], env=env, cwd=sess, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if os.path.exists(path) and (s := connect(path)) is not None:
            s.close()
            return
        time.sleep(0.02)


def hook(cmd: str, ws: Path, payload: dict | str, env: dict[str, str],
         timeout: float = 60) -> subprocess.CompletedProcess:
    if env.get("SOCRATIC_HOOK_SERVER") == "1" and (ws.parent / "events.jsonl").exists():
        ensure_server(ws.parent, env)
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["sh", "-c", cmd], input=data, capture_output=True, text=True,
                          cwd=ws, env=env, timeout=timeout)


def events(sess: Path) -> list[dict]:
    return read_jsonl(sess / "events.jsonl")[0]


def of(sess: Path, type_: str) -> list[dict]:
    return [e for e in events(sess) if e["type"] == type_]


@pytest.fixture(autouse=True)
def no_server_left(tmp_path):
    yield
    # the servers of this test's sessions exit with their session; make it prompt
    subprocess.run(["pkill", "-f", f"hook serve --session {tmp_path}"], check=False)


# ------------------------------------------------------------------ shadowing

SHADOW = "import pathlib; pathlib.Path({flag!r}).write_text('ran'); raise SystemExit(3)\n"


@pytest.fixture(params=["compiled", "python"])
def client(request, monkeypatch):
    """Which hook client attach writes: the C one, or the Python one (no C compiler)."""
    from socratic.harness.attached import attach as attach_mod

    if request.param == "python":
        monkeypatch.setattr(attach_mod, "compiled_client", lambda *a: None)
    elif shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here")
    return request.param


@pytest.mark.parametrize("mode", MODES)
def test_files_in_the_workspace_shadow_nothing(tmp_path, mode, client):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    flag = tmp_path / "SHADOWED"
    for name in ("json", "socratic", "random", "typing", "socket", "subprocess", "hookclient",
                 "select", "threading", "enum", "re"):
        (ws / f"{name}.py").write_text(SHADOW.format(flag=str(flag)))
    (ws / "socratic").mkdir()
    (ws / "socratic" / "__init__.py").write_text(SHADOW.format(flag=str(flag)))
    (ws / "candidate.cu").write_text(candidate_source(1.1))
    env = env_for(mode)
    cmd = commands(ws)
    r = hook(cmd["post-tool"], ws, tool(ws, 1), env)
    assert r.returncode == 0, r.stderr
    ev = subprocess.run([str(ws / "evaluate")], cwd=ws, env=env, capture_output=True, text=True,
                        timeout=60)
    assert ev.returncode == 0 and "evaluation #1" in ev.stdout, ev.stderr
    r = hook(cmd["stop"], ws, stop(ws), env)
    out = json.loads(r.stdout)
    assert out["decision"] == "block" and "1.100" in out["reason"]  # judged, with numbers
    assert not flag.exists()
    assert [e["met"] for e in of(sess, "stophook")] == [False]


# ------------------------------------------------------------------ failing closed

@pytest.mark.parametrize("mode", MODES)
def test_the_stop_fails_closed(tmp_path, mode):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env, cmd = env_for(mode), commands(ws)
    # not JSON on stdin: refused, in one line the agent can act on
    r = hook(cmd["stop"], ws, "{not json", env)
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["decision"] == "block" and "not JSON" in out["reason"]
    # the session's settings damaged (the server is started again with them: it cannot)
    subprocess.run(["pkill", "-f", f"hook serve --session {tmp_path}"], check=False)
    time.sleep(0.2)
    cfg = sess / "config.json"
    good = cfg.read_text()
    cfg.write_text("{broken")
    r = hook(cmd["stop"], ws, stop(ws), env)
    out = json.loads(r.stdout)
    assert out["decision"] == "block" and "config.json" in out["reason"], out
    assert "Traceback" not in r.stderr
    cfg.write_text(good)
    # a log that is not this campaign's: refused, and nothing written past it
    subprocess.run(["pkill", "-f", f"hook serve --session {tmp_path}"], check=False)
    time.sleep(0.2)
    log = sess / "events.jsonl"
    log.write_text(json.dumps({"seq": 1, "t": 0, "ts": "x", "type": "agent.text",
                               "text": "hi"}) + "\n")
    r = hook(cmd["stop"], ws, stop(ws), env)
    assert json.loads(r.stdout)["decision"] == "block"
    assert "campaign.start" in json.loads(r.stdout)["reason"]
    assert len(events(sess)) == 1


def test_a_handler_that_raises_refuses_the_stop_and_is_logged(tmp_path, monkeypatch):
    from socratic.harness.attached import hooks
    from socratic.harness.engine import engine

    a = make(tmp_path)
    ws = a.session.workspace

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(engine, "judge_stop", boom)
    out = hooks.run_hook("stop", stop(ws))
    assert out["decision"] == "block" and "disk on fire" in out["reason"]
    problems = of(a.session.dir, "problem")
    assert problems and problems[-1]["where"] == "hook.stop"
    assert not of(a.session.dir, "campaign.end")


# ------------------------------------------------------------------ recovery

@pytest.mark.parametrize("mode", MODES)
def test_damaged_state_files_are_rebuilt_from_the_log(tmp_path, mode):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env, cmd = env_for(mode), commands(ws)
    inject(sess, AskCommand(text="Which scenario is slowest?"))
    inject(sess, ControlCommand(action="pause"))
    inject(sess, ControlCommand(action="resume"))
    r = hook(cmd["post-tool"], ws, tool(ws, 1), env)
    assert "Which scenario is slowest?" in r.stdout
    inject(sess, AskCommand(text="Queued, not yet asked?"))
    subprocess.run(["pkill", "-f", f"hook serve --session {tmp_path}"], check=False)
    time.sleep(0.2)
    # read by a hook that then died (queued in state.json), then the state files damaged
    from socratic.harness.core.inbox import Inbox

    ib = Inbox(sess / "inbox.jsonl", sess / "state.json", auto_questions=False)
    ib.offset = json.loads((sess / "state.json").read_text())["inbox_offset"]
    ib.poll()
    (sess / "state.json").write_text('{"notes": 5, "questions": "x"}')
    (sess / "attach.json").write_text('{"transcripts": 5, "in_a_row": "x"}')
    r = hook(cmd["post-tool"], ws, tool(ws, 2), env)
    assert r.returncode == 0, r.stderr
    asked = [e["text"] for e in of(sess, "question")]
    # nothing asked twice, nothing lost, no control applied again
    assert asked == ["Which scenario is slowest?", "Queued, not yet asked?"]
    assert [e["action"] for e in of(sess, "control")] == ["pause", "resume"]
    assert {p["where"] for p in of(sess, "problem")} == {"state.json", "attach.json"}
    assert len(of(sess, "tool.call")) == 2


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_log_gets_its_start_and_evaluations_are_never_overwritten(tmp_path, mode):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env = env_for(mode)
    (ws / "candidate.cu").write_text(candidate_source(1.1))
    ev = subprocess.run([str(ws / "evaluate")], cwd=ws, env=env, capture_output=True, text=True)
    assert "evaluation #1" in ev.stdout
    first = (sess / "evals" / "0001.json").read_text()
    subprocess.run(["pkill", "-f", f"hook serve --session {tmp_path}"], check=False)
    time.sleep(0.2)
    (sess / "events.jsonl").write_text("")  # emptied (a disk restored from a bad copy)
    ev = subprocess.run([str(ws / "evaluate")], cwd=ws, env=env, capture_output=True, text=True)
    assert "evaluation #2" in ev.stdout, ev.stdout + ev.stderr
    assert (sess / "evals" / "0001.json").read_text() == first
    log = events(sess)
    assert log[0]["type"] == "campaign.start" and log[0]["recovered"] is True
    assert [e["n"] for e in log if e["type"] == "eval.end"] == [2]


def test_a_session_killed_before_its_first_event(tmp_path):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    (sess / "events.jsonl").unlink()  # attach killed before campaign.start
    r = hook(commands(ws)["post-tool"], ws, tool(ws, 1), env_for("server"))
    assert r.returncode == 0, r.stderr
    assert [e["type"] for e in events(sess)][:3] == ["campaign.start", "tool.call", "tool.result"]


def test_run_starts_again_a_session_killed_before_its_first_event(tmp_path):
    from socratic.harness.api.campaign import Campaign
    from socratic.harness.core.session import Session

    task = make_task(tmp_path)
    sess = tmp_path / "api"
    c = Campaign.create(task, fake_config(), session_dir=sess, api_key="k", base_url="http://x")
    c.session.release()
    (sess / "events.jsonl").unlink(missing_ok=True)  # killed before campaign.start
    assert Session(sess).killed_start()
    p = subprocess.Popen([sys.executable, "-m", "socratic", "run", str(task), "--session-dir",
                          str(sess), "--headless", "--max-tool-calls", "1"], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, ANTHROPIC_API_KEY="k",
                                  ANTHROPIC_BASE_URL="http://127.0.0.1:9"))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None and not (
                (sess / "events.jsonl").exists() and events(sess)):
            time.sleep(0.1)
        assert events(sess)[0]["type"] == "campaign.start"
    finally:
        p.kill()
        _, err = p.communicate()
    assert "not empty and no campaign" not in err


# ------------------------------------------------------------------ concurrency

def test_hooks_are_answered_while_an_evaluation_runs(tmp_path):
    a = make(tmp_path, eval_timeout_s=120)
    ws, sess = a.session.workspace, a.session.dir
    env, cmd = env_for("server"), commands(ws)
    ensure_server(sess, env)
    hook(cmd["post-tool"], ws, tool(ws, 0), env)  # the server is up
    (ws / "candidate.cu").write_text(candidate_source(1.1, "// sleep: 1.5"))  # 3 scenarios
    slow = subprocess.Popen([str(ws / "evaluate")], cwd=ws, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.6)
    took = []
    for i in range(1, 9):
        t = time.monotonic()
        r = hook(cmd["post-tool"], ws, tool(ws, i), env)
        took.append(time.monotonic() - t)
        assert r.returncode == 0, r.stderr
    # the engineer's words typed into the agent meanwhile are logged at once
    r = hook(cmd["prompt"], ws, prompt(ws, "Why is c slower than a?"), env)
    assert r.returncode == 0
    assert slow.poll() is None, "the evaluation should still be running"
    assert "Why is c slower than a?" in [e["text"] for e in of(sess, "question")]
    out, _ = slow.communicate(timeout=60)
    assert "evaluation #1" in out
    assert max(took) < 1.0, took
    assert len(of(sess, "tool.call")) == 9
    seqs = [e["seq"] for e in events(sess)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_sixteen_hooks_at_once_are_all_logged(tmp_path, client):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env, cmd = env_for("server"), commands(ws)
    ensure_server(sess, env)
    procs = [subprocess.Popen(["sh", "-c", cmd["post-tool"]], cwd=ws, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(16)]
    for i, p in enumerate(procs):
        p.stdin.write(json.dumps(tool(ws, i)))  # type: ignore[union-attr]
        p.stdin.close()  # type: ignore[union-attr]
    for p in procs:
        assert p.wait(timeout=60) == 0, p.stderr.read()  # type: ignore[union-attr]
    ids = sorted(e["id"] for e in of(sess, "tool.call"))
    assert ids == sorted(f"t-{i}" for i in range(16))
    # one server served them all
    log = (sess / "hookserver.log").read_text()
    assert log.count("serving") == 1, log


# ------------------------------------------------------------------ kill -9

def test_kill_9_at_any_moment_loses_no_question_and_asks_none_twice(tmp_path, client):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env, cmd = env_for("server"), commands(ws)
    ensure_server(sess, env)
    rng = random.Random(7)
    asked = []
    for i in range(30):
        text = f"Question {i}?"
        inject(sess, AskCommand(text=text))
        asked.append(text)
        p = subprocess.Popen(["sh", "-c", cmd["post-tool"]], cwd=ws, env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        p.stdin.write(json.dumps(tool(ws, i)))  # type: ignore[union-attr]
        p.stdin.close()  # type: ignore[union-attr]
        time.sleep(rng.uniform(0, 0.03))
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        if i % 7 == 3:  # now and then the server dies too
            subprocess.run(["pkill", "-9", "-f", f"hook serve --session {tmp_path}"],
                           check=False)
    delivered = []
    for j in range(3):  # the hooks that follow deliver whatever is still due
        r = hook(cmd["post-tool"], ws, tool(ws, 100 + j), env)
        assert r.returncode == 0, r.stderr
        if r.stdout.strip():
            delivered.append(r.stdout)
    logged = [e["text"] for e in of(sess, "question")]
    assert sorted(logged) == sorted(set(logged)), "a question asked twice"
    assert set(logged) == set(asked), set(asked) - set(logged)
    seqs = [e["seq"] for e in events(sess)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


# ------------------------------------------------------------------ a full disk

def fill(disk: Path) -> None:
    """Write to `disk` until it is full."""
    with open(disk / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


def _tmpfs(path: Path, size: str) -> bool:
    if not shutil.which("mount") or os.geteuid() != 0:
        return False
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_full_disk_is_one_line_and_the_stop_is_refused(tmp_path, mode):
    disk = tmp_path / "disk"
    if not _tmpfs(disk, "3m"):
        pytest.skip("needs root and tmpfs to fill a small disk")
    try:
        a = make(disk)
        ws, sess = a.session.workspace, a.session.dir
        env, cmd = env_for(mode), commands(ws)
        assert hook(cmd["post-tool"], ws, tool(ws, 0), env).returncode == 0
        filler = disk / "filler"
        fill(disk)
        before = (sess / "events.jsonl").read_bytes()
        r = hook(cmd["post-tool"], ws, tool(ws, 1), env)
        # exit 1, or 0 when the answer went out before the state could not be saved
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr
        assert r.stderr.strip().count("\n") == 0 and "No space left" in r.stderr, r.stderr
        r = hook(cmd["stop"], ws, stop(ws), env)
        out = json.loads(r.stdout)
        assert out["decision"] == "block" and "No space left" in out["reason"], out
        after = (sess / "events.jsonl").read_bytes()
        assert after.startswith(before) and after.endswith(b"\n")  # nothing half-written
        assert not list(sess.glob("*.tmp")) and not list((sess / "evals").glob("*.tmp"))
        filler.unlink()
        r = hook(cmd["post-tool"], ws, tool(ws, 2), env)
        assert r.returncode == 0, r.stderr
        for line in (sess / "events.jsonl").read_bytes().splitlines():
            json.loads(line)
    finally:
        subprocess.run(["pkill", "-f", f"hook serve --session {disk}"], check=False)
        time.sleep(0.3)
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_at_an_import_records_nothing_half(tmp_path, monkeypatch):
    from tests.test_manual import SRC, attach_rmsnorm, cli, use

    disk = tmp_path / "disk"
    if not _tmpfs(disk, "3m"):
        pytest.skip("needs root and tmpfs to fill a small disk")
    try:
        monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
        sess, _ = attach_rmsnorm(disk)
        use(sess, 1)
        fill(disk)
        before = (sess / "events.jsonl").read_bytes()
        code, out, err = cli("hook", "evaluate", "--session", str(sess), "--import", str(SRC[1]))
        assert code == 2 and err.count("\n") == 1 and "No space left" in err, err
        assert "Traceback" not in err and str(sess) in err
        assert (sess / "events.jsonl").read_bytes() == before
        assert not list(sess.rglob("*.tmp")) and not list((sess / "evals").iterdir())
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_campaign_on_a_disk_that_fills_ends_in_one_line(tmp_path):
    # `socratic run --headless` died with a traceback, no campaign.end, its last line cut
    from socratic_doubles.fakeapi import FakeAnthropic
    from tests.test_harness_cli import socratic as run_socratic

    disk = tmp_path / "disk"
    if not _tmpfs(disk, "3m"):
        pytest.skip("needs root and tmpfs to fill a small disk")
    try:
        task = make_task(tmp_path)
        script = [{"delay": 1.5, "text": "Trying a faster variant.",
                   "tools": [("write_file", {"path": "candidate.cu",
                                             "content": candidate_source(1.5)})]},
                  {"text": "done"}]
        with FakeAnthropic(script) as api:
            r = run_socratic("run", str(task), "--headless", "--session-dir",
                             str(disk / "s"), api=api)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (disk / "s" / "events.jsonl").exists():
                time.sleep(0.05)
            fill(disk)
            _, err = r.communicate(timeout=120)
        text = err.decode()
        assert r.returncode == 2 and "Traceback" not in text, text
        assert text.strip().splitlines()[-1].startswith("socratic: error:"), text
        assert "No space left" in text.strip().splitlines()[-1]
        raw = (disk / "s" / "events.jsonl").read_bytes()
        assert raw.endswith(b"\n")
        for line in raw.splitlines():
            json.loads(line)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_relative_session_in_the_environment_still_reaches_the_server(tmp_path, client):
    a = make(tmp_path)
    ws, sess = a.session.workspace, a.session.dir
    env = dict(env_for("server"), SOCRATIC_SESSION="s")   # relative to the hook's cwd
    ensure_server(sess, env)
    r = subprocess.run(["sh", "-c", commands(ws)["post-tool"]], input=json.dumps(tool(tmp_path, 1)),
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "serving" in (sess / "hookserver.log").read_text()
    assert [e["id"] for e in of(sess, "tool.call")] == ["t-1"]


def test_hook_serve_by_hand_on_bad_input_is_one_line(tmp_path):
    for args in (["--session", str(tmp_path / "nope")], []):
        r = subprocess.run([sys.executable, "-m", "socratic", "hook", "serve", *args],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert r.returncode in (1, 2) and r.stderr.count("\n") == 1, r.stderr
        assert "Traceback" not in r.stderr and "session" in r.stderr
    # a campaign by hand has no hooks to serve
    a = attach(make_task(tmp_path), "manual", fake_config(), session_dir=tmp_path / "m")
    r = subprocess.run([sys.executable, "-m", "socratic", "hook", "serve", "--session",
                        str(a.session.dir)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "by hand" in r.stderr and r.stderr.count("\n") == 1, r.stderr
