"""The TUI's coverage key: `v` shows the last space evaluation's coverage (per hidden field
and cell, geomean and min against the baseline and each comparison), the worst cells
first; a session without one says how to make one; Escape closes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from socratic.resources import demo_session_dir
from socratic.tui.app import SocraticApp
from socratic.tui.coverage_screen import CoverageScreen
from socratic_doubles.testing import FAKE_EVALUATOR

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "// k\n// speedup: 2.0\n// vs-fa3: 1.1\n// slow[head_dim == 96]: 0.5\n// slow[causal == 1]: 0.9\n"


def space_session(root: Path) -> Path:
    """A campaign log holding one space evaluation (the fake evaluator's result)."""
    sess = root / "s"
    (sess / "evals").mkdir(parents=True)
    cand = root / "k.cu"
    cand.write_text(KERNEL)
    out = subprocess.run([*FAKE_EVALUATOR, str(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"), "--candidate",
                          str(cand), "--space", "30", "--seed", "8", "--json"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    (sess / "evals" / "0001.json").write_text(out)
    doc = json.loads(out)
    head = {"ts": "2026-12-01T00:00:00+00:00"}
    events = [
        {"seq": 1, "t": 0.0, "type": "campaign.start", "task": "flash_attn_fwd", "model": "m",
         "goal": {"min_speedup": 1.0, "against": "fa3", "hidden": True},
         "scenarios": {"set": "bench", "ids": []}, "gpu": None, "host": "h", "versions": {}},
        {"seq": 2, "t": 1.0, "type": "eval.start", "n": 1, "candidate_sha": doc["candidate"]["sha256"],
         "set": "space:30@8"},
        {"seq": 3, "t": 2.0, "type": "eval.end", "n": 1, "set": "space:30@8", "result": "evals/0001.json",
         "candidate_sha": doc["candidate"]["sha256"], "summary": doc["summary"]},
    ]
    (sess / "events.jsonl").write_text("".join(json.dumps({**head, **e}) + "\n" for e in events))
    return sess


async def _open(app, pilot) -> CoverageScreen:
    await pilot.press("v")
    await pilot.pause()
    assert isinstance(app.screen, CoverageScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen


async def test_v_shows_the_coverage_worst_cells_first(tmp_path):
    app = SocraticApp(space_session(tmp_path), "replay", autoplay=False)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(app, pilot)
        head = str(screen.query_one("#coverage-head").render())
        assert "evaluation #1 (space:30@8): 30 scenarios drawn (seed 8), 30/30 correct" in head
        table = screen.query_one("#coverage-table")
        assert [str(c.label) for c in table.columns.values()][:6] == [
            "field", "value", "draws", "ok", "geo baseline", "min baseline"]
        rows = [[str(v) for v in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows[0][:2] == ["head_dim", "96"]                      # 0.5 x 0.9 x 1.1 = 0.495
        assert rows[0][7] == "▼0.495"                     # its min vs fa3, below the goal
        mins = [float(r[7].lstrip("▼")) for r in rows]
        assert mins == sorted(mins)                                    # worst first
        assert {r[0] for r in rows} == {"head_dim", "heads_kv", "group", "causal", "batch",
                                        "seqlen_q", "seqlen_k"}
        worst = str(screen.query_one("#coverage-worst").render())
        assert "0.495x  space-8-" in worst and "-d96-" in worst.splitlines()[1]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CoverageScreen)


async def test_v_without_a_space_evaluation_says_how_to_make_one(tmp_path):
    app = SocraticApp(demo_session_dir(), "replay", autoplay=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        head = str(screen.query_one("#coverage-head").render())
        assert head.startswith("no space evaluation in this session yet") and "--space 64" in head
        assert screen.query_one("#coverage-table").row_count == 0
        await pilot.press("v")
        await pilot.pause()
        assert not isinstance(app.screen, CoverageScreen)


async def test_hidden_draws_slower_than_the_goal_are_marked(tmp_path):
    # issue 41: the goal holds on hidden draws (hidden = true, >= 1.0x vs fa3): the draws
    # and cells below it say so, in words, not only by their number
    app = SocraticApp(space_session(tmp_path), "replay", autoplay=False)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(app, pilot)
        worst = str(screen.query_one("#coverage-worst").render()).splitlines()
        assert "draws below the goal (>= 1x vs fa3)" in worst[0]
        slow = [line for line in worst[1:] if "▼ slow" in line]
        assert slow and all(float(line.split()[2].rstrip("x")) < 1.0 for line in slow)
        fast = [line for line in worst[1:] if "▼ slow" not in line]
        assert all(float(line.split()[0].rstrip("x")) >= 1.0 for line in fast)
        table = screen.query_one("#coverage-table")
        for i in range(table.row_count):
            cell = str(table.get_row_at(i)[7])
            assert cell.startswith("▼") == (float(cell.lstrip("▼")) < 1.0)
