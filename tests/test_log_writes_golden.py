"""What the harness writes stays byte-identical (issue 44: events are now built as their
contract records at each call site, questions travel as records): three campaigns, run the
same way every time with the fake API and the fake evaluator (no GPU), leave the logs and
state files in tests/data/golden_log_writes/, once the values that depend on the machine,
the clock or the folder are masked (`normalized`):

- socratic's own API loop: evaluations, a refused stop, triggers and auto-questions, the
  engineer's question and a requested evaluation from the inbox, the goal met;
- an outside agent (Claude Code) through its hooks in-process: session start, tool calls,
  a refused stop, a question from the inbox delivered, the goal met;
- a campaign by hand: imports, `say`, stops, and a retraction.

The goldens were written by the code before the change (`python
tests/test_log_writes_golden.py --write`, with that code first on sys.path)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import sys
from pathlib import Path

import pytest

from socratic.cli import main
from socratic.contracts import AskCommand, ControlCommand
from socratic.eventlog import inject
from socratic.harness.api.campaign import Campaign
from socratic.harness.attached.attach import attach
from socratic.harness.attached.hooks import run_hook
from socratic.resources import bundled_dir, demo_session_dir
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import (
    FAKE_EVALUATOR,
    FAKE_KEY,
    candidate_source,
    fake_config,
    make_task,
)

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_log_writes"
FILES = ("events.jsonl", "state.json", "attach.json", "inbox.jsonl")
MASKED = ("t", "ts", "chain", "session_id", "seconds", "gpu_wait_s", "start_epoch",
          "result_sha256", "gpu", "host", "versions", "duration_ms",
          "hooks")   # the hook files name this checkout's paths: their hashes differ per folder


def normalized(text: str, root: Path) -> str:
    """`text` with the run's folder, this interpreter and the masked fields' values replaced
    (JSON as the harness writes it: compact or indented)."""
    text = text.replace(str(root), "<root>").replace(sys.executable, "<python>")
    text = text.replace(str(demo_session_dir()), "<demo>")
    text = text.replace(str(bundled_dir("socratic.kernels")), "<kernels>")
    # the host's name as a whole word, last: a short one ("vm") is also inside random folder names
    text = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(socket.gethostname())}(?![A-Za-z0-9_-])", "<host>", text)
    keys = "|".join(MASKED)
    value = r'("(?:[^"\\]|\\.)*"|-?[0-9.eE+-]+|null|true|false|\{[^{}]*\})'
    return re.sub(rf'"({keys})":( ?){value}', r'"\1":\2<X>', text)


def snapshot(sess: Path, root: Path, label: str) -> dict[str, str]:
    return {f"{label}/{name}": normalized((sess / name).read_text(), root)
            for name in FILES if (sess / name).exists()}


def suggester(kind, asked, recent):
    return [(f"{kind}.q{i}", f"Question {i} for {kind}?") for i in range(3)]


def write(speed: float) -> tuple[str, dict[str, str]]:
    return ("write_file", {"path": "candidate.cu", "content": candidate_source(speed)})


def api_campaign(root: Path) -> dict[str, str]:
    script = [
        {"text": "Evaluating the baseline.", "tools": [("evaluate", {})]},
        {"text": "A first change.", "tools": [write(1.1), ("evaluate", {})]},
        {"text": "That should do."},
        {"text": "More work.", "tools": [write(1.3)]},
        {"text": "Finished."},
    ]
    task = make_task(root / "api", goal=1.2)
    with FakeAnthropic(script) as api:
        # text merged per response, whatever the machine's speed
        c = Campaign.create(task, fake_config(auto_questions=True, text_flush_s=3600.0),
                            session_dir=root / "api" / "s", api_key=FAKE_KEY,
                            base_url=api.url, suggester=suggester)
        inject(c.session.dir, AskCommand(text="What bounds it?", bank_id="bound.x"))
        inject(c.session.dir, ControlCommand(action="evaluate"))
        assert c.run() == "goal_met"
    return snapshot(c.session.dir, root, "api")


def hooks_campaign(root: Path) -> dict[str, str]:
    task = make_task(root / "hooks", goal=1.2)
    a = attach(task, "claude", fake_config(auto_questions=True), session_dir=root / "hooks" / "s",
               wait_s=0.5)
    sess, ws = a.session.dir, a.session.workspace
    base = {"session_id": "s1", "transcript_path": None, "cwd": str(ws)}

    def tool(i: int, command: str) -> None:
        run_hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                               "tool_input": {"command": command}, "tool_use_id": f"t-{i}",
                               "duration_ms": 5, "tool_response": {
                                   "stdout": f"out {i}", "stderr": "", "interrupted": False}},
                 session_dir=sess)

    def stop(text: str) -> None:
        run_hook("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                          "last_assistant_message": text}, session_dir=sess)

    run_hook("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"},
             session_dir=sess)
    tool(1, "ls")
    (ws / "candidate.cu").write_text(candidate_source(1.1))
    tool(2, "edit candidate.cu")
    stop("It is faster now.")
    inject(sess, AskCommand(text="Which scenario is slowest?"))
    tool(3, "cat NOTES.md")
    (ws / "candidate.cu").write_text(candidate_source(1.3))
    tool(4, "edit candidate.cu again")
    stop("Done: 1.3x.")
    return snapshot(sess, root, "hooks")


def cli(*argv: str, stdin: str | None = None) -> None:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(list(argv)) in (0, 1), err.getvalue()
    finally:
        sys.stdin = old


def manual_campaign(root: Path) -> dict[str, str]:
    demo = demo_session_dir()
    src = {n: demo / "evals" / f"{n:04d}.json" for n in range(1, 6)}

    def cand(n: int) -> Path:
        sha = json.loads(src[n].read_text())["candidate"]["sha256"]
        return demo / "candidates" / f"{sha[:16]}.cu"

    sess = root / "manual"
    s = str(sess)
    cli("attach", "rmsnorm", "--agent", "manual", "--session-dir", s, "--goal-min-speedup",
        "1.149", "--auto-questions")
    shutil.copyfile(cand(1), sess / "workspace" / "candidate.cu")
    cli("hook", "evaluate", "--session", s, "--import", str(src[1]))
    cli("hook", "evaluate", "--session", s, "--import", str(src[2]), "--candidate", str(cand(2)))
    inject(sess, AskCommand(text="Why is it wrong?"))
    cli("hook", "say", "--session", s, "-", stdin="The reduction indexes the wrong sums.")
    shutil.copyfile(cand(3), sess / "workspace" / "candidate.cu")
    cli("hook", "evaluate", "--session", s, "--import", str(src[3]))
    cli("hook", "stop", "--session", s)
    shutil.copyfile(cand(4), sess / "workspace" / "candidate.cu")
    cli("hook", "evaluate", "--session", s, "--import", str(src[4]))
    cli("hook", "evaluate", "--session", s, "--import", str(src[5]))
    cli("hook", "stop", "--session", s)
    cli("hook", "say", "--session", s, "Done.")
    cli("retract", s, "2", "--why", "the baseline was built wrong")
    return snapshot(sess, root, "manual")


def all_writes(root: Path) -> dict[str, str]:
    return {**api_campaign(root), **hooks_campaign(root), **manual_campaign(root)}


def golden_name(key: str) -> str:
    return key.replace("/", "-")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(tmp_path / "no-user-bank"))
    monkeypatch.delenv("SOCRATIC_SESSION", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_harness_writes_what_it_wrote(isolated):
    got = all_writes(isolated)
    want = sorted(p.name for p in GOLDEN.glob("*") if p.name != "README")
    assert sorted(golden_name(k) for k in got) == want
    for key, text in got.items():
        assert text == (GOLDEN / golden_name(key)).read_text(), key


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SOCRATIC_EVALUATOR"] = " ".join(FAKE_EVALUATOR)
        os.environ["SOCRATIC_BANK_DIR"] = str(Path(tmp) / "no-user-bank")
        os.environ.pop("SOCRATIC_SESSION", None)
        os.chdir(tmp)
        writes = all_writes(Path(tmp).resolve())
    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir(parents=True)
    for key, text in writes.items():
        (GOLDEN / golden_name(key)).write_text(text)
