"""The TUI's report key: `r` opens the session's report summary (socratic report), computed
off the UI thread; Escape closes it."""

from __future__ import annotations

import shutil

import pytest

from socratic.resources import demo_session_dir
from socratic.tui.app import SocraticApp
from socratic.tui.report_screen import ReportScreen

pytestmark = pytest.mark.timeout(60)


async def _open_report(app, pilot) -> str:
    await pilot.press("r")
    await pilot.pause()
    assert isinstance(app.screen, ReportScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return str(app.screen.query_one("#report-text").render())


async def test_r_shows_the_report_summary(tmp_path):
    session = tmp_path / "demo"
    shutil.copytree(demo_session_dir(), session)
    app = SocraticApp(session, "replay", autoplay=False)
    async with app.run_test(size=(120, 40)) as pilot:
        text = await _open_report(app, pilot)
        assert "6 evaluations (5 correct, 1 incorrect)" in text
        assert "questions 8 (auto 5, human 3)" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ReportScreen)


async def test_r_on_a_log_without_a_campaign_says_so(tmp_path):
    (tmp_path / "events.jsonl").write_text(
        '{"seq":1,"t":0,"ts":"2026-12-01T00:00:00+00:00","type":"agent.text","text":"hi"}\n')
    app = SocraticApp(tmp_path, "replay", autoplay=False)
    async with app.run_test(size=(120, 40)) as pilot:
        text = await _open_report(app, pilot)
        assert text.startswith("no report yet:") and "campaign.start" in text
