"""Live tailing: another process appends to a session while the TUI watches it (inotify
and polling), an injected question lands in inbox.jsonl; bad input is skipped quietly."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time

import pytest

from socratic.ownership import LOCK_FILE
from socratic.tui.app import SocraticApp
from tests.test_ownership import hold
from tests.test_tui_support import FakeBank, read_inbox, tiny_events, write_events

pytestmark = pytest.mark.timeout(90)

WRITER = textwrap.dedent("""
    import json, sys, time
    path, n, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with open(path, "a", encoding="utf-8") as fh:
        for i in range(n):
            head = {"seq": 100 + i, "t": 100.0 + i, "ts": "2026-11-01T08:01:40.000+00:00"}
            ev = {**head, "type": "agent.text", "text": f" chunk{i}"}
            if i == n // 2:
                ev = {**head, "type": "tool.call", "id": "w1", "name": "bash",
                      "input": {"command": "nvcc"}}
            line = json.dumps(ev) + "\\n"
            if i == n - 1:  # the last line arrives in two writes
                fh.write(line[:10]); fh.flush(); time.sleep(0.4)
                fh.write(line[10:])
            else:
                fh.write(line)
            fh.flush()
            time.sleep(delay)
""")


async def wait_for(pilot, cond, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        await pilot.pause(0.05)
    return cond()


@pytest.mark.parametrize("poll", [False, True], ids=["inotify", "poll"])
async def test_watch_tails_another_process_and_injects(tmp_path, poll):
    base = tiny_events()[:7]  # campaign started, one tool call done; still running
    write_events(tmp_path / "events.jsonl", base)
    app = SocraticApp(tmp_path, "watch", poll=poll, bank=FakeBank())
    n = 40
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main.state.seq == 7
        writer = subprocess.Popen([sys.executable, "-c", WRITER,
                                   str(tmp_path / "events.jsonl"), str(n), "0.02"])
        try:
            # while the other process writes, pick a question and inject it
            await pilot.press("slash", *"mask", "enter")
            await pilot.pause()
            inbox = read_inbox(tmp_path)
            assert inbox == [{"type": "question", "bank_id": "correctness.masking",
                              "text": "Is the causal mask aligned to the bottom-right corner?"}]
            assert await wait_for(pilot, lambda: app.main.state.seq == 100 + n - 1)
        finally:
            writer.wait(timeout=30)
        text = "".join(b.text for b in app.main.state.blocks if b.kind == "text")
        assert f"chunk{n - 1}" in text and "chunk0" in text
        assert app.main.state.tool_calls == 2
        assert len(app.main.pending) == 1  # the harness has not logged it yet


async def test_truncated_last_line_waits_for_the_rest(tmp_path):
    path = tmp_path / "events.jsonl"
    write_events(path, tiny_events()[:3])
    app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
    async with app.run_test(size=(100, 30)) as pilot:
        line = ('{"seq": 4, "t": 4, "ts": "2026-11-01T08:00:04.000+00:00", "type": "agent.text", '
                '"text": " and more"}\n')
        with open(path, "a") as fh:
            fh.write(line[:20])
        app.main._poll_file()
        await pilot.pause()
        assert app.main.state.seq == 3
        with open(path, "a") as fh:
            fh.write(line[20:])
        app.main._poll_file()
        await pilot.pause()
        assert app.main.state.seq == 4
        assert app.main.state.blocks[-1].text.endswith("and more")


async def test_malformed_and_unknown_lines_are_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    evs = tiny_events()
    with open(path, "w") as fh:
        import json

        for i, ev in enumerate(evs):
            fh.write(json.dumps(ev) + "\n")
            if i == 3:
                fh.write("{not json at all\n")
                fh.write("[1, 2, 3]\n")
                fh.write('{"type": "brand.new.event", "seq": 99}\n')
                fh.write("\n")
    for mode in ("watch", "replay"):
        app = SocraticApp(tmp_path, mode, watch_files=False, autoplay=False, start="end",
                          bank=FakeBank())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.main.state.status == "ended" and len(app.main.state.evals) == 2
            assert app.main.state.n_ignored == 1
            # issue 10 item 14: skipped lines were not counted anywhere
            assert app.main.skipped == 2
            line = str(app.query_one("#status").render())  # 80 columns: the short form
            assert re.search(r"⚠ ?2 (malformed lines )?skipped", line), line


async def test_log_replaced_starts_over(tmp_path):
    path = tmp_path / "events.jsonl"
    write_events(path, tiny_events())
    app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.main.state.status == "ended"
        write_events(path, tiny_events()[:2])
        app.main._poll_file()
        await pilot.pause()
        assert app.main.state.seq == 2 and app.main.state.status == "running"


async def test_watch_waits_for_events_file(tmp_path):
    app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.main.display_status() == "waiting"
        write_events(tmp_path / "events.jsonl", tiny_events()[:2])
        app.main._poll_file()
        await pilot.pause()
        assert app.main.display_status() == "running"


# -- liveness: a campaign whose process is gone (no campaign.end, session lock free) --------

def status_text(app) -> str:
    return str(app.main.query_one("#status").render())


async def settle(app, pilot) -> None:
    """Let the screen's lock probe (a worker) finish and its result land."""
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_no_writer_when_no_process_holds_the_session(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:7])   # no campaign.end
    (tmp_path / LOCK_FILE).write_bytes(b"")          # held once, let go: its holder is gone
    app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
    async with app.run_test(size=(120, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.main.display_status() == "no writer")
        assert "NO WRITER" in status_text(app) and "no process holds the session" in status_text(app)
        assert app.main.elapsed() == app.main.state.t         # its clock stopped with it
        await pilot.press("p")                                 # nothing to pause
        assert read_inbox(tmp_path) == []
        # its campaign.end came late (written just before it let go): ENDED, not NO WRITER
        write_events(tmp_path / "events.jsonl", tiny_events()[-1:], mode="a")
        app.main._check_writer()
        await settle(app, pilot)
        assert app.main.display_status() == "ended" and "■ ENDED" in status_text(app)


async def test_running_while_a_process_holds_the_session_then_no_writer(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:7])
    holder = hold(tmp_path)
    try:
        app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(app, pilot)
            assert app.main.display_status() == "running" and "RUNNING" in status_text(app)
            holder.kill()                                   # dies without a campaign.end
            holder.wait(timeout=10)
            # the periodic check finds it gone
            assert await wait_for(pilot, lambda: "NO WRITER" in status_text(app))
    finally:
        holder.kill()
        holder.wait(timeout=10)


@pytest.mark.parametrize("case", ["no lock file", "attached"])
async def test_no_writer_needs_a_lock_file_and_a_campaign_of_socratic_run(tmp_path, case):
    """Sessions from before the lock, and attached campaigns (written by short-lived hook
    processes, nothing holds them between calls), stay running."""
    events = tiny_events()[:7]
    if case == "attached":
        events[0]["agent"] = "claude"
        (tmp_path / LOCK_FILE).write_bytes(b"")
    write_events(tmp_path / "events.jsonl", events)
    app = SocraticApp(tmp_path, "watch", watch_files=False, bank=FakeBank())
    async with app.run_test(size=(120, 30)) as pilot:
        app.main._check_writer()
        await settle(app, pilot)
        assert app.main.display_status() == "running" and not app.main.writer_gone
