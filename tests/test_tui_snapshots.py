"""Snapshot tests (pytest-textual-snapshot) at 80x24, 100x30 and 160x45 with frozen clocks.

The SVGs were made with Textual 8.2.8 (pinned in pyproject): a different Textual
release redraws some glyphs and fails these for that reason alone. Update them with
`python3 -m pytest tests/test_tui_snapshots.py --snapshot-update` and look at the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from socratic.contracts import AskCommand
from socratic.tui.app import SocraticApp
from tests.test_tui_support import FakeBank, make_session, tiny_events, write_events

TS = "2026-11-01T08:01:35.000+00:00"  # the envelope every event carries

pytestmark = pytest.mark.timeout(120)


class Clock:
    def __call__(self) -> float:
        return 1000.0


@pytest.fixture
def tiny(tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events())
    return tmp_path


def replay(session, start="end"):
    return SocraticApp(session, "replay", clock=Clock(), autoplay=False, start=start)


def watch(session):
    return SocraticApp(session, "watch", clock=Clock(), watch_files=False, bank=FakeBank())


def test_replay_end_100x30(snap_compare, tiny):
    assert snap_compare(replay(tiny), terminal_size=(100, 30))


def test_replay_end_80x24(snap_compare, tiny):
    assert snap_compare(replay(tiny), terminal_size=(80, 24))


def test_replay_first_eval_100x30(snap_compare, tiny):
    # the failing first evaluation: FAIL rows and the incorrect eval stand out in words
    assert snap_compare(replay(tiny, start=0), terminal_size=(100, 30),
                        press=["right_square_bracket"])


def test_replay_wide_160x40(snap_compare, tiny):
    assert snap_compare(replay(tiny), terminal_size=(160, 40))


def test_watch_picker_100x30(snap_compare, tiny):
    assert snap_compare(watch(tiny), terminal_size=(100, 30), press=["slash", *"tim"])


def test_help_80x24(snap_compare, tiny):
    assert snap_compare(watch(tiny), terminal_size=(80, 24), press=["question_mark"])


def test_long_campaign_end_100x30(snap_compare, tmp_path):
    session, _ = make_session(tmp_path, n_events=2000, seed=7)
    assert snap_compare(replay(session), terminal_size=(100, 30))


# ---------------------------------------------------------------------------- issue 10


def test_replay_end_160x45(snap_compare, tiny):
    # every table column beside the transcript; plot legend; campaign time labelled
    assert snap_compare(replay(tiny), terminal_size=(160, 45))


def test_replay_attention_ids_160x45(snap_compare, tmp_path):
    # 32-character scenario ids: the table's pane widens so that every column shows
    from tests.test_tui_app import attention_events

    write_events(tmp_path / "events.jsonl", attention_events())
    assert snap_compare(replay(tmp_path), terminal_size=(160, 45))


def test_replay_table_scrolled_80x24(snap_compare, tmp_path):
    # > scrolls the table sideways; ok and scenario stay
    from tests.test_tui_app import attention_events

    write_events(tmp_path / "events.jsonl", attention_events())
    assert snap_compare(replay(tmp_path), terminal_size=(80, 24),
                        press=["greater_than_sign"] * 4)


def test_watch_waiting_with_inbox_question_80x24(snap_compare, tmp_path):
    # a question from another shell is pending; footer keeps ? help and ^q quit
    from socratic.eventlog import inject

    write_events(tmp_path / "events.jsonl", tiny_events()[:8] + [
        {"seq": 9, "t": 9.0, "ts": TS, "type": "control", "action": "wait",
         "reason": "repeated stop attempts; waiting for a question"}])
    inject(tmp_path, AskCommand(text="Which bound applies to r1-c4096?"))
    assert snap_compare(watch(tmp_path), terminal_size=(80, 24))


def test_watch_retrying_160x45(snap_compare, tmp_path):
    write_events(tmp_path / "events.jsonl", tiny_events()[:8] + [
        {"seq": 9, "t": 95.0, "ts": TS, "type": "api.retry", "attempt": 4,
         "error": "Error code: 529 overloaded_error", "wait_s": 16.0}])
    assert snap_compare(watch(tmp_path), terminal_size=(160, 45))


def test_selected_tool_call_expanded_160x45(snap_compare, tmp_path):
    evs = tiny_events()[:7]
    evs[6] = dict(evs[6], output="\n".join(f"line {i}" for i in range(60)) + "\n[exit code 0]")
    write_events(tmp_path / "events.jsonl", evs)
    assert snap_compare(watch(tmp_path), terminal_size=(160, 45), press=["k", "enter"])


def test_help_replay_80x24(snap_compare, tiny):
    assert snap_compare(replay(tiny), terminal_size=(80, 24), press=["question_mark"])


def test_empty_log_80x24(snap_compare, tmp_path, monkeypatch):
    (tmp_path / "events.jsonl").write_bytes(b"")
    monkeypatch.chdir(tmp_path)  # the note names the file: the same path every run
    assert snap_compare(replay(Path(".")), terminal_size=(80, 24))
