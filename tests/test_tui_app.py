"""Pilot tests: every key binding in watch and replay mode, pending questions, follow
behaviour, pruning and copy."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from socratic.contracts import AskCommand, ControlCommand
from socratic.tui.app import SPEEDS, SocraticApp
from socratic.tui.ask_screen import AskScreen
from socratic.tui.confirm_screen import ConfirmScreen
from socratic.tui.help_screen import HelpScreen
from socratic.tui.picker_screen import PickerScreen
from socratic.tui.state import fold
from socratic.tui.widgets.question_picker import QuestionPicker
from socratic.tui.widgets.transcript import Transcript
from tests.test_tui_support import (
    FakeBank,
    make_session,
    read_inbox,
    stamped,
    tiny_events,
    write_events,
)

pytestmark = pytest.mark.timeout(60)
TS = "2026-11-01T08:00:09.000+00:00"


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def tiny(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events())
    return tmp_path


@pytest.fixture
def running(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:-1])
    return tmp_path


def watch_app(session, **kw):
    kw.setdefault("bank", FakeBank())
    kw.setdefault("clock", Clock())
    return SocraticApp(session, "watch", watch_files=False, **kw)


def replay_app(session, **kw):
    kw.setdefault("clock", Clock())
    kw.setdefault("autoplay", False)
    return SocraticApp(session, "replay", **kw)


# ---------------------------------------------------------------------------- watch keys


async def test_watch_loads_state(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main.state.status == "ended" and len(app.main.state.evals) == 2
        table = app.query_one("#table")
        assert table.row_count == 2
        assert str(table.get_cell("r1-c4096", "verdict")) == "✓ ok"


async def test_slash_filter_enter_injects_bank_question(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        picker = app.screen.query_one(QuestionPicker)
        # the latest trigger's suggestions are on top, asked entries marked
        assert picker.shown[0].id == "correctness.masking"
        await pilot.press(*"spill")
        await pilot.pause()
        assert picker.highlighted_entry().id == "compiler.spills"
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, PickerScreen)
        assert read_inbox(tiny) == [{"type": "question", "text": "Does ptxas report register spills?",
                                     "bank_id": "compiler.spills"}]
        assert len(app.main.pending) == 1
        assert app.query_one("#pending").display


async def test_picker_arrows_escape_and_asked_marks(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        picker = app.screen.query_one(QuestionPicker)
        first = picker.highlighted_entry().id
        await pilot.press("down")
        assert picker.highlighted_entry().id != first
        await pilot.press("up")
        assert picker.highlighted_entry().id == first
        await pilot.press("up")  # the suggestion on top, asked already
        assert picker.highlighted_entry().id == "correctness.masking"
        preview = str(app.screen.query_one("#preview").render())
        assert "why:" in preview and "asked before" in preview
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PickerScreen)
        assert read_inbox(tiny) == []


async def test_i_free_text_question(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press(*"why slow?")
        await pilot.press("enter")
        await pilot.pause()
        assert read_inbox(tiny) == [{"type": "question", "text": "why slow?"}]
        # escape cancels without writing
        await pilot.press("i", "x", "escape")
        await pilot.pause()
        assert len(read_inbox(tiny)) == 1


async def test_pending_until_harness_logs_question(tmp_path):
    evs = tiny_events()[:8]
    write_events(tmp_path / "events.jsonl", evs)
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i", *"mask?", "enter")
        await pilot.pause()
        assert [p["text"] for p in app.main.pending] == ["mask?"]
        write_events(tmp_path / "events.jsonl", [
            {"seq": 9, "t": 9.0, "ts": TS, "type": "question", "text": "mask?", "source": "human"}], "a")
        app.main._poll_file()
        await pilot.pause()
        assert app.main.pending == []
        assert not app.query_one("#pending").display
        assert app.main.state.blocks[-1].kind == "question"


async def test_p_pauses_then_resumes(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:5])
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("p")
        assert read_inbox(tmp_path)[-1] == {"type": "control", "action": "pause"}
        write_events(tmp_path / "events.jsonl", [{"seq": 6, "t": 6, "ts": TS, "type": "control", "action": "pause"}], "a")
        app.main._poll_file()
        assert app.main.display_status() == "paused"
        await pilot.press("p")
        assert read_inbox(tmp_path)[-1] == {"type": "control", "action": "resume"}


async def test_e_evaluate_and_a_auto_toggle(running):
    tiny = running
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("e")
        await pilot.press("a")
        await pilot.press("a")
        assert read_inbox(tiny) == [{"type": "control", "action": "evaluate"},
                                    {"type": "control", "action": "auto_on"},
                                    {"type": "control", "action": "auto_off"}]


async def test_x_asks_to_confirm(running):
    tiny = running
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert read_inbox(tiny) == []
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert read_inbox(tiny) == [{"type": "control", "action": "stop"}]


@pytest.mark.parametrize("mode", ["watch", "replay"])
async def test_help_and_quit(tiny, mode):
    app = watch_app(tiny) if mode == "watch" else replay_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_watch_keys_do_nothing_in_replay(tiny):
    app = replay_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash", "i", "p", "e", "x", "a")
        await pilot.pause()
        assert not (tiny / "inbox.jsonl").exists()
        assert not isinstance(app.screen, (PickerScreen, AskScreen, ConfirmScreen))
        # ... but say why (they did nothing with no hint)
        assert any("read-only" in str(n.message) for n in app._notifications)


async def test_ctrl_c_quits(tiny):
    app = replay_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit  # Textual's own ctrl+c only showed a toast


async def test_copy_selected_block_and_row(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("c")
        assert "campaign end" in app.clipboard
        app.query_one("#table").focus()
        await pilot.press("c")
        assert "r1-c4096" in app.clipboard and "speedup" in app.clipboard


async def test_block_selection_expand_and_copy(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        from socratic.tui.widgets.tool_block import ToolBlock

        tr = app.query_one(Transcript)
        tr.focus()
        await pilot.press("k")  # select the last block
        assert tr.selected_block().has_class("-selected")
        await pilot.press("c")
        assert "campaign end" in app.clipboard
        await pilot.press(*["k"] * 6)  # blocks: start trigger text TOOL eval trigger question ...
        tool = app.query_one(ToolBlock)
        assert tr.selected_block() is tool
        await pilot.press("j", "shift+up")
        assert tr.selected_block() is tool
        await pilot.press("enter")
        assert tool.expanded
        assert "NOTES.md" in str(tool.render())
        await pilot.press("c")
        assert "candidate.cu" in app.clipboard
        await pilot.press("escape", "c")
        assert "campaign end" in app.clipboard  # nothing selected: the last block
        # tab goes from the transcript straight to the table (blocks are not focus stops)
        await pilot.press("tab")
        assert app.focused is app.query_one("#table")


# ---------------------------------------------------------------------------- replay keys


def _sig(s):
    return (s.seq, len(s.blocks), [(r.id, r.speedup) for r in s.rows_in_order()], len(s.evals))


async def test_replay_step_and_jumps(tiny):
    events = tiny_events()
    app = replay_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.main.pos == 0
        await pilot.press("right", "right", "right")
        assert app.main.pos == 3 and _sig(app.main.state) == _sig(fold(events[:3]))
        await pilot.press("left")
        assert app.main.pos == 2 and _sig(app.main.state) == _sig(fold(events[:2]))
        await pilot.press("right_square_bracket")
        assert events[app.main.pos - 1]["type"] == "eval.end" and app.main.state.evals[-1].n == 1
        await pilot.press("right_square_bracket")
        assert app.main.state.evals[-1].n == 2
        await pilot.press("left_square_bracket")
        assert app.main.state.evals[-1].n == 1 and len(app.main.state.evals) == 1
        await pilot.press("home")
        assert app.main.pos == 0
        await pilot.press("right_curly_bracket")
        assert events[app.main.pos - 1]["type"] == "question"
        q = app.main.pos
        await pilot.press("end")
        assert app.main.pos == len(events) and app.main.state.status == "ended"
        await pilot.press("left_curly_bracket")
        assert app.main.pos == q
        # the screen is the state of the prefix
        assert _sig(app.main.state) == _sig(fold(events[:q]))
        header = str(app.query_one("#evalhead").render())
        assert "eval #1" in header


async def test_replay_space_plays_with_clock_and_speed(tiny):
    clock = Clock()
    app = replay_app(tiny, clock=clock, speed=1)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.main.speed == 1
        await pilot.press("plus")
        assert app.main.speed == 2
        await pilot.press("minus", "minus")
        assert app.main.speed == 1
        for _ in range(20):
            await pilot.press("plus")
        assert app.main.speed == SPEEDS[-1]
        await pilot.press("minus")
        await pilot.press("space")
        assert app.main.playing
        clock.t += 0.5  # x500: the 18 s campaign plays out
        app.main._tick()
        await pilot.pause()
        assert app.main.pos == len(tiny_events()) and not app.main.playing
        await pilot.press("space")  # at the end: space restarts from the start
        assert app.main.playing and app.main.pos <= 1  # restarted (the t=0 event may already show)
        await pilot.press("space")
        assert not app.main.playing


async def test_replay_caps_idle_gaps(tmp_path):
    evs = tiny_events()[:3]
    evs[2]["t"] = 86_400.0  # a day of nothing
    write_events(tmp_path / "events.jsonl", evs)
    clock = Clock()
    app = replay_app(tmp_path, clock=clock, speed=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("space")
        for _ in range(30):
            clock.t += 0.1
            app.main._tick()
        assert app.main.pos == 3


async def test_replay_end_on_large_session_windowed(tmp_path):
    session, events = make_session(tmp_path, n_events=3000)
    app = replay_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        tr = app.query_one(Transcript)
        first, end = tr.mounted_range
        assert end == len(app.main.state.blocks) and first > 0
        assert end - first <= 200
        # earlier blocks stay reachable
        await pilot.press("tab")
        tr.focus()
        await pilot.press("u")
        await pilot.pause()
        assert tr.mounted_range[0] < first


# ---------------------------------------------------------------------------- follow / prune


async def test_follow_but_never_snap_back(tmp_path):
    session, events = make_session(tmp_path, n_events=1500, end=False)
    path = session / "events.jsonl"
    write_events(path, events[:1000])
    app = watch_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        tr = app.query_one(Transcript)
        assert tr.following
        tr.scroll_to(y=0, animate=False, immediate=True)  # the user reads further up
        await pilot.pause()
        y = tr.scroll_y
        write_events(path, events[1000:1100], "a")
        app.main._poll_file()
        await pilot.pause()
        assert not tr.following and tr.scroll_y <= y + 1
        tr.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        write_events(path, events[1100:1200], "a")
        app.main._poll_file()
        await pilot.pause()
        await pilot.pause()
        assert tr.scroll_y >= tr.max_scroll_y - 1


async def test_table_updates_only_changed_cells(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one("#table")
        assert table.show(app.main.state) == 0
        await pilot.press("tab")
        table.focus()
        assert table.sort_mode == "goal"
        await pilot.press("s")
        assert table.sort_mode == "order"
        await pilot.press("s")
        assert table.sort_mode == "worst"
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == ["r4096-c8192", "r1-c4096"]  # 1.10× before 1.25×


async def test_controls_on_an_ended_campaign_write_nothing(tiny):
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("p", "e", "a", "x")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert read_inbox(tiny) == []


async def test_question_to_an_ended_campaign_says_when_it_is_asked(tmp_path):
    for name, events, word in (("ended", tiny_events(), "--resume"),
                               ("running", tiny_events()[:-1], "question sent")):
        session = tmp_path / name
        session.mkdir()
        write_events(session / "events.jsonl", events)
        app = watch_app(session)
        notes = []
        app.notify = lambda message, notes=notes, **kw: notes.append(message)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.main.ask("Which bound applies?")
            await pilot.pause()
        assert read_inbox(session) == [{"type": "question", "text": "Which bound applies?"}]
        assert word in notes[-1]


@pytest.mark.slow
@pytest.mark.timeout(240)  # a hang guard, not a speed target: 6000 events take ~35-55 s on 2 busy CPUs
async def test_following_prunes_old_blocks_and_keeps_them_reachable(tmp_path):
    from socratic.tui.widgets.transcript import MAX_MOUNTED

    session, events = make_session(tmp_path, n_events=6000, end=False)
    path = session / "events.jsonl"
    write_events(path, events[:200])
    app = watch_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        for i in range(200, 6000, 400):
            write_events(path, events[i:i + 400], "a")
            app.main._poll_file()
            await pilot.pause()
        tr = app.query_one(Transcript)
        first, end = tr.mounted_range
        assert end == len(app.main.state.blocks) and end - first <= MAX_MOUNTED
        assert first > 0
        tr.focus()
        while tr.mounted_range[0] > 0:
            before = tr.mounted_range[0]
            await pilot.press("u")
            await pilot.pause()
            assert tr.mounted_range[0] < before
        assert tr.mounted_range == (0, len(app.main.state.blocks))


async def test_no_color_keeps_words_and_symbols(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    write_events(tmp_path / "events.jsonl", tiny_events())
    app = SocraticApp(tmp_path, "replay", autoplay=False, start=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await pilot.press("right_square_bracket")
        await pilot.pause()
        table = app.query_one("#table")
        assert str(table.get_cell("r4096-c8192", "verdict")) == "✗ FAIL"
        assert str(table.get_cell("r1-c4096", "verdict")) == "▼ slow"
        assert "INCORRECT" in str(app.query_one("#evalhead").render())


async def test_live_text_streams_into_markdown(running):
    from socratic.tui.widgets.streaming_text import StreamingText

    path = running / "events.jsonl"
    app = watch_app(running)
    async with app.run_test(size=(100, 30)) as pilot:
        chunks = ["Looking at **the** loop", ":\n\n- first point", "\n- second point", "\n\nDone."]
        for i, chunk in enumerate(chunks):
            write_events(path, [{"seq": 100 + i, "t": 100.0 + i, "ts": TS, "type": "agent.text", "text": chunk}], "a")
            app.main._poll_file()
            await pilot.pause()
        await pilot.pause(0.2)
        live = list(app.query(StreamingText))
        assert live and live[-1].block.text == "".join(chunks)
        assert live[-1].source == "".join(chunks)
        bullets = [str(w.render()) for w in live[-1].query("MarkdownBullet")]
        assert len(bullets) == 2


async def test_watch_end_key_scrolls_the_transcript(tmp_path):
    session, events = make_session(tmp_path, n_events=800)
    app = watch_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        tr = app.query_one(Transcript)
        tr.focus()
        first = tr.mounted_range[0]
        await pilot.press("home")
        await pilot.pause()
        # at the top: the transcript loaded earlier blocks and kept the reading place
        assert tr.mounted_range[0] < first and tr.scroll_y < tr.max_scroll_y - 10
        await pilot.press("end")
        await pilot.pause()
        assert tr.scroll_y >= tr.max_scroll_y - 1


async def test_rows_missing_the_goal_come_first(tmp_path):
    evs = tiny_events()
    start = evs[0]
    rows = [dict(evs[14]), dict(evs[15], speedup=0.8, candidate_ms=0.0625)]
    write_events(tmp_path / "events.jsonl",
                 stamped([start, {"type": "eval.start", "n": 1, "candidate_sha": "x"}] + rows))
    app = replay_app(tmp_path, start="end")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        table = app.query_one("#table")
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == ["r4096-c8192", "r1-c4096"]
        assert str(table.get_cell("r4096-c8192", "verdict")) == "▼ slow"
        await pilot.press("home")  # before any evaluation: scenario order
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == []  # before campaign.start there are no rows
        await pilot.press("right")
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == ["r1-c4096", "r4096-c8192"]


async def test_copy_of_a_tool_block_uses_its_blob(tmp_path):
    evs = tiny_events()[:7]
    evs[6] = dict(evs[6], output="head\n[... full text in blob]", blob="blobs/t1.txt")
    write_events(tmp_path / "events.jsonl", evs)
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "t1.txt").write_text("the whole output")
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        from socratic.tui.widgets.tool_block import ToolBlock

        tr = app.query_one(Transcript)
        tr.select(tr._widgets.index(app.query_one(ToolBlock)))
        tr.focus()
        await pilot.press("c")
        assert app.clipboard == "the whole output"


async def test_header_click_sorts_numerically(tmp_path):
    from textual.widgets import DataTable

    evs = stamped(tiny_events()[:2] + [
        {"type": "eval.start", "n": 1, "candidate_sha": "x"},
        {"type": "eval.scenario", "n": 1, "scenario": "r1-c4096", "correct": True, "speedup": 10.0},
        {"type": "eval.scenario", "n": 1, "scenario": "r4096-c8192", "correct": True, "speedup": 9.0},
    ])
    write_events(tmp_path / "events.jsonl", evs)
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one("#table")
        col = table.columns["spd"]
        table.post_message(DataTable.HeaderSelected(table, col.key, 2, col.label))
        await pilot.pause()
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == ["r1-c4096", "r4096-c8192"]  # 10.0 before 9.0: numeric, descending
        table.post_message(DataTable.HeaderSelected(table, col.key, 2, col.label))
        await pilot.pause()
        keys = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(table.row_count)]
        assert keys == ["r4096-c8192", "r1-c4096"]


async def test_new_blocks_wait_below_while_reading(tmp_path):
    session, events = make_session(tmp_path, n_events=1200, end=False)
    path = session / "events.jsonl"
    write_events(path, events[:800])
    app = watch_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        tr = app.query_one(Transcript)
        tr.focus()
        await pilot.press("pageup")
        await pilot.pause()
        assert not tr.following
        y, mounted = tr.scroll_y, tr.mounted_range
        write_events(path, events[800:1000], "a")
        app.main._poll_file()
        await pilot.pause()
        assert tr.scroll_y == y and tr.mounted_range == mounted  # nothing moved
        below = app.query_one("NewBelowMarker")
        assert below.display and "new blocks below" in str(below.render())
        await pilot.press("end")
        await pilot.pause()
        await pilot.pause()
        assert tr.following and tr.mounted_range[1] == len(app.main.state.blocks)
        assert not below.display
        assert tr.scroll_y >= tr.max_scroll_y - 1


async def test_bundled_demo_replays():
    from socratic.resources import demo_session_dir

    demo = demo_session_dir()
    if not (demo / "events.jsonl").is_file():
        pytest.skip("the demo campaign is not bundled yet")
    app = replay_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        s = app.main.state
        assert s.status == "ended" and len(s.evals) >= 6 and s.n_ignored == 0
        assert app.query_one("#table").row_count >= 1
        await pilot.press("home", "right_curly_bracket")
        assert app.main.state.questions
        await pilot.press("right_square_bracket")
        assert app.main.state.evals


async def test_picker_groups_in_bank_list_order(tiny):
    from socratic.bank.model import GROUPS

    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        picker = app.screen.query_one(QuestionPicker)
        grouped = [e.group for e in picker.shown[len(picker.suggestions):]]
        assert grouped == sorted(grouped, key=GROUPS.index)   # as `socratic bank list`
        assert set(grouped) == {e.group for e in FakeBank().entries}


@pytest.mark.parametrize("mode", ["watch", "replay"])
async def test_timers_firing_during_shutdown_do_nothing(tiny, mode):
    # the screens (and their widgets) go before the app's timers stop: a tick in between
    # must not query a widget that is gone (a traceback on ctrl+q)
    app = watch_app(tiny) if mode == "watch" else replay_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main._periodic
    for tick in app.main._periodic:
        tick()


# ---------------------------------------------------------------------------- issue 10


def status_text(app) -> str:
    return str(app.query_one("#status").render())


async def test_api_retries_show_in_the_status_line_and_the_clock_runs_on(tmp_path):
    # item 2: with the API down, the status line says RETRYING with the attempt, the
    # error and the next try; campaign time goes on (it reset to 00:00 on every retry)
    evs = tiny_events()[:3]  # started, a trigger; then the API fails again and again
    write_events(tmp_path / "events.jsonl", evs)
    clock = Clock()
    app = watch_app(tmp_path, clock=clock)
    async with app.run_test(size=(160, 45)) as pilot:
        clock.t += 100
        write_events(tmp_path / "events.jsonl", [
            {"seq": 4, "t": 95.0, "ts": TS, "type": "api.retry", "attempt": 3,
             "error": "Error code: 529 overloaded_error", "wait_s": 8.0}], "a")
        app.main._poll_file()
        clock.t += 3
        app.main._refresh_status()
        await pilot.pause()
        line = status_text(app)
        assert "RETRYING" in line and "attempt 3: 529 overloaded_error" in line
        assert "next try in 5.0 s" in line
        assert "campaign 01:38" in line  # 95 s logged + 3 s since: never back to 00:00
        write_events(tmp_path / "events.jsonl", [
            {"seq": 5, "t": 104.0, "ts": TS, "type": "usage", "input_tokens": 5,
             "output_tokens": 1, "cache_read": 0, "cache_write": 0, "cost_usd": 0.0}], "a")
        app.main._poll_file()
        await pilot.pause()
        assert "RUNNING" in status_text(app) and "attempt" not in status_text(app)


async def test_paused_campaign_time_runs_on_labelled(tmp_path):
    # item 11: pausing froze the clock, which jumped on resume
    write_events(tmp_path / "events.jsonl", tiny_events()[:5] + [
        {"seq": 6, "t": 6.0, "ts": TS, "type": "control", "action": "pause"}])
    clock = Clock()
    app = watch_app(tmp_path, clock=clock)
    async with app.run_test(size=(160, 45)) as pilot:
        clock.t += 30
        app.main._refresh_status()
        await pilot.pause()
        assert app.main.elapsed() == 36.0
        assert "PAUSED" in status_text(app) and "campaign 00:36" in status_text(app)


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_footer_and_status_line_agree_on_auto_questions(running, size):
    # item 12: the footer said `a auto on` (an action) while the status said `auto off`
    app = watch_app(running)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        keys = str(app.query_one("#keys").render())
        assert app.main.state.auto is False
        assert "auto: off" in keys and "auto:off" in status_text(app).replace(" ", "")
        await pilot.press("a")
        await pilot.pause()
        keys = str(app.query_one("#keys").render())
        assert "auto: off→on" in keys and "off→on" in status_text(app)
        write_events(running / "events.jsonl", [
            {"seq": 30, "t": 30.0, "ts": TS, "type": "control", "action": "auto_on"}], "a")
        app.main._poll_file()
        await pilot.pause()
        keys = str(app.query_one("#keys").render())
        assert "auto: on" in keys and "auto:on" in status_text(app).replace(" ", "")


ATTN_IDS = ["d128-q512-k8k-b4-h32-causal-gqa4", "d128-s1k-b16-h16-full"]


def attention_events() -> list[dict]:
    """tiny_events with attention-length scenario ids (32 characters)."""
    names = {"r1-c4096": ATTN_IDS[0], "r4096-c8192": ATTN_IDS[1]}
    evs = []
    for ev in tiny_events():
        ev = dict(ev)
        if ev["type"] == "campaign.start":
            ev["scenarios"] = {"set": "bench", "ids": ATTN_IDS}
        if "scenario" in ev:
            ev["scenario"] = names[ev["scenario"]]
        evs.append(ev)
    return evs


def table_columns_visible(app) -> list[str]:
    """Header labels whose whole column lies inside the table's region on screen."""
    table = app.query_one("#table")
    x, shown = 0, []
    for col in table.columns.values():
        w = col.get_render_width(table)
        if x + w <= table.scrollable_content_region.width:
            shown.append(str(col.label))
        x += w
    return shown


@pytest.mark.parametrize("events", [tiny_events, attention_events], ids=["rmsnorm", "attn"])
async def test_every_table_column_is_visible_at_160_columns(tmp_path, events):
    # item 5: side by side at 160 columns the table stopped at `TF/`
    write_events(tmp_path / "events.jsonl", events())
    app = replay_app(tmp_path, start="end")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        table = app.query_one("#table")
        assert table_columns_visible(app) == [str(c.label) for c in table.columns.values()]
        assert table.region.width >= table.needed_width
        # the summary above the table is not cut either: it takes a second line if needed
        head = app.query_one("#evalhead")
        text = head.render()
        assert "best 1.17×" in text.plain
        assert text.cell_length <= head.content_region.width * head.content_region.height


@pytest.mark.parametrize("mode", ["watch", "replay"])
async def test_keys_scroll_the_table_sideways_at_any_width(tmp_path, mode):
    # item 5: in replay ←→ step through events, so the table had no way sideways
    write_events(tmp_path / "events.jsonl", attention_events())
    app = watch_app(tmp_path) if mode == "watch" else replay_app(tmp_path, start="end")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.query_one("#table")
        assert "bound" not in table_columns_visible(app)
        assert table.scroll_x == 0
        for _ in range(8):
            await pilot.press("greater_than_sign")
        await pilot.pause()
        assert table.scroll_x == table.max_scroll_x > 0
        # the ok and scenario columns stay while the rest scrolls
        assert table.fixed_columns == 2
        await pilot.press("less_than_sign")
        assert table.scroll_x < table.max_scroll_x


async def test_s_sorts_from_anywhere_through_every_order(tiny):
    # item 6: `s` did nothing unless the table had focus; help listed three of four orders
    from socratic.tui.help_screen import COMMON_KEYS
    from socratic.tui.widgets.scenario_table import SORT_LABELS
    from tests.test_tui_support import ROOT

    app = replay_app(tiny, start="end")
    notes = []
    app.notify = lambda message, **kw: notes.append(message)
    async with app.run_test(size=(100, 30)) as pilot:
        app.query_one(Transcript).focus()
        table = app.query_one("#table")
        seen = [table.sort_mode]
        for _ in range(4):
            await pilot.press("s")
            seen.append(table.sort_mode)
        assert seen == ["goal", "order", "worst", "best", "goal"]
        assert notes[:4] == ["scenarios sorted: scenario order", "scenarios sorted: worst first",
                             "scenarios sorted: best first", "scenarios sorted: misses first"]
    help_s = dict(COMMON_KEYS)["s"]
    readme = (ROOT / "README.md").read_text()
    for label in SORT_LABELS.values():
        assert label in help_s and label in readme


async def test_u_with_every_block_loaded_goes_to_the_top(tmp_path):
    # item 7: `u` did nothing once every block was mounted
    write_events(tmp_path / "events.jsonl", tiny_events())
    app = replay_app(tmp_path, start="end")
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        tr = app.query_one(Transcript)
        assert tr.mounted_range[0] == 0 and tr.max_scroll_y > 0
        tr.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert tr.scroll_y > 0
        app.query_one("#table").focus()  # from anywhere
        await pilot.press("u")
        await pilot.pause()
        assert tr.scroll_y == 0


@pytest.mark.parametrize("mode", ["watch", "replay"])
async def test_footer_keeps_quit_and_help_reaches_quit_at_80x24(running, mode):
    # item 8: at 80x24 the footer hid `^q quit` and help needed scrolling to reach it
    app = watch_app(running) if mode == "watch" else replay_app(running, start="end")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        keys = app.query_one("#keys")
        text = keys.render()
        assert text.cell_length <= keys.size.width
        assert "^q quit" in text.plain and "? help" in text.plain
        await pilot.press("question_mark")
        await pilot.pause()
        body = app.screen.query_one("#help-body")
        quit_line = app.screen.query_one("#help-quit")
        assert "ctrl+q" in str(quit_line.render()) and body.scroll_y == 0
        assert body.content_region.contains_region(quit_line.region)


async def test_selected_block_stands_out_in_256_colours(tiny):
    # item 9: the selection was background 234 on 233 in tmux-256color
    from rich.color import EIGHT_BIT_PALETTE, ColorSystem
    from rich.color import Color as RichColor

    def colour256(c):
        n = RichColor.from_rgb(c.r, c.g, c.b).downgrade(ColorSystem.EIGHT_BIT).number
        return n, EIGHT_BIT_PALETTE[n]

    app = replay_app(tiny, start="end")
    async with app.run_test(size=(100, 30)) as pilot:
        tr = app.query_one(Transcript)
        tr.focus()
        await pilot.press("k", "k")
        await pilot.pause()
        sel = tr.selected_block()
        other = tr._widgets[0]
        (n_sel, rgb_sel), (n_other, rgb_other) = (colour256(sel.background_colors[1]),
                                                  colour256(other.background_colors[1]))
        assert n_sel != n_other
        assert sum(abs(a - b) for a, b in zip(rgb_sel, rgb_other, strict=True)) >= 90
        # and a bar beside it that needs no colour at all
        assert sel.styles.border_left[0] not in ("", "none", "hidden")
        assert other.styles.border_left[0] in ("", "none", "hidden")
        assert sel.content_region.x == other.content_region.x  # the text does not move


async def test_expanding_a_tool_call_keeps_its_header_on_screen(tmp_path):
    # item 9: expanding a tool call at the bottom scrolled its header off screen
    from socratic.tui.widgets.tool_block import ToolBlock

    evs = tiny_events()[:7]
    evs[6] = dict(evs[6], output="\n".join(f"line {i}" for i in range(60)))
    write_events(tmp_path / "events.jsonl", evs)
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        tr = app.query_one(Transcript)
        tool = app.query_one(ToolBlock)
        tr.focus()
        await pilot.press("k")
        assert tr.selected_block() is tool
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert tool.expanded and tool.region.height > 20
        view = tr.content_region
        assert view.y <= tool.region.y < view.bottom  # the header line is visible


async def test_questions_injected_from_another_shell_show_as_pending(running):
    # item 10: only the TUI's own questions showed as pending
    from socratic.eventlog import inject

    app = watch_app(running)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main.pending == []
        # `socratic inject SESSION --text ...` from another shell appends to the inbox
        inject(running, AskCommand(text="Which bound applies?"))
        inject(running, AskCommand(text="Which bound applies?"))
        inject(running, ControlCommand(action="evaluate"))
        app.main._poll_inbox()  # what the file watcher (or the 2 s poll) calls
        await pilot.pause()
        assert [p["text"] for p in app.main.pending] == ["Which bound applies?"] * 2
        bar = app.query_one("#pending")
        assert bar.display and "in the inbox" in str(bar.render())
        assert "2 pending" in status_text(app)
        # the harness logs one of the two: one stays pending
        write_events(running / "events.jsonl", [
            {"seq": 40, "t": 40.0, "ts": TS, "type": "question", "text": "Which bound applies?",
             "source": "human"}], "a")
        app.main._poll_file()
        await pilot.pause()
        assert len(app.main.pending) == 1 and "1 pending" in status_text(app)


async def test_questions_already_logged_are_not_pending_after_a_restart(tmp_path):
    # a TUI started after the harness took the inbox's questions shows nothing pending
    from socratic.eventlog import inject

    inject(tmp_path, AskCommand(text="mask?"))
    write_events(tmp_path / "events.jsonl", tiny_events()[:8] + [
        {"seq": 9, "t": 9.0, "ts": TS, "type": "question", "text": "mask?", "source": "human"}])
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main.pending == [] and not app.query_one("#pending").display


async def test_picker_never_highlights_an_asked_question(tiny):
    # item 13: the asked suggestion on top was highlighted: a bare Enter repeated it
    app = watch_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        picker = app.screen.query_one(QuestionPicker)
        assert picker.shown[0].id == "correctness.masking"  # asked, still listed first
        assert picker.highlighted_entry().id not in app.main.state.asked
        await pilot.press(*"masking")  # a filter that matches only the asked one
        await pilot.pause()
        assert picker.highlighted_entry() is None
        await pilot.press("enter")
        await pilot.pause()
        assert read_inbox(tiny) == []  # nothing repeated
        await pilot.press("down", "enter")  # chosen on purpose, it is asked again
        await pilot.pause()
        assert read_inbox(tiny)[0]["bank_id"] == "correctness.masking"


async def test_question_while_waiting_carries_the_declared_done_trigger(tmp_path):
    # item 13: a question asked while the harness waited after the stop attempts was
    # logged with `trigger: null`
    evs = tiny_events()[:8] + [
        {"seq": 9, "t": 9.0, "ts": TS, "type": "stophook", "met": False, "failing": []},
        {"seq": 10, "t": 10.0, "ts": TS, "type": "trigger", "kind": "declared_done", "reason": "stop",
         "suggestions": []},
        {"seq": 11, "t": 11.0, "ts": TS, "type": "control", "action": "wait",
         "reason": "repeated stop attempts; waiting for a question"}]
    write_events(tmp_path / "events.jsonl", evs)
    app = watch_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.main.state.status == "waiting"
        await pilot.press("i", *"what limits you?", "enter")
        await pilot.pause()
        assert read_inbox(tmp_path) == [{"type": "question", "text": "what limits you?",
                                         "trigger": "declared_done"}]
        write_events(tmp_path / "events.jsonl", [
            {"seq": 12, "t": 12.0, "ts": TS, "type": "question", "text": "what limits you?",
             "trigger": "declared_done", "source": "human"}], "a")
        app.main._poll_file()
        await pilot.pause()
        # running again: the next question carries no trigger
        await pilot.press("i", *"and now?", "enter")
        await pilot.pause()
        assert read_inbox(tmp_path)[-1] == {"type": "question", "text": "and now?"}


@pytest.mark.parametrize("content", [b"", b"\x00\x01\xff binary\n"], ids=["empty", "binary"])
@pytest.mark.parametrize("mode", ["watch", "replay"])
async def test_a_log_without_events_says_so_on_screen(tmp_path, content, mode):
    # item 14: an empty or binary events.jsonl showed a blank screen
    (tmp_path / "events.jsonl").write_bytes(content)
    app = watch_app(tmp_path) if mode == "watch" else replay_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        note = str(app.query_one("#transcript-note").render())
        assert "events.jsonl" in note
        if content:
            assert "1 line skipped" in note and "not JSON" in note
        else:
            assert "empty" in note


async def test_collapsed_tool_call_summarizes_its_output(tmp_path):
    # item 18: `→ ]` (the output's last line) said nothing
    from socratic.tui.widgets.tool_block import ToolBlock

    evs = tiny_events()[:7]
    evs[6] = dict(evs[6], output='{\n  "rows": [1, 2]\n}\n\n[exit code 0]')
    write_events(tmp_path / "events.jsonl", evs)
    app = replay_app(tmp_path, start="end")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        line = str(app.query_one(ToolBlock).render())
        assert '→ exit 0 · 3 lines · 20 B · "rows": [1, 2]' in line
        assert "→ }" not in line


async def test_table_cells_always_leave_a_gap(tmp_path):
    # narrow columns without cell padding: each value must be shorter than its column
    from socratic.tui.widgets.scenario_table import COLUMNS

    evs = tiny_events()[:11]
    evs[9] = dict(evs[9], err=0.5, err_baseline=0.002, tflops=1234.5, candidate_ms=123.4,
                  baseline_ms=1234.5, bound_fraction=1.0)  # err× 250, the widest values
    write_events(tmp_path / "events.jsonl", evs)
    app = replay_app(tmp_path, start="end")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        table = app.query_one("#table")
        for key, _, width, _right in COLUMNS:
            if width is None:
                continue
            for row_key in table.rows:
                cell = table.get_cell(row_key, key)
                assert len(str(cell)) < width, (key, str(cell))


async def test_a_goal_against_fa3_gets_its_own_column_and_sorts():
    """The H200 campaign's goal is against FA3: each row shows its speedup against FA3 beside
    the one against the baseline, and the worst-first sort is on FA3's terms."""
    from pathlib import Path

    from socratic.resources import resolve_session_dir
    from socratic.tui.widgets.scenario_table import COLUMNS
    app = replay_app(resolve_session_dir(Path("fa3-h200")))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("end")
        # back to the last evaluation on the bench set (the campaign ends on full-set runs)
        for _ in range(20):
            if app.main.state.table_set == app.main.state.goal_set:
                break
            await pilot.press("left_square_bracket")
        await pilot.pause()
        table = app.query_one("#table")
        labels = [c.label.plain for c in table.columns.values()]
        assert labels[:4] == ["ok", "scenario", "speedup", "vs fa3"]
        assert len(labels) == len(COLUMNS) + 1
        # the full set's rows are correctness only (no times): "-"
        rows = {s: r for s, r in app.main.state.rows.items() if r.goal_speedup("fa3") is not None}
        assert len(rows) >= 26
        for sid, row in app.main.state.rows.items():
            cell = table.get_cell(sid, "goal").plain
            # below the goal (1.0x FA3) a value never rounds onto it (issue 43): 0.997 reads 0.99×
            v = row.goal_speedup("fa3")
            want = "-" if sid not in rows else f"{math.floor(v * 100) / 100 if v < 1 <= round(v, 2) else v:.2f}×"
            assert cell == want, (sid, cell)
        table.focus()
        while table.sort_mode != "best":
            await pilot.press("s")
        shown = [str(table.coordinate_to_cell_key((i, 0))[0].value) for i in range(len(rows))]
        assert shown == sorted(rows, key=lambda s: -rows[s].goal_speedup("fa3"))
        # the order against FA3 is not the order against the baseline: the sort is on the goal
        assert shown != sorted(rows, key=lambda s: -rows[s].speedup)
        # seeking back before campaign.start: no goal yet, the baseline's columns again
        await pilot.press("home")
        await pilot.pause()
        assert [c.label.plain for c in table.columns.values()] == [c[1] for c in COLUMNS]


async def test_the_report_hint_names_a_bundled_campaign_by_its_name():
    # it printed the site-packages path of the bundled campaign
    from socratic.resources import resolve_session_dir
    from socratic.tui.report_screen import ReportScreen

    app = replay_app(resolve_session_dir(Path("demo")))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ReportScreen)
        hint = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "socratic report demo --html FILE" in hint, hint
