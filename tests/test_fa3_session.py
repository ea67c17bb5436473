"""The bundled real campaign (sessions/fa3-h200.socratic, a pack: the attention kernel on the H200, recorded
by hand with `attach --agent manual` and imported evaluations, over ten developer sessions) conforms to
the contracts, is found by name, replays, and reports on the goal's terms (against FA3),
without the comparisons of its evaluations 1-12 (retracted: timed before the comparison-timer
fix) and of evaluation 69 (retracted: FA3 timed at 2.7x its usual time on one scenario).
The pack is frozen (the campaign's workbench lives in research/): the evaluations named here
(SHIPPED, OUTLIER, ...) are its facts; counts are read from it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from socratic.contracts import CampaignEnd, CampaignStart, EvalEnd, EvalRetract, Question, parse_eval
from socratic.report.model import build_report
from socratic.resources import bundled_sessions, resolve_session_dir
from socratic.sessionfiles import is_pack, open_session
from socratic.tui.app import SocraticApp
from socratic.tui.state import fold
from tests.fa3data import eval_docs
from tests.test_tui_app import Clock

SESSION = resolve_session_dir(Path("fa3-h200"))
FILES = open_session(SESSION)
EVENTS = FILES.events().events
EVALS = sum(1 for e in EVENTS if isinstance(e, EvalEnd))
QUESTIONS = sum(1 for e in EVENTS if isinstance(e, Question))   # auto and posed by hand


def copied(rel: str, tmp_path: Path) -> Path:
    """One of the pack's files on disk (what `hook evaluate --import` takes)."""
    out = tmp_path / "from-pack" / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(FILES.read_bytes(rel))
    return out


def test_found_by_name_and_listed():
    assert is_pack(SESSION) and SESSION.name == "fa3-h200.socratic" and FILES.name == "fa3-h200"
    assert {"demo", "fa3-h200"} <= set(bundled_sessions())
    assert resolve_session_dir(Path("no-such-campaign")) == Path("no-such-campaign")


def test_every_event_and_evaluation_conforms():
    parsed = FILES.events()
    assert parsed.errors == [] and parsed.skipped == 0
    assert isinstance(parsed.events[0], CampaignStart) and isinstance(parsed.events[-1], CampaignEnd)
    # the first session ended at 43 evaluations, the later ones resumed it by an import (the
    # fifth's and the seventh's evaluations were lost before they were recorded: each ended
    # with the session after it)
    assert [e.evaluations for e in parsed.events if isinstance(e, CampaignEnd)] == [43, 78, 113, 158, 167, 215, 237, 262, 268, EVALS]
    # the comparisons timed before the fix (d152644), and evaluation 69's, taken back
    early, outlier = [e for e in parsed.events if isinstance(e, EvalRetract)]
    assert early.part == outlier.part == "comparisons"
    assert early.evals == list(range(1, FIXED_TIMER)) and "d152644" in early.why
    assert outlier.evals == [OUTLIER] and "2.7x" in outlier.why
    files = FILES.names("evals")
    ends = [e for e in parsed.events if isinstance(e, EvalEnd)]
    assert len(files) == len(ends) == EVALS and [e.n for e in ends] == list(range(1, EVALS + 1))
    for f in files:
        parse_eval(FILES.read_json(f), f)
    assert all(e.source == "import" for e in ends)   # timed on the H200, recorded here


def _fa3_ratios(rel: str) -> list[float]:
    doc = FILES.read_json(rel)
    return [r["comparisons"]["fa3"]["speedup"] for r in doc["scenarios"]]


def test_report_judges_the_best_against_fa3():
    report = build_report([SESSION])
    r = report.sessions[0]
    assert r.goal == {"min_speedup": 1.0, "against": "fa3"} and not r.goal_met
    # incorrect: v88's smoke on the old causal FLOP count (201), v89's repeat failed by the
    # judge's host-stall defect (222, fixed since) and v90's repeat, a race in its timed runs (223)
    assert r.evaluations == EVALS and r.evaluations_incorrect == 3 and r.questions == QUESTIONS
    best = next(p for p in r.series if p.n == r.best_evaluation)
    ratios = _fa3_ratios(best.result)
    # the best is the closest to FA3 in its worst scenario, not the furthest from the baseline
    assert abs(r.best_min - min(ratios)) < 1e-9
    for p in r.series:
        if p.correct and p.goal_set and not p.retracted:
            assert min(_fa3_ratios(p.result)) <= r.best_min + 1e-9
    assert 0.5 < r.best_min < 1.0 and 0.5 < r.best_geomean < 1.0


def test_the_best_evaluations_scenarios_against_each_comparison():
    """The per-scenario table of the note (FA3, cuDNN and FA2, same run) comes out of the
    report: each row's ratios are the saved result's, and the Markdown has their geomeans."""
    from socratic.report.text import markdown
    report = build_report([SESSION])
    (r,) = report.sessions
    best = next(p for p in r.series if p.n == r.best_evaluation)
    result = {row.id: row for row in parse_eval(FILES.read_json(best.result)).scenarios}
    assert len(r.best_scenarios) == 26
    for row in r.best_scenarios:
        saved = result[row["scenario"]]
        want = {k: saved.speedup_against(k) for k in (saved.comparisons or {})
                if saved.speedup_against(k) is not None}
        assert row["vs"] == pytest.approx(want) and "fa3" in row["vs"], row["scenario"]
    # torch SDPA does not run a bottom-right causal mask with seqlen_q != seqlen_k
    assert set(next(s for s in r.best_scenarios if "q512-k8k" in s["scenario"])["vs"]) == {"fa3"}
    md = markdown(report)
    assert "| scenario | correct | speedup | vs fa3 | vs cudnn | vs fa2 |" in md
    fa3 = [row["vs"]["fa3"] for row in r.best_scenarios]
    geo = math.exp(sum(map(math.log, fa3)) / len(fa3))
    assert "| **geomean** |  | " in md and f"{geo:.3f}x" in md.split("| **geomean** |")[1]


def test_the_retracted_comparisons_count_nowhere_the_baseline_still_does():
    """Evaluation 10 read 0.870x FA3 on the old timer and evaluation 69 0.945x with one FA3
    outlier; the honest top is evaluation TOP (v100r, call s23c2: an H100 run of the listed set, v100
    timed again beside v106; v96 read 0.976x on the H200, evaluation 259). Against the baseline the
    retracted evaluations stand."""
    from socratic.report.text import summary_lines

    (r,) = build_report([SESSION]).sessions
    assert round(r.best_geomean, 3) == TOP_GEOMEAN
    best_geo = max((p for p in r.series if p.goal_set and p.geomean is not None),
                   key=lambda p: p.geomean)
    assert best_geo.n == TOP and abs(best_geo.geomean - r.best_geomean) < 1e-12
    outlier = next(p for p in r.series if p.n == OUTLIER)
    assert outlier.retracted == "comparisons" and outlier.geomean is None
    assert outlier.baseline_geomean is not None and outlier.baseline_geomean > 2.5
    early = [p for p in r.series if p.n < FIXED_TIMER]
    assert all(p.retracted == "comparisons" and p.geomean is None and p.geomean_vs == {}
               for p in early)
    ten = early[9]
    assert ten.n == 10 and ten.baseline_geomean == pytest.approx(2.504, abs=1e-3)
    lines = summary_lines(r)
    text = "\n".join(lines)
    assert f"geomean {TOP_GEOMEAN:.3f}x" in lines[2] and "0.870" not in text
    # 0.945x only where the retraction says why
    assert [line for line in lines if "0.945" in line] == [next(x for x in lines if "evaluation(s) 69 retracted" in x)]
    assert "evaluation(s) 1-12 retracted (comparisons only): timed before" in text
    # the TUI's best agrees; a reader of the log up to the first session's end read 0.870x
    events = FILES.event_records()[0]
    assert round(fold(events).best_geomean, 3) == TOP_GEOMEAN
    first_end = next(i for i, e in enumerate(events) if e["type"] == "campaign.end")
    assert round(fold(events[:first_end + 1]).best_geomean, 3) == 0.870


async def test_replays_to_the_end():
    events = FILES.event_records()[0]
    final = fold(events)
    assert final.status == "ended" and len(final.evals) == EVALS
    app = SocraticApp(SESSION, "replay", clock=Clock(), autoplay=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert app.main.state.evals and app.main.state.evals[-1].n == 2


BEST = Path(__file__).parent / "candidates" / "fa3_h200_best.cu"
FIXED_TIMER = 13   # the first evaluation timed with the fixed comparison timer
OUTLIER = 69       # v24: FA3 timed at 2.7x its usual time on d128-s1k causal
SHIPPED = 271      # v106 on the bench set (call s23c2, run in session 23, shipped in session 24); 272 its full-set run
AGAIN = (274,)     # v106 timed again in the same call
BESIDE = (270, 273)  # v100, the kernel shipped before, timed twice beside it
TOP = 273          # the highest geomean on record (v100's repeat beside v106, call s23c2 on an H100)
TOP_GEOMEAN = 0.981  # its geomean vs FA3, rounded as the report prints it
RESULTS = Path(__file__).parents[1] / "benchmarks" / "results"
SPACE = RESULTS / "s23c2" / "evals"   # the space runs, same call
# the one space draw v106 failed in s23c2: "timed runs differ" by one bf16 step, the judge's spot bound
# (the evaluator allows one rounding step since session 24; v100 failed draw 28 the same way in s24c2)
SPACE_JUDGED = {"space-410041-55-d64-q1613-k4056-b7-h16-causal-gqa4"}
# session 20's promotion (v96 -> v100, call s16c1), kept as the record's history
V100 = 265         # v100 (fa3_hd_all.cu) on the bench set (call s16c1, run in session 20); 266 its full-set run
V100_AGAIN = (268,)
V100_BESIDE = (264, 267)  # v96 beside it
V100_SPACE = RESULTS / "s16c1" / "evals"
# session 10's promotion (v88 -> v96, call s10c4), kept as the record's history
V96 = 259          # v96 on the bench set (call s10c4, session 10); 262 is its full-set run
V96_AGAIN = (261,)
V96_BESIDE = (258, 260)  # v88 beside it
OLD = 208          # v88's first bench run (call s8c4), shipped through session 9
# v88's runs in each call of sessions 9 and 10 before s10c4 (first, last evaluation of the call)
CALLS_V88 = {(216, 225): (218, 221), (226, 229): (226, 228), (230, 237): (235,),
             (238, 245): (239, 242), (246, 256): (248, 252)}


def test_the_shipped_best_kernel_is_the_one_measured():
    """tests/candidates/fa3_h200_best.cu is byte for byte v106 (v100 with FlashAttention-3's
    pack-GQA, and the rows no key reaches, causal seqlen_q > seqlen_k, written by the producer's
    idle warps with no work tile for them), the candidate of the campaign's last stop attempt: on
    the listed set within 1% of v100 (the kernel shipped before) in every pairing of the same call
    (s23c2, an H100), 210/210 on the full set, every hidden draw correct, and over the same 64
    space draws at least 5% above v100 with no head dim below 0.95x FA3 (benchmarks/results/s23c2).
    Its one failed space draw is the judge's (SPACE_JUDGED). Retracted comparisons (1-12, 69) are
    not compared."""
    import hashlib

    sha = hashlib.sha256(BEST.read_bytes()).hexdigest()
    assert FILES.read_bytes("workspace/candidate.cu") == BEST.read_bytes()
    docs = eval_docs(SESSION)
    honest = {n: d for n, d in docs.items() if n >= FIXED_TIMER and n != OUTLIER}
    bench = [d for d in honest.values() if d["set"] == "bench" and d["summary"]["all_correct"]]
    top = max(d["summary"]["geomean_vs"]["fa3"] for d in bench)
    ours = [n for n, d in honest.items() if d in bench and d["candidate"]["sha256"] == sha]
    assert ours == [SHIPPED, *AGAIN]

    def vs(n: int) -> float:
        return docs[n]["summary"]["geomean_vs"]["fa3"]
    assert vs(TOP) == top
    v100 = docs[V100]["candidate"]["sha256"]
    for n in BESIDE:   # the kernel shipped before, the same file, the same card
        assert docs[n]["candidate"]["sha256"] == v100 and docs[n]["candidate"]["path"].endswith(("/v100.cu", "/v100r.cu"))
        assert docs[n]["gpu"]["name"] == docs[SHIPPED]["gpu"]["name"]
        assert all(abs(vs(m) / vs(n) - 1) < 0.01 for m in ours) and vs(n) > 0.97
    full = [d for d in docs.values() if d["set"] == "full" and d["candidate"]["sha256"] == sha]
    assert full and full[0]["summary"]["n_correct"] == full[0]["summary"]["n"] == 210
    assert all(docs[n]["hidden_summary"]["n_correct"] == docs[n]["hidden_summary"]["n"] > 0 for n in ours)
    # the space runs of the same call (not in the pack: its task has no [hidden] space)
    new, old = (json.loads((SPACE / f"{k}.space64.json").read_text()) for k in ("v106", "v100"))
    assert new["candidate"]["sha256"] == sha and old["candidate"]["sha256"] == v100
    assert new["set"] == old["set"] == "space:64@410041"
    assert [r["id"] for r in new["scenarios"]] == [r["id"] for r in old["scenarios"]]
    assert old["summary"]["n_correct"] == old["summary"]["n"] == new["summary"]["n"] == 64
    wrong = {r["id"]: r["failures"] for r in new["scenarios"] if not r["correct"]}
    assert set(wrong) == SPACE_JUDGED and new["summary"]["n_correct"] == 64 - len(SPACE_JUDGED)
    assert all(f == ["o: timed runs differ from the baseline by 0.00391"] for f in wrong.values())
    assert new["summary"]["geomean_vs"]["fa3"] > 1.05 * old["summary"]["geomean_vs"]["fa3"]
    for hd in (64, 96, 128, 192, 256):
        rows = [r["comparisons"]["fa3"]["speedup"] for r in new["scenarios"]
                if r["params"]["head_dim"] == hd and r["correct"]]
        assert rows and math.exp(sum(map(math.log, rows)) / len(rows)) > 0.95, hd


def test_v100_was_shipped_over_v96_in_its_own_call():
    """Session 20's promotion, as recorded: v100 (fa3_hd_all.cu: head dims 96 and 192 on the
    Hopper path) on the listed set within 1% of v96 (its machine code at head dims 64/128/256 is
    v96's) in every pairing of the same call (s16c1, an H100), 210/210 on the full set, every
    hidden draw correct, and over the same 64 space draws well above v96 with no head dim below
    0.85x FA3 (benchmarks/results/s16c1)."""
    docs = eval_docs(SESSION)

    def vs(n: int) -> float:
        return docs[n]["summary"]["geomean_vs"]["fa3"]
    v100 = docs[V100]["candidate"]["sha256"]
    ours = [V100, *V100_AGAIN]
    assert all(docs[n]["candidate"]["sha256"] == v100 for n in ours)
    v96 = docs[V96]["candidate"]["sha256"]
    for n in V100_BESIDE:
        assert docs[n]["candidate"]["sha256"] == v96 and docs[n]["candidate"]["path"].endswith(("/v96.cu", "/v96r.cu"))
        assert docs[n]["gpu"]["name"] == docs[V100]["gpu"]["name"]
        assert all(abs(vs(m) / vs(n) - 1) < 0.01 for m in ours) and vs(n) > 0.96
    full = [d for d in docs.values() if d["set"] == "full" and d["candidate"]["sha256"] == v100]
    assert full and full[0]["summary"]["n_correct"] == full[0]["summary"]["n"] == 210
    assert all(docs[n]["hidden_summary"]["n_correct"] == docs[n]["hidden_summary"]["n"] > 0 for n in ours)
    new, old = (json.loads((V100_SPACE / f"{k}.space64.json").read_text()) for k in ("v100", "v96"))
    assert new["candidate"]["sha256"] == v100 and old["candidate"]["sha256"] == v96
    assert new["set"] == old["set"] == "space:64@410041"
    assert [r["id"] for r in new["scenarios"]] == [r["id"] for r in old["scenarios"]]
    assert new["summary"]["n_correct"] == new["summary"]["n"] == 64
    assert new["summary"]["geomean_vs"]["fa3"] > 1.05 * old["summary"]["geomean_vs"]["fa3"]
    for hd in (64, 96, 128, 192, 256):
        rows = [r["comparisons"]["fa3"]["speedup"] for r in new["scenarios"] if r["params"]["head_dim"] == hd]
        assert rows and math.exp(sum(map(math.log, rows)) / len(rows)) > 0.85, hd


def test_v96_was_shipped_over_v88_in_its_own_call():
    """Session 10's promotion, as recorded: v96 at least 0.5% over v88 (the kernel shipped
    before) in every pairing of the two runs of each timed side by side; before it, nothing was
    0.5% over v88 in its own call."""
    docs = eval_docs(SESSION)

    def vs(n: int) -> float:
        return docs[n]["summary"]["geomean_vs"]["fa3"]
    v96 = docs[V96]["candidate"]["sha256"]
    assert [n for n in (V96, *V96_AGAIN) if docs[n]["candidate"]["sha256"] == v96] == [V96, *V96_AGAIN]
    assert vs(V96) > 0.975
    old = docs[OLD]["candidate"]["sha256"]
    for n in V96_BESIDE:
        assert docs[n]["candidate"]["sha256"] == old and docs[n]["candidate"]["path"].endswith(("/v88.cu", "/v88r.cu"))
        assert all(vs(m) >= 1.005 * vs(n) for m in (V96, *V96_AGAIN)) and vs(n) > 0.96
    for (first, last), v88 in CALLS_V88.items():
        assert all(docs[n]["candidate"]["sha256"] == old for n in v88)
        mean = sum(vs(n) for n in v88) / len(v88)
        others = [n for n in range(first, last + 1) if docs[n]["set"] == "bench" and n not in v88]
        assert others and all(vs(n) < 1.005 * mean for n in others)
    full = [d for d in docs.values() if d["set"] == "full" and d["candidate"]["sha256"] == v96]
    assert full and full[0]["summary"]["n_correct"] == full[0]["summary"]["n"] == 210


@pytest.mark.gpu
def test_the_best_kernel_is_correct_on_every_full_scenario():
    """On an H200: python -m pytest -m gpu tests/test_fa3_session.py -q"""
    from tests.evalcli import socratic

    res = socratic("eval", "flash_attn_fwd", "--candidate", str(BEST), "--scenarios", "full",
                   "--no-timing", "--no-compare", "--json")
    assert res.code == 0 and res.doc["summary"]["n_correct"] == 210, res.doc["summary"]


def test_an_imported_result_carries_each_scenarios_comparisons(tmp_path):
    """eval.end logs each scenario's speedup against FA3, cuDNN, FA2 (timed after the
    candidate, so eval.scenario rows lack them), and the TUI's table judges the goal on them."""
    import contextlib
    import io

    from socratic.cli import main
    from socratic.tui.state import fold

    sess = tmp_path / "again"
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        assert main(["attach", "flash_attn_fwd", "--agent", "manual", "--session-dir", str(sess)]) == 0
        src = copied("evals/0036.json", tmp_path)
        doc = json.loads(src.read_text())
        cand = copied(f"candidates/{doc['candidate']['sha256'][:16]}.cu", tmp_path)
        assert main(["hook", "evaluate", "--session", str(sess), "--import", str(src),
                     "--candidate", str(cand)]) in (0, 1)
    events = [json.loads(line) for line in (sess / "events.jsonl").read_text().splitlines()]
    end = [e for e in events if e["type"] == "eval.end"][-1]
    vs = end["scenario_vs"]
    assert len(vs) == 26 and vs["d128-s16k-b1-h16-full"]["fa3"] == pytest.approx(
        next(r for r in doc["scenarios"] if r["id"] == "d128-s16k-b1-h16-full")["comparisons"]["fa3"]["speedup"])
    assert "cudnn" not in vs["d128-q512-k8k-b4-h32-causal-gqa4"]   # SDPA cannot run it
    state = fold(events)
    row = state.rows["d128-s16k-b1-h16-causal"]
    assert row.goal_speedup("fa3") == pytest.approx(vs["d128-s16k-b1-h16-causal"]["fa3"])
    assert len(state.missing_goal()) == 26    # every scenario below 1.0x FA3


def test_report_and_replay_take_the_bundled_name_on_the_command_line(capsys):
    from socratic.cli import main

    assert main(["report", "fa3-h200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (r,) = doc["sessions"]
    assert r["session"] == "fa3-h200" and r["evaluations"] == EVALS and r["best_geomean"] < 1.0
    code = main(["replay", "no-such-campaign"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no-such-campaign" in err[0]


def test_every_verb_that_reads_a_session_takes_the_bundled_name(capsys, monkeypatch, tmp_path):
    # README: "Both names work wherever a session is expected"; bank trace and bank stats
    # --sessions said "fa3-h200: no such file or folder"
    from socratic.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["bank", "trace", "fa3-h200", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["askings"]) == QUESTIONS
    assert main(["bank", "stats", "--sessions", "fa3-h200", "demo"]) == 0
    assert "in 2 session(s)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["replay", "no-such-campaign"], "(bundled campaigns: demo, fa3-h200)"),
    (["report", "no-such-campaign"], "(bundled campaigns: demo, fa3-h200)"),
    (["bank", "trace", "no-such-campaign"], "(bundled campaigns: demo, fa3-h200)"),
    (["watch", "fa3-h200"], "fa3-h200 is a bundled recorded campaign, read-only: "
                            "`socratic replay fa3-h200` plays it"),
    (["inject", "demo", "--text", "why?"], "demo is a bundled recorded campaign"),
    (["run", "--resume", "demo", "--headless"], "demo is a bundled recorded campaign"),
])
def test_an_unknown_or_read_only_name_says_what_there_is(capsys, monkeypatch, tmp_path, argv,
                                                          needle):
    from socratic.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0], err
    assert not (tmp_path / argv[1]).exists()


def test_an_import_whose_comparison_moved_is_flagged_through_the_cli(tmp_path):
    """By hand, the way the campaign met it: v25 imported, then v24, whose FA3 time on
    d128-s1k causal was disturbed (2.42x FA3 with the kernel's time unchanged). `hook
    evaluate --import` logs a suspicious_gain trigger that names the comparison, and with
    auto-questions on the bank's question for it is queued."""
    import contextlib
    import io

    from socratic.cli import main

    sess = tmp_path / "again"
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        assert main(["attach", "flash_attn_fwd", "--agent", "manual", "--auto-questions",
                     "--session-dir", str(sess)]) == 0
        for n in ("0070", "0069"):
            src = copied(f"evals/{n}.json", tmp_path)
            cand = copied(f"candidates/{json.loads(src.read_text())['candidate']['sha256'][:16]}.cu", tmp_path)
            assert main(["hook", "evaluate", "--session", str(sess), "--import", str(src),
                         "--candidate", str(cand)]) in (0, 1)
    events = [json.loads(line) for line in (sess / "events.jsonl").read_text().splitlines()]
    fired = [e for e in events if e["type"] == "trigger" and "time moved" in e["reason"]]
    assert len(fired) == 1 and fired[0]["kind"] == "suspicious_gain"
    assert "d128-s1k-b16-h16-causal 0.899x -> 2.416x against fa3" in fired[0]["reason"]
    second = [e["seq"] for e in events if e["type"] == "eval.end"][1]
    assert fired[0]["seq"] > second                       # on v24's import, not v25's
    asked = next(e for e in events if e["type"] == "question" and e["seq"] > fired[0]["seq"])
    assert asked["trigger"] == "suspicious_gain" and asked["bank_id"] == fired[0]["suggestions"][0]
