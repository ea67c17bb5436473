"""A goal with `hidden = true` holds the speed rule on every hidden scenario drawn in an
evaluation: a candidate fast on the listed set but slow on a hidden draw is refused, the
refusal naming the hidden shape and its ratio and saying that the draws change every
evaluation; the same goal is met once every draw is fast. The attention task sets it."""

from __future__ import annotations

import json
import re

import pytest

from socratic.contracts import Goal
from socratic.errors import InputError
from socratic.eventlog import read_jsonl
from socratic.harness.api.campaign import Campaign
from socratic.harness.core.history import Evaluation, judge
from socratic.harness.core.task import CampaignTask
from socratic.resources import resolve_task_dir
from socratic.taskfile import load_task
from socratic_doubles.fakeapi import FakeAnthropic, last_user_text
from socratic_doubles.testing import FAKE_KEY, candidate_source, eval_result, fake_config, make_task


def _campaign(tmp_path, task, first: str, config=None):
    script = [
        {"text": "Fast on every listed shape.", "tools": [
            ("write_file", {"path": "candidate.cu", "content": first}), ("evaluate", {})]},
        {"text": "Done."},                                      # stop: refused on a hidden draw
        {"text": "Fast on the general path too.", "tools": [
            ("write_file", {"path": "candidate.cu", "content": candidate_source(1.5)})]},
        {"text": "Done now."},                                  # stop: met
    ]
    with FakeAnthropic(script) as api:
        camp = Campaign.create(task, config or fake_config(), session_dir=tmp_path / "s",
                               api_key=FAKE_KEY, base_url=api.url)
        reason = camp.run()
    events = read_jsonl(tmp_path / "s" / "events.jsonl")[0]
    return reason, events, api


def test_a_hidden_draw_below_the_goal_refuses_the_stop_naming_its_shape(tmp_path):
    task = make_task(tmp_path, goal=1.2, hidden=True, goal_hidden=True)
    slow_hidden = candidate_source(1.5, "// speedup-hidden: 0.9")
    reason, events, api = _campaign(tmp_path, task, slow_hidden)
    assert reason == "goal_met"
    start = next(e for e in events if e["type"] == "campaign.start")
    assert start["goal"] == {"min_speedup": 1.2, "against": "baseline", "hidden": True}
    hooks = [e for e in events if e["type"] == "stophook"]
    assert [h["met"] for h in hooks] == [False, True]
    failing = hooks[0]["failing"]
    # the listed scenarios (1.5x) pass; every hidden draw (0.9x) is named, correct but slow
    assert failing and all(f["scenario"].startswith("hidden-") for f in failing)
    assert all(f["correct"] and f["speedup"] == 0.9 for f in failing)
    refusal = last_user_text(api.requests[2])
    shape = re.search(r"too slow on a hidden scenario \((n=\d+)\): 0\.900x vs the baseline", refusal)
    assert shape, refusal
    assert "change every evaluation" in refusal and "across the task's whole space" in refusal
    assert "an evaluation of the set `space:64`" in refusal
    # the refused evaluation's own hidden draws name that shape
    judged = json.loads((tmp_path / "s" / "evals" / f"{hooks[0]['n']:04d}.json").read_text())
    assert {f"n={r['params']['n']}" for r in judged["hidden"]} == set(
        re.findall(r"hidden scenario \((n=\d+)\)", refusal))


def test_without_hidden_in_the_goal_the_same_candidate_meets_it(tmp_path):
    """The control: the same slow-on-hidden candidate under a goal without `hidden`."""
    task = make_task(tmp_path, goal=1.2, hidden=True)
    with FakeAnthropic([
        {"text": "x", "tools": [("write_file", {"path": "candidate.cu", "content":
                                                candidate_source(1.5, "// speedup-hidden: 0.9")})]},
        {"text": "Done."},
    ]) as api:
        camp = Campaign.create(task, fake_config(), session_dir=tmp_path / "s", api_key=FAKE_KEY,
                               base_url=api.url)
        assert camp.run() == "goal_met"


def test_the_cli_override_turns_the_rule_on(tmp_path):
    """`--goal-hidden` (Config.goal_hidden) on a task whose [goal] does not set it."""
    task = make_task(tmp_path, goal=1.2, hidden=True)
    reason, events, _ = _campaign(tmp_path, task, candidate_source(1.5, "// speedup-hidden: 0.9"),
                                  fake_config(goal_hidden=True))
    assert reason == "goal_met"
    assert [h["met"] for h in events if h["type"] == "stophook"] == [False, True]


def _hidden_result(speedup: float, vs_fa3: float | None, correct: bool = True):
    res = eval_result([{"id": "a", "correct": True, "speedup": 2.0,
                        "comparisons": {"fa3": {"ms": 1.0, "speedup": 1.1}}}])
    row = {"id": "hidden-1-d192-s77", "correct": correct, "speedup": speedup,
           "params": {"head_dim": 192, "seqlen_q": 77, "causal": 1}}
    if vs_fa3 is not None:
        row["comparisons"] = {"fa3": {"ms": 1.0, "speedup": vs_fa3}}
    res.hidden = eval_result([row]).scenarios
    return Evaluation(1, "0" * 64, "bench", res, 0)


def test_judge_holds_hidden_draws_to_the_goal_against_a_comparison():
    on = Goal(min_speedup=1.0, against="fa3", hidden=True)
    met, failing = judge(_hidden_result(2.0, 0.46), on)
    assert not met and [f.scenario for f in failing] == ["hidden-1-d192-s77"]
    assert "head_dim=192, seqlen_q=77, causal=1" in failing[0].detail
    assert "0.460x vs fa3 (goal >= 1x)" in failing[0].detail
    assert judge(_hidden_result(2.0, 1.01), on)[0]
    # a hidden draw without the comparison's time cannot show it meets the goal
    met, failing = judge(_hidden_result(2.0, None), on)
    assert not met and "not timed against fa3" in failing[0].detail
    # off (or absent, as in logs before it): only correctness counts on hidden draws
    assert judge(_hidden_result(2.0, 0.46), Goal(min_speedup=1.0, against="fa3"))[0]
    assert judge(_hidden_result(2.0, 0.46), Goal(min_speedup=1.0, against="fa3", hidden=False))[0]


def test_the_attention_task_sets_it_and_the_flags_override_it():
    task = CampaignTask.load(resolve_task_dir("flash_attn_fwd"))
    assert task.goal().hidden is True
    assert task.goal(hidden=False).hidden is None          # off: written as before
    assert "the hidden ones drawn in the evaluation included" in task.goal().describe()
    assert CampaignTask.load(resolve_task_dir("rmsnorm")).goal().hidden is None


@pytest.mark.parametrize("value, message", [
    ('"yes"', "`goal.hidden` must be true or false (got 'yes')"),
    ("1", "`goal.hidden` must be true or false (got 1)"),
])
def test_a_bad_hidden_value_is_one_line(tmp_path, value, message):
    d = make_task(tmp_path)
    text = (d / "task.toml").read_text().replace('against = "baseline"\n',
                                                 f'against = "baseline"\nhidden = {value}\n', 1)
    (d / "task.toml").write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        load_task(d)
    assert str(err.value).startswith(f"{d / 'task.toml'}:9:") and "\n" not in str(err.value)


def test_a_misspelt_goal_key_is_one_line(tmp_path):
    d = make_task(tmp_path)
    text = (d / "task.toml").read_text().replace('against = "baseline"\n',
                                                 'against = "baseline"\nhiden = true\n', 1)
    (d / "task.toml").write_text(text)
    with pytest.raises(InputError, match=re.escape("unknown key `goal.hiden`")):
        load_task(d)


def test_run_and_fleet_files_take_the_flag(tmp_path):
    from socratic.cli import build_parser
    from socratic.fleet.spec import load_fleet

    parser = build_parser()
    assert parser.parse_args(["run", "rmsnorm", "--goal-hidden"]).goal_hidden is True
    assert parser.parse_args(["run", "rmsnorm", "--no-goal-hidden"]).goal_hidden is False
    assert parser.parse_args(["attach", "rmsnorm", "--agent", "manual"]).goal_hidden is None
    f = tmp_path / "fleet.toml"
    f.write_text('[[campaign]]\ntask = "rmsnorm"\ngoal_hidden = true\n'
                 '[[campaign]]\ntask = "rmsnorm"\nagent = "claude"\ngoal_hidden = false\n')
    specs = load_fleet(f).campaigns
    assert "--goal-hidden" in specs[0].args and "--no-goal-hidden" in specs[1].args
    f.write_text('[[campaign]]\ntask = "rmsnorm"\ngoal_hidden = "on"\n')
    with pytest.raises(InputError, match="`goal_hidden` must be true or false"):
        load_fleet(f)


def test_the_agent_can_evaluate_the_space_and_sees_its_coverage(tmp_path):
    """The evaluate tool takes `space:N`: recorded like any evaluation, the coverage table in
    what the agent reads, never the goal's judge."""
    task = make_task(tmp_path, goal=1.2, hidden=True, goal_hidden=True)
    with FakeAnthropic([
        {"text": "Where is it slow?", "tools": [
            ("write_file", {"path": "candidate.cu", "content": candidate_source(1.5, "// speedup-hidden: 0.9")}),
            ("evaluate", {"scenarios": "space:6@3"})]},
        {"text": "Head dim ... is slow."},
    ]) as api:
        camp = Campaign.create(task, fake_config(max_turns=2), session_dir=tmp_path / "s",
                               api_key=FAKE_KEY, base_url=api.url)
        camp.run()
    seen = last_user_text(api.requests[1])
    events = read_jsonl(tmp_path / "s" / "events.jsonl")[0]
    end = next(e for e in events if e["type"] == "eval.end")
    assert end["set"] == "space:6@3"
    saved = json.loads((tmp_path / "s" / end["result"]).read_text())
    assert saved["coverage"]["seed"] == 3 and saved["coverage"]["n"] == 6
    assert "coverage: 6 scenarios drawn from the task's space (seed 3)" in seen
    assert "0.900x  space-3-1-" in seen
    assert not any(e["type"] == "stophook" and e.get("n") == end["n"] for e in events)


def test_the_evaluation_text_marks_hidden_draws_below_the_goal(tmp_path):
    # issue 41: what the agent reads (and the TUI's transcript shows) marks the slow draws
    task = make_task(tmp_path, goal=1.2, hidden=True, goal_hidden=True)
    _, events, _ = _campaign(tmp_path, task, candidate_source(1.5, "// speedup-hidden: 0.9"))
    out = next(e["output"] for e in events if e["type"] == "tool.result" and e["name"] == "evaluate")
    hidden = [line for line in out.splitlines() if line.startswith("  hidden-")]
    assert hidden and all("0.900x vs baseline ▼ below the goal (1.2x)" in line for line in hidden), out
