"""Snapshot tests (pytest-textual-snapshot) at 100x30 and 80x24 with frozen clocks.

The SVGs were made with Textual 8.2.8 (pinned in pyproject): a different Textual
release redraws some glyphs and fails these for that reason alone. Update them with
`python3 -m pytest tests/test_tui_snapshots.py --snapshot-update` and look at the diff.
"""

from __future__ import annotations

import pytest

from tests.test_tui_support import FakeBank, make_session, tiny_events, write_events
from socratic.tui.app import SocraticApp

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
