"""The fleet screen (`socratic watch FLEET_DIR`) with Pilot and a snapshot: one row per
campaign with its state (ended, running, waiting for you, stopped, not started), Enter opens
a campaign's usual screen and Esc returns, `/` and `i` ask the highlighted campaign, new
events reach the table while it is shown."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from socratic.fleet.folder import open_fleet
from socratic.fleet.spec import load_fleet
from socratic.tui.app import SocraticApp
from socratic_doubles.testing import make_task
from tests.test_tui_support import FakeBank, read_inbox, tiny_events, write_events

pytestmark = pytest.mark.timeout(120)

FLEET = """
[fleet]
gpus = ["0", "1"]

[[campaign]]
task = "tiny_task"
questions = "auto"
repeat = 2

[[campaign]]
task = "tiny_task"
questions = "human"

[[campaign]]
task = "tiny_task"
repeat = 2
"""


TS = "2026-12-01T00:00:00+00:00"   # events carry a wall-clock time (the contract)


class Clock:
    def __call__(self) -> float:
        return 1000.0


def running_events(wait: bool = False) -> list[dict]:
    evts = [e for e in tiny_events() if e["type"] != "campaign.end"]
    if wait:
        evts.append({"type": "stophook", "met": False, "failing": []})
        evts.append({"type": "control", "action": "wait"})
    return [{"ts": TS, **e, "seq": i + 1, "t": float(i)} for i, e in enumerate(evts)]


def numbered(evts: list[dict]) -> list[dict]:
    return [{"ts": TS, **e, "seq": e.get("seq", i + 1), "t": e.get("t", float(i))}
            for i, e in enumerate(evts)]


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """fleet/: 01 ended (goal met), 02 running, 03 waiting for a human, 04 stopped (no
    process), 05 not started. Relative paths: the screen shows them."""
    monkeypatch.chdir(tmp_path)
    make_task(tmp_path)
    (tmp_path / "fleet.toml").write_text(FLEET)
    f = open_fleet(load_fleet(tmp_path / "fleet.toml"), Path("fleet"))
    names = [c.name for c in f.campaigns]
    plans = [numbered(tiny_events()), running_events(), running_events(wait=True),
             running_events()]
    held = []
    for name, evts, gpu in zip(names, plans, ["0", "1", "0", "1"], strict=False):
        d = f.session(name)
        d.mkdir()
        write_events(d / "events.jsonl", evts)
        (d / "inbox.jsonl").write_text("")
        f.runs[name] = {"gpu": gpu}
        if name in names[1:3]:  # a live campaign holds its session's lock
            fd = os.open(d / "session.lock", os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.append(fd)
        else:
            (d / "session.lock").write_text("")
    f.save()
    yield Path("fleet"), names
    for fd in held:
        os.close(fd)


def app_for(d: Path) -> SocraticApp:
    return SocraticApp(d, "fleet", clock=Clock(), watch_files=False, bank=FakeBank())


def test_fleet_snapshot_100x30(snap_compare, fleet):
    d, _ = fleet
    assert snap_compare(app_for(d), terminal_size=(100, 30))


async def test_rows_states_and_a_live_update(fleet):
    d, names = fleet
    app = app_for(d)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = app.screen
        rows = screen.rows
        assert [rows[n].state for n in names] == ["ended", "running", "waiting", "stopped",
                                                  "not started"]
        assert rows[names[0]].reason == "goal_met" and rows[names[0]].met
        assert rows[names[0]].best_geomean == pytest.approx(1.17)
        assert [rows[n].questions for n in names] == ["auto", "auto", "human", "none", "none"]
        title = str(screen.query_one("#fleet-title").render())
        assert "5 campaigns: 1 waiting for you, 1 running, 1 not started, 1 stopped, 1 ended" \
            in title
        # the harness appends: the next poll shows it
        write_events(d / names[1] / "events.jsonl",
                     [{"seq": 99, "t": 99.0, "ts": TS, "type": "campaign.end",
                       "reason": "max_turns"}],
                     mode="a")
        screen.refresh_rows()
        await pilot.pause()
        assert screen.rows[names[1]].state == "ended"
        assert screen.rows[names[1]].reason == "max_turns"


async def test_enter_opens_the_campaign_and_escape_returns(fleet):
    from socratic.tui.fleet_campaign_screen import FleetCampaignScreen
    from socratic.tui.fleet_screen import FleetScreen

    d, names = fleet
    app = app_for(d)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("down")                 # the running campaign
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FleetCampaignScreen)
        assert app.screen.session_dir == d / names[1]
        assert app.screen.state.status in ("running", "waiting")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)
        # a campaign that has not started has nothing to open
        for _ in range(4):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)


async def test_slash_and_i_ask_the_highlighted_campaign(fleet):
    from socratic.tui.fleet_screen import FleetScreen

    d, names = fleet
    app = app_for(d)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("down", "down")         # the one waiting for a human
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"roofline")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)   # back to the fleet once asked
        inbox = read_inbox(d / names[2])
        assert inbox[-1]["bank_id"] == "bound.roofline-estimate"
        assert inbox[-1]["trigger"] == "declared_done"   # it answers the waiting campaign
        await pilot.press("up")
        await pilot.press("i")
        await pilot.pause()
        await pilot.press(*"Why 2 warps?")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)
        assert read_inbox(d / names[1])[-1]["text"] == "Why 2 warps?"
        assert not read_inbox(d / names[0])
        app.screen.refresh_rows()
        assert app.screen.rows[names[1]].pending == 1


def test_watch_on_a_fleet_folder_opens_the_fleet_screen(fleet, monkeypatch):
    """`socratic watch DIR`: a fleet folder (no events.jsonl of its own) is accepted and
    opens the fleet screen."""
    from socratic.cli import main
    from socratic.tui import app as tui_app

    d, _ = fleet
    seen = {}
    from socratic.tui import cli as tui_cli

    monkeypatch.setattr(tui_app.SocraticApp, "run",
                        lambda self, **kw: seen.setdefault("mode", self.mode))
    monkeypatch.setattr(tui_cli, "need_terminal", lambda verb, where: None)  # no tty here
    assert main(["watch", str(d)]) == 0
    assert seen["mode"] == "fleet"


def test_a_campaign_waiting_for_its_gpu_turn_says_so():
    """eval.wait: the status line says who has the GPU until the turn comes; the
    evaluation's line says how long it waited."""
    from socratic.tui.state import CampaignState
    from socratic.tui.widgets.event_block import render_block
    from socratic.tui.widgets.status_line import StatusLine

    evts = [e for e in tiny_events() if e["type"] in ("campaign.start", "trigger")]
    evts += [{"type": "eval.start", "n": 1, "candidate_sha": "abc"},
             {"type": "eval.wait", "n": 1, "gpu": "GPU-1234",
              "holder": "socratic eval rmsnorm (pid 7), pid 7 on node3 since 10:00"}]
    st = CampaignState().apply_all(numbered(evts))
    assert st.gpu_wait.startswith("socratic eval rmsnorm")
    line = StatusLine._render_line(st, "running", 12.0, None, 0, "", 0, compact=False)
    assert "⧗ waiting for the GPU: socratic eval rmsnorm (pid 7)" in line.plain
    more = [{"type": "eval.scenario", "n": 1, "scenario": "a", "correct": True, "speedup": 1.0},
            {"type": "eval.end", "n": 1, "gpu_wait_s": 12.5, "result": "evals/0001.json",
             "summary": {"all_correct": True, "geomean_speedup": 1.0, "min_speedup": 1.0}}]
    st = st.apply_all(numbered(evts + more)[len(evts):])
    assert st.gpu_wait is None
    assert "⧗" not in StatusLine._render_line(st, "running", 12.0, None, 0, "", 0,
                                              compact=False).plain
    block = st.blocks[st.eval_index[1]]
    assert "12.5 s waiting for the GPU" in render_block(block).plain


async def test_the_fleet_at_80_columns(fleet):
    # goal, pending, trigger, cost and gpu were off screen, `>` did nothing and → cut the
    # campaign's name
    from socratic.tui.widgets.fleet_table import FleetTable

    d, names = fleet
    app = app_for(d)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(FleetTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:7] == ["campaign", "state", "evals", "geomean", "min", "goal", "pending"]
        assert table.fixed_columns == 1
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert table.scroll_x > 0
        shown = app.export_screenshot()
        assert names[0] in shown  # the campaign column stays
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert table.scroll_x == 0
