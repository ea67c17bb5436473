"""Defects a new user met (issue 27), each as they saw it: the labels of the agent's table,
the report's bests, an evaluator that cannot start, messages glued together, attach over a
session, a NaN imported, a question after the end, an import of another source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from socratic import contracts as c
from socratic.contracts import AskCommand, Goal
from socratic.eventlog import inject
from socratic.harness.attached.attach import attach
from socratic.harness.core.history import Evaluation, compact_table
from socratic_doubles.testing import FAKE_EVALUATOR, candidate_source, fake_config, make_task
from tests.test_manual import SRC, attach_rmsnorm, cand, cli, events, of, use

pytestmark = pytest.mark.timeout(180)


def _ev(n: int) -> Evaluation:
    doc = json.loads(SRC[n].read_text())
    return Evaluation(n, doc["candidate"]["sha256"], "bench", c.parse_eval(doc), 0,
                      f"evals/{n:04d}.json")


def test_the_agents_table_says_what_each_ratio_is_against():
    ev = _ev(4)
    text = compact_table(ev, Goal(min_speedup=1.2, against="baseline"))
    header = next(ln for ln in text.splitlines() if ln.startswith("scenario"))
    assert "x base" in header and "speedup" not in header
    summary = next(ln for ln in text.splitlines() if ln.startswith("summary:"))
    assert "x vs baseline" in summary and "{" not in summary  # no raw JSON, no 16 digits
    text = compact_table(ev, Goal(min_speedup=1.0, against="fa3"))
    assert "x fa3" in next(ln for ln in text.splitlines() if ln.startswith("scenario"))


def test_the_report_names_the_evaluation_of_each_best(capsys, tmp_path):
    from socratic.cli import main
    from socratic.report.model import build_report
    from socratic.resources import resolve_session_dir

    # the campaign as it stood at session 6's end (its first 7458 events), where the best
    # geomean (#163) and the best min (#144) came from different evaluations: each is named
    here = tmp_path / "fa3-at-session-6"
    assert main(["unpack", str(resolve_session_dir(Path("fa3-h200"))), str(here)]) == 0
    log = here / "events.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:7458]))
    capsys.readouterr()
    for session, (geo_n, min_n) in ((here, (163, 144)), (resolve_session_dir(Path("fa3-h200")), (273, 271))):
        assert main(["report", str(session)]) == 0
        line = next(ln for ln in capsys.readouterr().out.splitlines() if "best on" in ln)
        (r,) = build_report([session]).sessions
        bench = [p for p in r.series if p.goal_set and p.correct and p.geomean is not None]
        by_geo, by_min = max(bench, key=lambda p: p.geomean), max(bench, key=lambda p: p.min)
        assert (by_geo.n, by_min.n) == (geo_n, min_n)
        assert f"geomean {by_geo.geomean:.3f}x (#{by_geo.n})" in line, line
        assert f"min {by_min.min:.3f}x (#{by_min.n})" in line, line


def test_an_evaluator_that_cannot_start_is_not_a_failing_candidate(tmp_path):
    task = make_task(tmp_path)
    import sys

    # the case: an interpreter without socratic (`No module named ...`)
    cfg = fake_config(evaluator=[sys.executable, "-I", "-m", "no_such_module_here"])
    a = attach(task, "manual", fake_config(), session_dir=tmp_path / "s")
    from socratic.harness.attached.attached_campaign import AttachedCampaign

    with AttachedCampaign.open(a.session.dir) as camp:
        camp.evals.evaluator = cfg.evaluator
        (a.session.workspace / "candidate.cu").write_text(candidate_source(1.1))
        ev = camp.evaluate(None)
        assert ev.result is None and not ev.failed_check
        assert "failed to start" in (ev.error or "") and "No module named" in ev.error
        assert "not the candidate's fault" in camp.evals.table(ev) or "failed to start" in \
            camp.evals.table(ev)
    kinds = [e["kind"] for e in of(a.session.dir, "trigger")]
    assert "correctness_failure" not in kinds
    # at attach, a bare program is found on this PATH, or refused in one line
    from socratic.errors import InputError
    from socratic.harness.attached.attach import resolved_command

    assert resolved_command(["python3", "-m", "x"])[0] == shutil.which("python3")
    with pytest.raises(InputError, match="not found on PATH"):
        resolved_command(["no-such-python-here"])


def test_whole_messages_of_an_outside_agent_are_not_glued():
    from socratic.tui.state import CampaignState

    st = CampaignState()
    start = {"seq": 1, "t": 0, "ts": "x", "type": "campaign.start", "task": "t",
             "goal": {"min_speedup": 1.0, "against": "baseline"}, "model": "claude",
             "agent": "claude", "scenarios": {"set": "bench", "ids": []}, "gpu": None,
             "host": "h", "versions": {}}
    st.apply(start)
    st.apply({"seq": 2, "t": 1, "ts": "x", "type": "agent.text", "text": "Call v65."})
    st.apply({"seq": 3, "t": 2, "ts": "x", "type": "agent.text", "text": "Call s4c4: done."})
    texts = [b.text for b in st.blocks if b.kind == "text"]
    assert texts == ["Call v65.\n\nCall s4c4: done."]


def test_attach_over_a_session_says_how_to_go_on(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess, _ = attach_rmsnorm(tmp_path)
    code, _, err = cli("attach", "rmsnorm", "--agent", "manual", "--session-dir", str(sess))
    assert code == 2 and "--resume" not in err and "start its agent again" in err, err


def test_an_import_with_nan_or_a_negative_time_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess, _ = attach_rmsnorm(tmp_path)
    use(sess, 1)
    before = (sess / "events.jsonl").read_bytes()
    for field, value in (("speedup", "NaN"), ("candidate_ms", "-1")):
        doc = SRC[1].read_text()
        d = json.loads(doc)
        d["scenarios"][0][field] = "@@"
        bad = tmp_path / f"bad-{field}.json"
        bad.write_text(json.dumps(d).replace('"@@"', value))
        code, _, err = cli("hook", "evaluate", "--session", str(sess), "--import", str(bad))
        assert code == 2 and err.count("\n") == 1 and str(bad) in err, err
    assert (sess / "events.jsonl").read_bytes() == before
    for line in before.splitlines():
        json.loads(line)


def test_nothing_is_posed_after_the_end(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess, _ = attach_rmsnorm(tmp_path)
    assert cli("hook", "stop", "--session", str(sess), "--give-up", "enough")[0] == 0
    inject(sess, AskCommand(text="Still there?"))
    code, out, _ = cli("hook", "say", "--session", str(sess), "Closing words.")
    assert code == 0 and "Still there?" not in out
    types = [e["type"] for e in events(sess)]
    assert "question" not in types[types.index("campaign.end"):]


def test_an_import_of_another_source_says_the_stop_judges_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess, _ = attach_rmsnorm(tmp_path)
    use(sess, 3)
    code, out, err = cli("hook", "evaluate", "--session", str(sess), "--import", str(SRC[2]),
                         "--candidate", str(cand(2)))
    assert code == 0, err
    assert "is not" in out and "judges candidate.cu as it is" in out


def test_the_evaluator_runs_with_the_workspace_off_its_path():
    import sys

    from socratic.harness.core.config import default_evaluator

    argv = default_evaluator() if "SOCRATIC_EVALUATOR" not in __import__("os").environ else \
        [sys.executable, "-P", "-m", "socratic.evaluator"]
    if sys.version_info >= (3, 11):
        assert "-P" in argv
    assert Path(argv[0]).is_absolute()


def test_the_gaps_between_sessions_are_not_campaign_time(capsys):
    # fa3-h200: eight recorded sessions, five of about a minute each, one of 34 minutes (session
    # 8's calls recorded as they came back), one of 18 (session 9's) and one of 26 (session
    # 10's), over 69 h 15 min
    from socratic.cli import main
    from socratic.resources import resolve_session_dir
    from socratic.sessionfiles import open_session
    from socratic.tui.state import CampaignState

    assert main(["report", "fa3-h200"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert "10 sessions: 1 h 22 min of campaign time over 149 h 15 min" in line, line
    st = CampaignState()
    events = open_session(resolve_session_dir(Path("fa3-h200"))).events().events
    for e in events[:200]:   # within the first session
        st.apply(e)
    assert st.sessions == 1 and st.active_at(st.t) < 40
    for e in events[200:]:
        st.apply(e)
    assert st.sessions == 10 and 4915 < st.active_at(st.t) < 4975


async def test_the_attention_campaign_at_160_columns():
    # the header was cut at `TF/s bo`, the table at End showed a correctness-only run of
    # the full set (210 rows of -), and the plot tracked the speedup over the baseline
    from socratic.report.model import build_report
    from socratic.resources import resolve_session_dir
    from socratic.tui.app import SocraticApp
    from socratic.tui.widgets.scenario_table import ScenarioTable
    from socratic.tui.widgets.speedup_plot import SpeedupPlot

    session = resolve_session_dir(Path("fa3-h200"))
    best = build_report([session]).sessions[0].best_geomean   # the plot's best, against FA3
    app = SocraticApp(session, "replay", autoplay=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        await pilot.pause()
        table = app.screen.query_one(ScenarioTable)
        assert table.size.width >= table.needed_width - 1, (table.size.width, table.needed_width)
        assert app.screen.state.table_set == "bench" and len(table.rows) == 26
        plot = str(app.screen.query_one(SpeedupPlot).render())
        assert f"{best:.2f}×" in plot and "2.99×" not in plot, plot
