"""`socratic report`: every figure re-derived from the log, checked on the bundled demo
campaign against the raw events and on small synthetic sessions whose answers are known."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic.report import build_report
from socratic.report.churn import churn
from socratic.resources import demo_session_dir, resolve_session_dir
from tests.test_tui_support import make_session

ROOT = Path(__file__).resolve().parents[1]
DEMO = demo_session_dir()


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SOCRATIC_BANK_DIR=str(ROOT / "tests" / "no-such-bank-dir"))
    return subprocess.run([sys.executable, "-m", "socratic", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def demo_events() -> list[dict]:
    return [json.loads(line) for line in (DEMO / "events.jsonl").read_text().splitlines()]


# ---------------------------------------------------------------------------- the demo


def test_demo_json_counts_equal_the_events():
    r = run("report", str(DEMO), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "socratic.report/1" and len(doc["sessions"]) == 1
    s = doc["sessions"][0]
    events = demo_events()
    count = {k: sum(1 for e in events if e["type"] == k) for k in
             ("eval.end", "question", "tool.call", "usage")}
    assert s["evaluations"] == count["eval.end"] == 6
    assert s["questions"] == count["question"] == 8
    assert s["tool_calls"] == count["tool.call"] == 21
    assert s["turns"] == count["usage"]
    goal_set = next(e for e in events if e["type"] == "campaign.start")["scenarios"]["set"]
    good = [e["summary"] for e in events if e["type"] == "eval.end"
            and e["summary"]["all_correct"] and e["set"] == goal_set]
    assert s["best_geomean"] == max(g["geomean_speedup"] for g in good)
    assert s["best_min"] == max(g["min_speedup"] for g in good)
    assert sum(s["questions_by_trigger"].values()) == s["questions"]
    assert sum(s["questions_by_group"].values()) == s["questions"]
    assert s["questions_auto"] + s["questions_human"] == s["questions"]
    assert s["evaluations_correct"] + s["evaluations_incorrect"] == s["evaluations"]
    assert len(s["question_gains"]) == s["questions"]
    assert set(s["churn"]) >= {"share", "added", "readded"} and s["churn"]["candidates"] == 4
    assert s["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in events
                                              if e["type"] == "usage"))
    assert s["task"] == "rmsnorm" and s["end_reason"] == "goal_met" and s["goal_met"]
    assert s["questions_mode"] == "auto" and s["agent"] == "socratic"
    # the best evaluation as the harness ranks it (min, then geomean) and its scenarios
    assert s["best_evaluation"] == 6 and len(s["best_scenarios"]) == 10
    # the one failure, and the agent's words that followed it
    (f,) = s["correctness_failures"]
    assert f["n"] == 2 and len(f["failing"]) == 10
    assert f["explanation"].startswith("Every scenario is wrong")
    assert f["explanation"].endswith("Fixing the index bound to `lane < kWarps`.")


def test_demo_text_and_markdown():
    r = run("report", str(DEMO))
    assert r.returncode == 0, r.stderr
    assert "6 evaluations (5 correct, 1 incorrect)" in r.stdout
    assert "questions 8 (auto 5, human 3)" in r.stdout
    r = run("report", str(DEMO), "--md")
    assert r.returncode == 0, r.stderr
    for heading in ("# socratic report", "## demo", "### Questions", "### Correctness failures",
                    "### Evaluations", "### Best evaluation #6"):
        assert heading in r.stdout
    assert "| 84 | auto | correctness_failure | correctness.error-map |" in r.stdout


def test_demo_html_is_self_contained(tmp_path):
    out = tmp_path / "r.html"
    r = run("report", str(DEMO), "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and f"wrote {out}" in r.stderr
    page = out.read_text()
    assert page.count('src="data:image/svg+xml;base64,') == 2  # progress + scenarios
    assert "<script" not in page and "http://" not in page.replace(
        "http://www.w3.org", "") and "https://" not in page
    assert "<link" not in page


def test_html_plots_a_goal_against_fa3_on_fa3s_terms(tmp_path):
    """The bundled H200 campaign's goal is 1.0x FA3: both plots are against FA3 (the
    per-scenario dots at the FA3 ratios, not at the baseline's 2-3x beyond a 1.0x line)."""
    import base64
    import re
    out = tmp_path / "r.html"
    r = run("report", "fa3-h200", "--html", str(out))
    assert r.returncode == 0, r.stderr
    svgs = [base64.b64decode(m).decode() for m in
            re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', out.read_text())]
    assert len(svgs) == 2
    assert all("speedup vs fa3" in s and "speedup vs baseline" not in s for s in svgs)
    (rep,) = build_report([resolve_session_dir(Path("fa3-h200"))]).sessions
    labels = [f"{row['vs']['fa3']:.3f}" for row in rep.best_scenarios]
    assert all(label in svgs[1] for label in labels)
    assert f"{rep.best_scenarios[0]['speedup']:.3f}" not in svgs[1]


def _browser() -> str | None:
    return next((b for b in ("chromium-headless-shell", "chromium", "google-chrome")
                 if shutil.which(b)), None)


@pytest.mark.skipif(_browser() is None, reason="no headless Chromium (apt-get install "
                    "chromium-headless-shell)")
def test_html_plots_are_visible_in_a_headless_browser(tmp_path):
    import numpy as np
    from PIL import Image

    page, shot = tmp_path / "r.html", tmp_path / "r.png"
    assert run("report", str(DEMO), "--html", str(page)).returncode == 0
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu",
                    f"--screenshot={shot}", "--window-size=1200,1800", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int32)

    def near(rgb: tuple[int, int, int]) -> int:
        return int((np.abs(pixels - np.array(rgb)).sum(axis=2) < 40).sum())

    # the lines and dots of the plots, in their colours: the plots were drawn
    assert near((0x1f, 0x6f, 0xb4)) > 500   # geomean, and the per-scenario dots
    assert near((0xe0, 0x7b, 0x00)) > 200   # min


def test_html_without_matplotlib_is_one_line(tmp_path, monkeypatch, capsys):
    from socratic.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    code = main(["report", str(DEMO), "--html", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert err.strip().count("\n") == 0 and "pip install '.[report]' from the socratic checkout" in err


# ---------------------------------------------------------------------------- synthetic


class Log:
    """A small campaign log built event by event, with the answers known."""

    def __init__(self, **start) -> None:
        self.events: list[dict] = []
        self.t = 0.0
        self.calls = 0
        self.emit("campaign.start", task="rmsnorm", model="m",
                  goal={"min_speedup": 1.2, "against": "baseline"},
                  scenarios={"set": "bench", "ids": ["a", "b"]}, gpu=None, host="h",
                  versions={}, **start)

    def emit(self, type_: str, dt: float = 1.0, **fields) -> dict:
        self.t += dt
        e = {"seq": len(self.events) + 1, "t": self.t, "ts": "2026-12-01T00:00:00+00:00",
             "type": type_, **fields}
        self.events.append(e)
        return e

    def call(self, name: str = "bash") -> None:
        self.calls += 1
        self.emit("tool.call", id=f"t{self.calls}", name=name, input={})
        self.emit("tool.result", id=f"t{self.calls}", ok=True, output="")

    def evaluate(self, n: int, geo: float | None, mn: float | None, correct: bool = True,
                 set_: str = "bench", sha: str = "", speedups=(1.0, 1.0)) -> None:
        sha = sha or f"{n:064x}"
        self.call("evaluate")
        self.emit("eval.start", n=n, candidate_sha=sha, set=set_)
        for sid, sp in zip(("a", "b"), speedups, strict=False):
            self.emit("eval.scenario", n=n, scenario=sid, correct=correct, speedup=sp)
        self.emit("eval.end", n=n, candidate_sha=sha, set=set_, result=f"evals/{n:04d}.json",
                  summary={"all_correct": correct, "geomean_speedup": geo, "min_speedup": mn,
                           "failing": [] if correct else ["a", "b"]})

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in self.events))
        return folder


def one(folder: Path, **kw):
    (r,) = build_report([folder], **kw).sessions
    return r


def test_best_values_come_from_correct_goal_set_evaluations(tmp_path):
    log = Log()
    log.evaluate(1, 1.10, 1.00)
    log.evaluate(2, 9.00, 9.00, correct=False)       # wrong: never counts
    log.evaluate(3, 5.00, 5.00, set_="full")         # another set: not the goal's
    log.evaluate(4, 1.30, 1.05)                      # best geomean
    log.evaluate(5, 1.25, 1.15, speedups=(1.15, 1.35))  # best min, best as ranked
    r = one(log.write(tmp_path / "s"))
    assert (r.best_geomean, r.best_min, r.best_evaluation) == (1.30, 1.15, 5)
    assert [s["speedup"] for s in r.best_scenarios] == [1.15, 1.35]
    assert (r.evaluations, r.evaluations_correct, r.evaluations_incorrect) == (5, 4, 1)
    assert [p.best_geomean for p in r.series] == [1.10, 1.10, 1.10, 1.30, 1.30]
    assert not r.goal_met and r.time_to_goal_s is None  # min 1.15 < goal 1.2


def test_question_gains_and_tool_calls_per_question(tmp_path):
    log = Log(auto_questions=True)
    log.emit("trigger", kind="start", reason="", suggestions=["measurement.what-is-timed"])
    log.emit("question", text="q1?", bank_id="measurement.what-is-timed", trigger="start",
             source="auto")
    log.call()
    log.evaluate(1, 1.00, 0.90)
    log.emit("question", text="mine?", bank_id=None, trigger=None, source="human")
    log.call()
    log.call()
    log.evaluate(2, 1.10, 1.00)
    log.evaluate(3, 1.05, 0.95)
    log.emit("question", text="q3?", bank_id="no.such-entry", trigger="plateau", source="auto")
    log.evaluate(4, 1.32, 1.21)
    r = one(log.write(tmp_path / "s"), window=1)
    q1, q2, q3 = r.question_gains
    # q1: nothing correct before it; after one evaluation the best is 1.00 / 0.90
    assert q1.best_geomean_before is None and q1.geomean_gain is None
    assert (q1.best_geomean_after, q1.best_min_after) == (1.00, 0.90)
    # q2: window 1 sees evaluation 2 only
    assert q2.best_geomean_before == 1.00 and q2.geomean_gain == pytest.approx(0.10)
    assert q2.min_gain == pytest.approx(1.00 / 0.90 - 1)
    assert q3.geomean_gain == pytest.approx(1.32 / 1.10 - 1)
    assert (q1.tool_calls_after, q2.tool_calls_after, q3.tool_calls_after) == (2, 4, 1)
    assert r.questions == 3 and r.tool_calls == 7
    assert r.tool_calls_per_question == pytest.approx(7 / 3)
    assert r.questions_by_trigger == {"start": 1, "none": 1, "plateau": 1}
    assert r.questions_by_group == {"measurement": 1, "free_text": 1, "unknown": 1}
    assert (r.questions_auto, r.questions_human) == (2, 1)
    assert r.goal_met and r.evaluations_to_goal == 4 and r.tool_calls_to_goal == 7
    # a wider window reaches evaluation 4 from q2 too
    q2_wide = one(tmp_path / "s", window=5).question_gains[1]
    assert q2_wide.best_geomean_after == 1.32 and q2_wide.window_evaluations == 3


def test_a_met_stop_is_re_derived_from_the_evaluation_it_judged(tmp_path):
    # the stop says met, but its evaluation (the last before it: an older log names none)
    # is below the start's goal: the report says so instead of "met"
    log = Log()
    log.evaluate(1, 1.1, 1.1)
    log.call()
    log.emit("stophook", met=True, failing=[])
    log.emit("campaign.end", reason="goal_met")
    r = one(log.write(tmp_path / "s"))
    assert not r.goal_met and r.end_reason == "goal_met" and r.time_to_goal_s is None
    assert any("cites evaluation #1, which does not meet the goal: its min 1.100x is below "
               "the goal's 1.2x" in c for c in r.contradictions)
    assert r.duration_s == log.events[-1]["t"]
    # the same stop on an evaluation that meets it: met, at the evaluation
    log = Log()
    log.evaluate(1, 1.25, 1.21)
    log.call()
    log.emit("stophook", met=True, failing=[], n=1)
    log.emit("campaign.end", reason="goal_met", n=1)
    r = one(log.write(tmp_path / "t"))
    assert r.goal_met and r.contradictions == [] and r.evaluations_to_goal == 1


def test_failure_explanation_is_the_text_before_the_next_action(tmp_path):
    log = Log()
    log.evaluate(1, None, None, correct=False)
    log.emit("usage", input_tokens=10, output_tokens=5, cache_read=100, cache_write=20,
             cost_usd=0.25)
    log.emit("agent.text", text="The index is off ")
    log.emit("agent.text", text="by one.")
    log.emit("trigger", kind="correctness_failure", reason="", suggestions=[])
    log.call("edit_file")
    log.emit("agent.text", text="not part of it")
    log.evaluate(2, None, None, correct=False)  # no words before the next evaluation
    log.evaluate(3, 1.0, 1.0)
    r = one(log.write(tmp_path / "s"))
    f1, f2 = r.correctness_failures
    assert f1.explanation == "The index is off by one." and f1.failing == ["a", "b"]
    assert f1.what == "2 scenario(s) incorrect (a, b)"
    assert f2.explanation is None
    assert r.tokens == {"input": 10, "output": 5, "cache_read": 100, "cache_write": 20,
                        "total": 135}
    assert r.cost_usd == 0.25 and r.turns == 1 and r.triggers == {"correctness_failure": 1}


def test_churn_counts_lines_re_added_after_deletion(tmp_path):
    base = "int a = 1;\nint b = 2;\n}\nint c = 3;\n"
    no_b = "int a = 1;\n}\nint c = 3;\n"                      # deletes b
    back = "int a = 1;\nint b = 2;\n}\nint c = 3;\nint d = 4;\n"  # re-adds b, adds d
    log = Log()
    folder = tmp_path / "s"
    (folder / "candidates").mkdir(parents=True)
    for n, src in enumerate((base, no_b, no_b, back), 1):
        sha = hashlib.sha256(src.encode()).hexdigest()
        (folder / "candidates" / f"{sha[:16]}.cu").write_text(src)
        log.evaluate(n, 1.0, 1.0, sha=sha)
    log.evaluate(5, 1.0, 1.0, sha="f" * 64)  # never kept
    r = one(log.write(folder))
    c = r.churn
    assert (c.added, c.readded, c.deleted, c.share) == (2, 1, 1, 0.5)
    assert (c.candidates, c.missing) == (3, 1)


def test_churn_ignores_punctuation_lines_and_moves():
    a = "x = 1;\n{\ny = 2;\n}\n"
    b = "y = 2;\nx = 1;\n"          # a move and braces gone
    c = "{\ny = 2;\nx = 1;\n}\n"    # braces back: not churn
    got = churn([a, b, c])
    assert got.readded == 0 and got.share == 0.0
    assert churn([a]).share is None and churn([None, a, None]).missing == 2


def test_fleet_folder_groups_with_medians(tmp_path):
    fleet = tmp_path / "fleet"
    for i, (mode, geo) in enumerate((("auto", 1.2), ("auto", 1.4), ("auto", 1.9), ("none", 1.1))):
        log = Log(auto_questions=mode == "auto")
        log.evaluate(1, geo, geo)
        log.write(fleet / f"c{i}")
    (fleet / "queued").mkdir()
    (fleet / "queued" / "events.jsonl").write_text("")   # not started yet: left out
    (fleet / "fleet.toml").write_text("")                 # not a session: ignored
    rep = build_report([fleet])
    assert [s.session for s in rep.sessions] == ["c0", "c1", "c2", "c3"]
    assert any("queued" in n for n in rep.notes)
    by_mode = {g["questions_mode"]: g for g in rep.groups}
    assert by_mode["auto"]["n"] == 3 and by_mode["auto"]["medians"]["best_geomean"] == 1.4
    assert by_mode["none"]["sessions"] == ["c3"] and by_mode["none"]["agent"] == "socratic"
    r = run("report", str(fleet))
    assert r.returncode == 0 and "groups (medians)" in r.stdout and "left out" in r.stderr


def test_a_fleet_manifest_names_questions_mode_and_agent(tmp_path):
    fleet = tmp_path / "fleet"
    Log().write(fleet / "01-rmsnorm-human")                 # nothing in the log says human
    Log(agent="claude").write(fleet / "02-rmsnorm-auto")
    (fleet / "fleet.json").write_text(json.dumps({"schema": "socratic.fleet/1", "campaigns": [
        {"name": "01-rmsnorm-human", "task": "rmsnorm", "questions": "human",
         "agent": "socratic"},
        {"name": "02-rmsnorm-auto", "task": "rmsnorm", "questions": "auto", "agent": "x"}]}))
    a, b = build_report([fleet]).sessions
    assert (a.questions_mode, a.agent) == ("human", "socratic")
    assert (b.questions_mode, b.agent) == ("auto", "claude")  # the log's own agent wins
    (fleet / "fleet.json").write_text("{broken")
    assert build_report([fleet]).sessions[0].questions_mode == "none"


def test_several_session_paths_and_agent_named_by_the_log(tmp_path):
    log = Log(agent="claude", questions="human")
    log.evaluate(1, 1.0, 1.0)
    other = log.write(tmp_path / "attached")
    rep = build_report([DEMO, other])
    assert [(g["questions_mode"], g["agent"], g["sessions"]) for g in rep.groups] == [
        ("auto", "socratic", ["demo"]), ("human", "claude", ["attached"])]
    assert {s.agent for s in rep.sessions} == {"claude", "socratic"}


def test_attached_campaign_without_auto_questions_is_human_mode(tmp_path):
    log = Log()
    folder = log.write(tmp_path / "s")
    (folder / "config.json").write_text(json.dumps({"config": {"wait_for_human": True}}))
    assert one(folder).questions_mode == "human"
    (folder / "config.json").write_text("{broken")
    assert one(folder).questions_mode == "none"
    (folder / "config.json").write_text(json.dumps({"config": {"auto_questions": True}}))
    assert one(folder).questions_mode == "auto"  # the log names none: the settings decide
    log.events[0]["auto_questions"] = False
    log.write(folder)
    assert one(folder).questions_mode == "none"  # the log's own word wins


def test_synthetic_long_campaign_counts(tmp_path):
    folder, events = make_session(tmp_path / "long", n_events=3000, seed=5)
    r = one(folder)
    assert r.events == 3000
    assert r.evaluations == sum(1 for e in events if e["type"] == "eval.end")
    assert r.questions == sum(1 for e in events if e["type"] == "question")
    assert r.tool_calls == sum(1 for e in events if e["type"] == "tool.call")
    assert sum(r.questions_by_trigger.values()) == r.questions
    scen = events[0]["scenarios"]
    goal_set = scen.get("set") if isinstance(scen, dict) else None
    assert r.goal_set == goal_set  # a log that names no set: every evaluation counts
    good = [e["summary"]["geomean_speedup"] for e in events
            if e["type"] == "eval.end" and e["summary"]["all_correct"]
            and (goal_set is None or e.get("set") in (None, goal_set))]
    assert r.best_geomean == max(good)


@pytest.mark.slow
def test_a_25000_event_campaign_reports_fast(tmp_path):
    """The target is < 2 s end to end (benchmarks/report_load.py measures it); the bound here
    leaves room for a busy test machine."""
    import time

    folder, events = make_session(tmp_path / "long", n_events=25_000, seed=1)
    t = time.perf_counter()
    rep = build_report([folder])
    json.dumps(rep.to_dict())
    took = time.perf_counter() - t
    assert rep.sessions[0].evaluations == sum(1 for e in events if e["type"] == "eval.end")
    assert took < 3.0, f"{took:.2f} s"


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("case", ["missing", "file", "empty", "binary", "no-start",
                                  "no-sessions"])
def test_bad_input_is_one_line_exit_2(tmp_path, case):
    target = tmp_path / "s"
    if case == "file":
        target.write_text("x")
    elif case != "missing":
        target.mkdir()
    if case == "empty":
        (target / "events.jsonl").write_text("")
    elif case == "binary":
        noise = os.urandom(4000).replace(b"\n", b"")
        (target / "events.jsonl").write_bytes(noise + b"\n\x00\xff\n")
    elif case == "no-start":
        (target / "events.jsonl").write_text(
            '{"seq":1,"t":0,"ts":"2026-12-01T00:00:00+00:00","type":"agent.text","text":"x"}\n')
    elif case == "no-sessions":
        (target / "sub").mkdir()
    r = run("report", str(target))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert str(target) in r.stderr


def test_bad_window_and_html_folder(tmp_path):
    r = run("report", str(DEMO), "--window", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r = run("report", str(DEMO), "--html", str(tmp_path))
    assert r.returncode == 2 and "is a folder" in r.stderr
    r = run("report", str(DEMO), "--html", str(tmp_path / "no" / "r.html"))
    assert r.returncode == 2 and "cannot write" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("name", ["events.jsonl", "evals/0001.json", "workspace/candidate.cu"])
def test_html_is_never_written_over_a_sessions_file(tmp_path, name):
    # `--html SESSION/events.jsonl` replaced the campaign's log with the page
    folder = tmp_path / "s"
    shutil.copytree(DEMO, folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    r = run("report", str(tmp_path), "--html", str(folder / name))   # a folder of sessions too
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"--html {folder / name}: a file of the session {folder}" in r.stderr
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    page = folder / "report.html"                      # beside them: fine, and again
    for _ in range(2):
        assert run("report", str(folder), "--html", str(page)).returncode == 0
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_unreadable_lines_are_skipped_and_noted(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(DEMO, folder)
    with open(folder / "events.jsonl", "a") as fh:
        fh.write("not json\n{\"truncated\": ")
    r = run("report", str(folder), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["sessions"][0]["skipped_lines"] == 1
    assert "1 unreadable line(s) skipped" in r.stderr


def test_damaged_events_are_skipped_and_counted_not_a_traceback(tmp_path):
    events = demo_events()
    for e in events:  # damage a hand-edited or foreign log can carry
        if e["type"] == "campaign.start":
            e["goal"]["min_speedup"] = float("nan")      # a number, but none: read as missing
        elif e["type"] == "eval.end" and e["n"] == 4:
            e["seq"] = "x"                                # not an event: skipped
        elif e["type"] == "eval.end" and e["n"] == 6:
            e["summary"]["geomean_speedup"] = float("inf")
        elif e["type"] == "question" and e["seq"] == 36:
            e["source"] = {"a": 1}                        # skipped
        elif e["type"] == "usage" and e["seq"] == 6:
            e["cost_usd"] = "cheap"                       # skipped
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    r = run("report", str(folder), "--json")
    assert r.returncode == 0, r.stderr
    assert "3 unreadable line(s) skipped" in r.stderr

    def no_constants(name):
        raise AssertionError(f"{name} in the JSON output")
    s = json.loads(r.stdout, parse_constant=no_constants)["sessions"][0]
    assert (s["evaluations"], s["questions"], s["skipped_lines"]) == (5, 7, 3)
    assert s["goal"] == {"min_speedup": None, "against": "baseline"}
    assert [p["geomean"] for p in s["series"] if p["n"] == 6] == [None]
    assert run("report", str(folder), "--md").returncode == 0


# ---------------------------------------------------------------------------- bank stats


def test_bank_stats_sessions_names_what_followed():
    r = run("bank", "stats", "--sessions", str(DEMO), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    asked = [e for e in demo_events() if e["type"] == "question"]
    assert doc["questions"] == len(asked)
    assert doc["free_text"] == sum(1 for q in asked if not q.get("bank_id"))
    assert sum(e["asked"] for e in doc["entries"]) == sum(1 for q in asked if q.get("bank_id"))
    by_id = {e["id"]: e for e in doc["entries"]}
    em = by_id["correctness.error-map"]
    assert em["followed_by_progress"] == 1 and em["trace"] == "demo#84"
    assert em["group"] == "correctness"
    assert by_id["validity.explain-the-gain"]["trace"] is None  # nothing rose after it
    r = run("bank", "stats", "--sessions", str(DEMO))
    assert r.returncode == 0 and "trace source: demo#84" in r.stdout
    r = run("bank", "stats", "--sessions", str(DEMO / "nope"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
