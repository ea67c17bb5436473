"""The real command line: bad input exits 2 with one line (never a traceback), the CLI
module stays cheap to import, and a real terminal session in tmux (skipped without tmux)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from tests.test_tui_support import ROOT, make_session, read_inbox, tiny_events, write_events

pytestmark = pytest.mark.timeout(120)


def socratic(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("socratic: error:") and needle in lines[0]


def test_watch_missing_session(tmp_path):
    assert_one_line_error(socratic("watch", str(tmp_path / "nope")), "not found")


def test_watch_not_a_directory(tmp_path):
    f = tmp_path / "events.jsonl"
    f.write_text("")
    assert_one_line_error(socratic("watch", str(f)), "not a session directory")


def test_watch_directory_without_events(tmp_path):
    assert_one_line_error(socratic("watch", str(tmp_path)), "no events.jsonl")


def test_replay_bad_inputs(tmp_path):
    assert_one_line_error(socratic("replay", str(tmp_path / "nope")), "not found")
    write_events(tmp_path / "events.jsonl", tiny_events())
    assert_one_line_error(socratic("replay", str(tmp_path), "--speed", "5000"), "--speed")


def test_replay_of_an_empty_or_binary_log_says_so(tmp_path):
    # issue 10 item 14: a blank screen
    (tmp_path / "events.jsonl").write_bytes(b"")
    assert_one_line_error(socratic("replay", str(tmp_path)), "is empty: nothing to replay")
    (tmp_path / "events.jsonl").write_bytes(b"\x00\xff\xfe" * 100 + b"\n\x7fELF\x02\x01\n")
    assert_one_line_error(socratic("replay", str(tmp_path)), "no socratic event")
    assert "2 lines" in socratic("replay", str(tmp_path)).stderr


def test_replay_without_demo_is_a_clear_error(tmp_path, monkeypatch):
    import argparse

    import socratic.resources
    from socratic.errors import InputError
    from socratic.tui import cli

    monkeypatch.setattr(socratic.resources, "demo_session_dir", lambda: tmp_path / "demo")
    with pytest.raises(InputError, match="demo campaign is not installed"):
        cli._replay(argparse.Namespace(session_dir=None, speed=10.0, no_mouse=False))


def test_cli_module_is_cheap_to_import():
    code = "import sys, socratic.tui.cli; print(json.dumps(sorted(m for m in sys.modules if m.startswith('textual'))))"
    out = subprocess.run([sys.executable, "-c", "import json;" + code], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    assert json.loads(out) == []


# ---------------------------------------------------------------------------- tmux


class Tmux:
    def __init__(self, name: str, cmd: str, width: int = 100, height: int = 30) -> None:
        self.sock = f"socratic-test-{os.getpid()}-{name}"
        # COLUMNS/LINES from the test runner would override the pane's own size
        env = "env -u COLUMNS -u LINES TERM=xterm-256color COLORTERM= TEXTUAL_ANIMATIONS=none"
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-s", "t", "-x",
                        str(width), "-y", str(height), f"cd {ROOT} && {env} {cmd}; echo EXITED rc=$?; sleep 30"],
                       check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.sock, "send-keys", "-t", "t", *keys], check=True)

    def text(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.sock, "send-keys", "-t", "t", "-l", *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-t", "t"],
                              capture_output=True, text=True).stdout

    def wait_for(self, needle: str, timeout: float = 20.0) -> str:
        return self.wait_until(lambda screen: needle in screen, repr(needle), timeout)

    def wait_until(self, seen: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if seen(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} not on screen:\n{screen}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


from tests.test_tui_fleet import fleet  # noqa: E402, F401 - the fixture

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@needs_tmux
def test_real_terminal_replay(tmp_path):
    session, events = make_session(tmp_path, n_events=2000)
    tm = Tmux("replay", f"{sys.executable} -m socratic replay {session} --speed 1 --no-mouse")
    try:
        tm.wait_for("▶ x1")  # autoplay from the start at x1
        tm.keys("End")
        tm.wait_for(f"event {len(events)}/{len(events)}")
        screen = tm.wait_for("campaign end", timeout=5)
        assert "ENDED" in screen
        tm.keys("[")
        screen = tm.wait_for("eval #")
        tm.keys("?")
        tm.wait_for("previous / next evaluation")
        tm.keys("Escape")
        tm.keys("C-q")
        tm.wait_for("EXITED rc=0", timeout=10)
    finally:
        tm.close()


@needs_tmux
def test_real_terminal_watch_injects(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:8])
    tm = Tmux("watch", f"{sys.executable} -m socratic watch {tmp_path} --no-mouse", 80, 24)
    try:
        tm.wait_for("RUNNING")
        tm.keys("/")
        tm.wait_for("filter the bank")
        tm.text("roofline")
        tm.keys("Enter")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not read_inbox(tmp_path):
            time.sleep(0.1)
        inbox = read_inbox(tmp_path)
        assert len(inbox) == 1 and inbox[0]["type"] == "question" and inbox[0].get("bank_id")
        tm.wait_for("pending")
        tm.keys("C-q")
        tm.wait_for("EXITED rc=0", timeout=10)
    finally:
        tm.close()


def test_run_watch_api_for_socratic_run(tmp_path, monkeypatch):
    from socratic.errors import InputError
    from socratic.tui import app as tui_app

    runs = []
    monkeypatch.setattr(tui_app.SocraticApp, "run",
                        lambda self, **kw: runs.append((self.mode, self.poll, kw)))
    # the harness attaches right after starting the campaign: events.jsonl may not exist yet
    assert tui_app.run_watch(tmp_path) == 0
    assert tui_app.run_watch(tmp_path, poll=True, no_mouse=True) == 0
    assert runs == [("watch", False, {"mouse": True}), ("watch", True, {"mouse": False})]
    with pytest.raises(InputError):
        tui_app.run_watch(tmp_path / "missing")


def test_watch_and_replay_without_a_terminal_say_so(tmp_path):
    # they wrote escape codes into the pipe
    from socratic.resources import demo_session_dir

    for verb in ("watch", "replay"):
        r = socratic(verb, str(demo_session_dir()))
        assert_one_line_error(r, "needs a terminal")
        assert "\x1b" not in r.stdout


@needs_tmux
def test_real_terminal_attention_campaign_at_160x45_and_ctrl_c():
    # issue 27: the header ended `err×   TF/s bo`, the table at End was a correctness-only
    # run, the plot followed the baseline (2.99x); replay keys said nothing; ctrl+c a toast
    tm = Tmux("fa3", f"{sys.executable} -m socratic replay fa3-h200 --no-mouse", 160, 45)
    try:
        tm.wait_for("event ")
        tm.keys("End")
        tm.wait_for("event 13296/13296")
        # the pane is fitted once the table has laid out: its header then ends at `bound`
        # (a bare " bound" is also in the transcript's question names)
        def fitted(screen: str) -> bool:
            return any(" scenario " in ln and "speedup" in ln and ln.rstrip().endswith("bound")
                       for ln in screen.splitlines())
        screen = tm.wait_until(fitted, "the table's header ending at `bound`")
        assert "d128-s1k-b16-h16-full" in screen and "0.96×" in screen
        assert "(session 10)" in screen and "campaign 01:22:3" in screen
        tm.keys("x")
        tm.wait_for("read-only")
        tm.keys("C-c")
        tm.wait_for("EXITED rc=0", timeout=10)
    finally:
        tm.close()


@needs_tmux
def test_real_terminal_fleet_at_80_columns(tmp_path, fleet):  # noqa: F811 - the fixture
    rel, names = fleet
    d = tmp_path / rel
    tm = Tmux("fleet", f"{sys.executable} -m socratic watch {d} --no-mouse", 80, 24)
    try:
        screen = tm.wait_for(names[0])
        assert "goal" in screen and "geomean" in screen  # the glance's columns, at 80
        tm.keys(">", ">", ">", ">", ">")   # a column at a time, to the last ones
        screen = tm.wait_for("cost")
        assert names[0] in screen
        tm.keys("C-q")
        tm.wait_for("EXITED rc=0", timeout=10)
    finally:
        tm.close()
