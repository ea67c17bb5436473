"""`socratic retract`: an evaluation (or only its comparisons) taken back, append-only, and
every reader honouring it: the harness's history (best, goal check, plateau), the report,
bank traces, the TUI and the fleet's rows. Bad input is one line and exit 2 with nothing
recorded; a running campaign refuses; a reader that does not know the event ignores it."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading
from pathlib import Path

import pytest

from socratic import contracts
from socratic.bank import load_bank
from socratic.cli import main
from socratic.contracts import EvalEnd, read_events
from socratic.harness.attached.attached_campaign import AttachedCampaign
from socratic.harness.core.config import TriggerConfig
from socratic.harness.engine.evaluations import load_evaluation
from socratic.harness.engine.triggers import Plateau
from socratic.ownership import SessionOwner
from socratic.report import bank_traces, build_report
from socratic.report.text import summary_lines
from socratic.resources import resolve_session_dir
from socratic.tui.state import fold
from tests.fa3data import trimmed_folder
from tests.test_report import Log
from tests.test_tui_app import replay_app

FA3 = resolve_session_dir(Path("fa3-h200"))


def retract(capsys, *args: object) -> tuple[int, list[str]]:
    try:
        code = main(["retract", *map(str, args)])
    except SystemExit as exc:     # argparse: a bad argument
        code = int(exc.code or 0)
    return code, capsys.readouterr().err.strip().splitlines()


def fa3_log() -> Log:
    """A campaign against FA3: evaluation 2 is best against FA3 (0.80x), 3 against the
    baseline (1.30x)."""
    log = Log()
    log.events[0]["goal"] = {"min_speedup": 1.0, "against": "fa3"}
    for n, geo, mn, vs in ((1, 1.10, 1.00, 0.50), (2, 1.20, 1.10, 0.80), (3, 1.30, 1.20, 0.60)):
        if n == 2:
            log.emit("question", text="q?", bank_id="comparison.where-it-wins",
                     trigger="plateau", source="auto")
        log.evaluate(n, geo, mn)
        log.events[-1]["summary"]["geomean_vs"] = {"fa3": vs}
        log.events[-1]["scenario_vs"] = {"a": {"fa3": vs}, "b": {"fa3": vs}}
    return log


def written(folder: Path, log: Log) -> Path:
    log.write(folder)
    (folder / "evals").mkdir(exist_ok=True)
    for e in log.events:
        if e["type"] == "eval.end":
            (folder / e["result"]).write_text("{}")
    return folder


# ---------------------------------------------------------------------------- the CLI


def test_retract_appends_one_event_and_changes_the_best(tmp_path, capsys):
    log = Log()
    log.evaluate(1, 1.10, 1.00)
    log.evaluate(2, 1.30, 1.25)
    s = written(tmp_path / "s", log)
    (r,) = build_report([s]).sessions
    assert (r.best_geomean, r.best_evaluation, r.goal_met) == (1.30, 2, True)
    before = (s / "events.jsonl").read_bytes()

    code, err = retract(capsys, s, 2, "--why", "  the baseline was built without -O3  ")
    assert code == 0 and err == [f"socratic: retracted evaluation(s) 2 of {s} (event seq "
                                 f"{len(log.events) + 1})"]
    after = (s / "events.jsonl").read_bytes()
    assert after.startswith(before)     # append-only: nothing recorded is rewritten
    e = json.loads(after[len(before):])
    assert (e["type"], e["evals"], e["part"], e["why"]) == (
        "eval.retract", [2], "all", "the baseline was built without -O3")

    (r,) = build_report([s]).sessions
    assert (r.best_geomean, r.best_min, r.best_evaluation) == (1.10, 1.00, 1)
    assert not r.goal_met and r.evaluations == 2 and r.evaluations_correct == 2
    two = r.series[1]
    assert (two.retracted, two.geomean, two.min, two.baseline_geomean) == ("all", None, None, None)
    assert [p.best_geomean for p in r.series] == [1.10, 1.10]
    assert "  evaluation(s) 2 retracted: the baseline was built without -O3" in summary_lines(r)


def test_comparisons_only_keeps_the_baseline_figures(tmp_path, capsys):
    s = written(tmp_path / "fa", fa3_log())
    bank = load_bank(user=False)   # the shipped bank: it holds comparison.where-it-wins
    (a,) = bank_traces([s], bank).askings
    assert (a.before.n, a.after.n, a.gain) == (1, 2, pytest.approx(1.6)) and a.candidate
    base = bank_traces([s], bank, against="baseline").askings[0]
    assert code_of(retract(capsys, s, 2, "--comparisons", "--why", "FA3 timed with host time")) == 0

    (r,) = build_report([s]).sessions
    assert (r.best_geomean, r.best_evaluation) == (0.60, 3)
    two = r.series[1]
    assert two.retracted == "comparisons" and two.geomean is None and two.geomean_vs == {}
    assert two.baseline_geomean == 1.20 and two.correct
    assert "  evaluation(s) 2 retracted (comparisons only): FA3 timed with host time" \
        in summary_lines(r)
    # the trace no longer cites evaluation 2 against FA3; against the baseline it still does
    (a,) = bank_traces([s], bank).askings
    assert a.after.n == 3 and a.gain == pytest.approx(1.2)
    again = bank_traces([s], bank, against="baseline").askings[0]
    assert (again.before.n, again.after.n, again.gain) == (base.before.n, base.after.n, base.gain)
    # retracting all of it afterwards is allowed; the report then drops its baseline too
    assert code_of(retract(capsys, s, 2, "--why", "and the build was wrong")) == 0
    (r,) = build_report([s]).sessions
    assert r.series[1].retracted == "all" and r.series[1].baseline_geomean is None
    assert "the build was wrong" in r.series[1].retracted_why


def code_of(result: tuple[int, list[str]]) -> int:
    return result[0]


def _no_such_session(tmp_path: Path, s: Path) -> list[str]:
    return [str(tmp_path / "nope"), "1", "--why", "x"]


def _not_a_session(tmp_path: Path, s: Path) -> list[str]:
    (tmp_path / "empty").mkdir()
    return [str(tmp_path / "empty"), "1", "--why", "x"]


def _unknown_n(tmp_path: Path, s: Path) -> list[str]:
    return [str(s), "1", "4", "--why", "x"]


def _already(tmp_path: Path, s: Path) -> list[str]:
    main(["retract", str(s), "2", "--why", "first"])
    return [str(s), "1", "2", "--comparisons", "--why", "again"]   # all covers comparisons


def _empty_why(tmp_path: Path, s: Path) -> list[str]:
    return [str(s), "1", "--why", "  "]


def _zero(tmp_path: Path, s: Path) -> list[str]:
    return [str(s), "0", "--why", "x"]


def _no_campaign_start(tmp_path: Path, s: Path) -> list[str]:
    lines = (s / "events.jsonl").read_text().splitlines()
    (s / "events.jsonl").write_text("\n".join(lines[1:]) + "\n")
    return [str(s), "1", "--why", "x"]


@pytest.mark.parametrize("case, words", [
    (_no_such_session, "not a campaign session"), (_not_a_session, "no events.jsonl"),
    (_unknown_n, "no evaluation 4 (recorded: 1-3)"),
    (_already, "evaluation 2 is already retracted (all: first)"),
    (_empty_why, "--why: empty reason"), (_zero, "'0': expected a positive whole number"),
    (_no_campaign_start, "no readable campaign.start"),
])
def test_bad_input_is_one_line_exit_2_and_records_nothing(tmp_path, capsys, case, words):
    s = written(tmp_path / "s", fa3_log())
    args = case(tmp_path, s)
    capsys.readouterr()
    before = (s / "events.jsonl").read_bytes()
    code, err = retract(capsys, *args)
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert (s / "events.jsonl").read_bytes() == before


def test_an_installed_bundled_campaign_is_refused(tmp_path, capsys, monkeypatch):
    """Named, a bundled campaign of a pip install resolves into site-packages: not written.
    (An editable install's bundled campaigns are the checkout's sessions/: written.)"""
    from socratic import resources

    pkg = tmp_path / "site-packages" / "socratic"
    written(pkg / "sessions" / "camp", fa3_log())
    real = resources.bundled_dir
    monkeypatch.setattr(resources, "bundled_dir", lambda name: {
        "socratic": pkg, "socratic.sessions": pkg / "sessions"}.get(name) or real(name))
    monkeypatch.chdir(tmp_path)
    before = (pkg / "sessions" / "camp" / "events.jsonl").read_bytes()
    code, err = retract(capsys, "camp", 1, "--why", "x")
    assert code == 2 and len(err) == 1 and "installed with socratic" in err[0]
    assert (pkg / "sessions" / "camp" / "events.jsonl").read_bytes() == before
    assert not resources.installed(FA3)   # this checkout's own sessions/fa3-h200.socratic


def test_a_running_campaign_refuses_a_hook_is_waited_for(tmp_path, capsys):
    s = written(tmp_path / "s", fa3_log())
    before = (s / "events.jsonl").read_bytes()
    with SessionOwner.claim(s, role="campaign"):     # what `socratic run` holds while it runs
        code, err = retract(capsys, s, 1, "--why", "x")
    assert code == 2 and len(err) == 1 and "a campaign is running here" in err[0]
    assert "retract once it has ended" in err[0]
    assert (s / "events.jsonl").read_bytes() == before
    hook = SessionOwner.claim(s, role="hook")        # an attached campaign's hook call
    threading.Timer(0.3, hook.release).start()
    code, err = retract(capsys, s, 1, "--why", "x")
    assert code == 0 and not hook.held
    assert read_events(s / "events.jsonl")[0].events[-1].TYPE == "eval.retract"


def test_readers_that_do_not_know_the_event_ignore_it(tmp_path, capsys, monkeypatch):
    s = written(tmp_path / "fa", fa3_log())
    assert code_of(retract(capsys, s, 2, "--comparisons", "--why", "x")) == 0
    monkeypatch.delitem(contracts.EVENT_CLASSES, "eval.retract")   # an older version
    parsed, _ = read_events(s / "events.jsonl")
    assert parsed.ignored == 1 and parsed.skipped == 0
    (r,) = build_report([s]).sessions
    assert r.best_geomean == 0.80 and r.series[1].retracted is None
    state = fold(json.loads(line) for line in (s / "events.jsonl").read_text().splitlines())
    assert state.best_geomean == 0.80 and state.n_ignored == 1 and state.n_malformed == 0


# ---------------------------------------------------------------------------- the harness


def test_history_best_goal_check_and_plateau(tmp_path, capsys):
    """A real campaign's history (the frozen trimmed copy of the shipped one: attached, by
    hand): its best against FA3 is the one the report names (by min, then geomean).
    Evaluations 1-12 are retracted on their comparisons: they count against the baseline,
    not against FA3. Evaluations 32 and 35 are one source, 35 the best: with 35 retracted,
    32 is the one the stop hook would reuse, and the best is another."""
    s = trimmed_folder(tmp_path)
    (rep,) = build_report([s]).sessions
    with AttachedCampaign.open(s) as camp:
        h = camp.evals.history
        first = h.best(camp.goal, camp.goal_set)
        assert first.n == rep.best_evaluation == 35   # the second run of that source
        assert [e.retracted for e in h.evals[:13]] == ["comparisons"] * 12 + [None]
        ten = h.evals[9]
        assert ten.counts_on("baseline") and not ten.counts_on("fa3")
        baseline_best = h.best(None, "bench")
        twice = h.evals[34].sha
        assert h.evals[31].sha == twice and h.find(twice, "bench", "fa3").n == 35
    assert code_of(retract(capsys, s, 35, "--comparisons", "--why", "x")) == 0
    with AttachedCampaign.open(s) as camp:
        h = camp.evals.history
        best = h.best(camp.goal, camp.goal_set)
        assert best.n not in (*range(1, 13), 35)
        assert best.n == build_report([s]).sessions[0].best_evaluation   # the report agrees
        assert h.find(twice, "bench", "fa3").n == 32          # the same source, evaluated earlier
        assert h.find(twice, "bench").n == 35                 # against the baseline it stands
        assert h.best(None, "bench").n == baseline_best.n      # comparisons only: it stands
        row = next(line for line in h.table(last=len(h.evals)).splitlines() if line.startswith("35 "))
        assert "(retracted: comparisons)" in row

    events = read_events(s / "events.jsonl")[0].events
    ends = {e.n: e for e in events if isinstance(e, EvalEnd)}
    high, low = load_evaluation(s, ends[36]), load_evaluation(s, ends[37])
    cfg = TriggerConfig(plateau_window=2, plateau_min_gain=0.01)
    p = Plateau(cfg)
    high.retracted = "all"
    p.on_eval(low)
    p.on_eval(high)                       # retracted: not a best, counts as no progress
    assert (p.best_geo, p.since) == (low.metric("geomean_speedup"), 1)
    high.retracted = "comparisons"        # its baseline figures stand
    p.on_eval(high)
    assert p.best_geo == high.metric("geomean_speedup") and p.since == 0


def test_the_goal_check_does_not_reuse_a_retracted_evaluation(tmp_path):
    """By hand: `socratic hook stop` judges the current candidate's recorded evaluation; once
    it is retracted there is none to judge (one line, exit 2), and nothing is recorded."""
    sess = tmp_path / "again"
    quiet = io.StringIO()
    fa3 = trimmed_folder(tmp_path / "src")
    doc = json.loads((fa3 / "evals" / "0036.json").read_text())
    cand = fa3 / "candidates" / f"{doc['candidate']['sha256'][:16]}.cu"
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        assert main(["attach", "flash_attn_fwd", "--agent", "manual", "--session-dir",
                     str(sess)]) == 0
        assert main(["hook", "evaluate", "--session", str(sess), "--import",
                     str(fa3 / "evals" / "0036.json"), "--candidate", str(cand)]) in (0, 1)
        shutil.copy(cand, sess / "workspace" / "candidate.cu")
        assert main(["retract", str(sess), "1", "--why", "say"]) == 0
    err = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(err):
        code = main(["hook", "stop", "--session", str(sess)])
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1 and "that is not retracted" in lines[0]
    assert read_events(sess / "events.jsonl")[0].events[-1].TYPE == "eval.retract"


def test_an_ended_campaign_stays_ended_after_a_retraction(tmp_path, capsys):
    """`socratic inject` reads the log's last event to tell an ended attached campaign; a
    retraction after campaign.end is a note on the past, not the campaign going on."""
    s = trimmed_folder(tmp_path)   # a real campaign, named as the bank cites it
    assert main(["inject", str(s), "--text", "why?"]) == 0
    assert "has ended (stalled)" in capsys.readouterr().err


# ---------------------------------------------------------------------------- TUI, fleet


async def test_tui_marks_the_retracted_evaluation_and_drops_its_figures(tmp_path, capsys):
    s = written(tmp_path / "fa", fa3_log())
    assert code_of(retract(capsys, s, 2, "--comparisons", "--why", "FA3 timer")) == 0
    app = replay_app(s)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        st = app.main.state
        assert st.best_geomean == 0.60 and st.evals[1].retracted == "comparisons"
        blocks = [str(w.render()) for w in app.query("EventBlock")]
        two = next(b for b in blocks if "eval #2" in b)
        assert "↺ retracted (comparisons)" in two and "vs fa3" not in two
        assert "geomean 1.20×" in two                 # against the baseline it stands
        assert any("↺ retracted the comparisons of evaluation(s) 2: FA3 timer" in b
                   for b in blocks)
        header = str(app.query_one("#evalhead").render())
        assert "best vs fa3 0.60×" in header
        await pilot.press("left")                     # before the retraction: as recorded
        await pilot.pause()
        assert app.main.state.best_geomean == 0.80
        assert "best vs fa3 0.80×" in str(app.query_one("#evalhead").render())


async def test_tui_table_does_not_judge_on_retracted_figures(tmp_path, capsys):
    """The table shows the latest evaluation's rows: retracted on the goal's terms (FA3),
    they show no FA3 figure and are not judged; the baseline's speedup stands."""
    s = written(tmp_path / "fa", fa3_log())
    assert code_of(retract(capsys, s, 3, "--comparisons", "--why", "FA3 timer")) == 0
    app = replay_app(s)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        table = app.query_one("#table")
        assert [str(table.get_cell(sid, "verdict")) for sid in ("a", "b")] == ["↺ retr"] * 2
        assert str(table.get_cell("a", "goal")) == "-" and str(table.get_cell("a", "spd")) == "1.00×"
        assert app.main.state.missing_goal() == [] and app.main.state.best_geomean == 0.80
        await pilot.press("left")
        await pilot.pause()
        assert str(table.get_cell("a", "verdict")) == "▼ slow"
        assert str(table.get_cell("a", "goal")) == "0.60×"


def test_fleet_rows_drop_a_retracted_best(tmp_path, capsys):
    """The fleet's row reads the one reading (socratic.logread): its best is on the goal's
    terms (against FA3 here, as the TUI and the report rank it), retractions applied."""
    from socratic.fleet.status import CampaignRow, _fill
    from socratic.logread import LogReader

    s = written(tmp_path / "s", fa3_log())
    assert code_of(retract(capsys, s, 2, "--why", "x")) == 0
    reader = LogReader(s / "events.jsonl")
    reader.poll()
    row = CampaignRow("s", str(s), "t", "a", "auto")
    _fill(row, reader.state)
    assert (row.best_min, row.best_geomean) == (0.60, 0.60) and row.evaluations == 3
    assert row.against == "fa3"


def test_a_retraction_names_the_bank_entries_it_undoes(tmp_path, capsys):
    # comparison.where-it-wins is a trace on fa3-h200's evaluations 23 and 36: retracting
    # 36 in a copy says so, and how to judge it again
    s = trimmed_folder(tmp_path)   # a real campaign, named as the bank cites it
    code, err = retract(capsys, s, 36, "--why", "a test of the notice")
    assert code == 0, err
    assert any("comparison.where-it-wins" in ln and "bank trace" in ln for ln in err), err
    code, err = retract(capsys, s, 2, "--why", "cited by nothing")
    assert code == 0 and len(err) == 1, err
