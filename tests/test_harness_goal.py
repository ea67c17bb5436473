"""The bundled tasks' default goals cannot be met by doing nothing, a goal against a
comparison (FlashAttention-3) is judged on that comparison's per-scenario speedup, and a
comparison that cannot run on the machine is said in one line."""

from __future__ import annotations

import json

import pytest

from socratic.cli import main
from socratic.contracts import parse_eval
from socratic.errors import InputError
from socratic.harness.core.history import Evaluation, describe_failing, judge
from socratic.harness.core.task import CampaignTask
from socratic.resources import demo_session_dir, resolve_task_dir
from socratic_doubles.testing import FAKE_KEY, make_task


def evaluation(result: dict) -> Evaluation:
    return Evaluation(1, result["candidate"]["sha256"], result["set"], parse_eval(result),
                      result["exit_code"])


def test_recorded_rmsnorm_baseline_does_not_meet_the_default_goal():
    task = CampaignTask.load(resolve_task_dir("rmsnorm"))
    # the demo's first evaluation: the unchanged baseline on the H200, timed against itself
    result = json.loads((demo_session_dir() / "evals" / "0001.json").read_text())
    assert result["task"] == "rmsnorm" and result["summary"]["all_correct"]
    speedups = [r["speedup"] for r in result["scenarios"]]
    assert 0.98 < min(speedups) and max(speedups) < 1.02          # the noise band
    goal = task.goal()
    assert goal.against == "baseline" and goal.min_speedup >= 1.05
    met, failing = judge(evaluation(result), goal)
    assert not met and len(failing) == len(speedups)              # every scenario short
    # the old goal (1.0 against the baseline) was met by doing nothing on some runs
    assert judge(evaluation(result), task.goal(0.99))[0]


def attention_baseline_result(vs_fa3: float | None, unavailable: str | None = None) -> dict:
    """The attention baseline timed against itself (0.998-1.005x, README) with FA3 beside
    it at ~0.39x (FACTS), as the evaluator writes it."""
    rows = []
    for i, sc in enumerate(f"bench-{i}" for i in range(26)):
        row = {"id": sc, "params": {}, "correct": True, "failures": [], "error": None,
               "err": 0.01, "err_baseline": 0.01, "err_ratio": 1.0, "errors": {},
               "speedup": 0.998 + 0.007 * (i % 2), "candidate_ms": 1.0, "baseline_ms": 1.0,
               "comparisons": {}}
        if vs_fa3 is not None:
            row["comparisons"] = {"fa3": {"ms": vs_fa3, "speedup": vs_fa3}}
        rows.append(row)
    doc = {"schema": "socratic.eval/1", "task": "flash_attn_fwd", "set": "bench",
           "candidate": {"path": "baseline.cu", "sha256": "0" * 64},
           "gpu": None, "build": {"ok": True, "cached": True, "seconds": 0.0, "command": "nvcc",
                                  "log": "", "resources": []},
           "bans": {"ok": True, "hits": []}, "scenarios": rows,
           "summary": {"all_correct": True, "n": len(rows), "n_correct": len(rows),
                       "geomean_speedup": 1.0, "min_speedup": 0.998, "worst_scenario": "bench-0",
                       "geomean_vs": {}},
           "exit_code": 0}
    if unavailable is not None:
        doc["comparisons_unavailable"] = {"fa3": unavailable}
    return doc


def test_attention_default_goal_is_fa3_and_the_baseline_falls_short():
    task = CampaignTask.load(resolve_task_dir("flash_attn_fwd"))
    goal = task.goal()
    assert goal.against == "fa3" and goal.min_speedup >= 1.0
    met, failing = judge(evaluation(attention_baseline_result(0.39)), goal)
    assert not met and all(f.speedup == 0.39 for f in failing)   # judged on FA3's number
    assert "vs fa3" in describe_failing(failing, goal)
    met, _ = judge(evaluation(attention_baseline_result(1.02)), goal)  # as fast as FA3: met
    assert met


def test_a_comparison_missing_on_this_machine_is_one_clear_line():
    goal = CampaignTask.load(resolve_task_dir("flash_attn_fwd")).goal()
    result = attention_baseline_result(None, unavailable="No module named 'fa3_fwd_config'")
    result["scenarios"][0]["correct"] = False
    met, failing = judge(evaluation(result), goal)
    assert not met and failing[0].scenario == "(fa3)"
    text = describe_failing(failing, goal)
    assert "could not run on this machine" in text and "fa3_fwd_config" in text
    assert "--goal-against baseline" in text
    assert len(failing) == 2                     # that line, and the one incorrect scenario
    # available, but not timed on one scenario: said on that scenario's line
    result = attention_baseline_result(1.1)
    del result["scenarios"][3]["comparisons"]["fa3"]
    met, failing = judge(evaluation(result), goal)
    assert not met and len(failing) == 1 and "fa3 was not timed" in failing[0].detail


def test_goal_against_must_name_the_baseline_or_a_comparison(tmp_path, monkeypatch, capsys):
    src = resolve_task_dir("flash_attn_fwd")
    task = CampaignTask.load(src)
    assert task.goal(2.0, "baseline").to_dict() == {"min_speedup": 2.0, "against": "baseline",
                                                    "hidden": True}   # the task's [goal] hidden
    assert task.goal(None, "cudnn").against == "cudnn"
    with pytest.raises(InputError, match="--goal-against fa4: .* baseline, fa3, cudnn, fa2"):
        task.goal(None, "fa4")
    bad = tmp_path / "t"
    bad.mkdir()
    for f in src.iterdir():
        if f.is_file():
            (bad / f.name).write_bytes(f.read_bytes())
    toml = (bad / "task.toml").read_text().replace('against = "fa3"', 'against = "fa4"')
    (bad / "task.toml").write_text(toml)
    with pytest.raises(InputError, match="goal.against"):
        CampaignTask.load(bad)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    tiny = make_task(tmp_path)                   # no comparisons: only the baseline
    assert main(["run", str(tiny), "--headless", "--goal-against", "fa3",
                 "--session-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--goal-against fa3" in err and "baseline" in err
    assert not (tmp_path / "s").exists()


def test_goal_against_reaches_the_campaign(tmp_path, monkeypatch):
    from socratic.harness.api.campaign import Campaign
    from socratic_doubles.fakeapi import FakeAnthropic
    from socratic_doubles.testing import fake_config

    task = make_task(tmp_path)
    toml = (task / "task.toml").read_text() + '\n[comparisons]\nnames = ["fast"]\n'
    (task / "task.toml").write_text(toml)
    with FakeAnthropic([{"text": "done"}]) as api:
        c = Campaign.create(task, fake_config(goal_against="fast", goal_min_speedup=1.5,
                                              max_turns=1),
                            session_dir=tmp_path / "s", api_key=FAKE_KEY, base_url=api.url,
                            suggester=lambda kind, asked, text: [])
        c.run()
    start = json.loads((tmp_path / "s" / "events.jsonl").read_text().splitlines()[0])
    assert start["goal"] == {"min_speedup": 1.5, "against": "fast"}
    assert "against `fast`" in c.system
