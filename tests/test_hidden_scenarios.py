"""Hidden scenarios and input distributions (task.toml [hidden], [[distributions]]): drawn
per evaluation and different every time, declared where `--list` shows them, and judged by
the stop hook, which refuses a candidate that fails only a hidden scenario, naming its shape."""

from __future__ import annotations

import json
import re

import pytest

from socratic.errors import InputError
from socratic.eventlog import read_jsonl
from socratic.harness.api.campaign import Campaign
from socratic.taskfile import load_task
from socratic_doubles.fakeapi import FakeAnthropic, last_user_text
from socratic_doubles.testing import FAKE_KEY, candidate_source, fake_config, make_task
from tests.evalcli import ROOT, socratic

ATTN, RMS = ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd", ROOT / "src" / "socratic" / "kernels" / "rmsnorm"


def test_hidden_scenarios_are_drawn_afresh_within_the_declared_space():
    task = load_task(ATTN)
    a, b = task.draw_hidden(8, seed=1), task.draw_hidden(8, seed=2)
    assert [s.id for s in a] == [s.id for s in task.draw_hidden(8, seed=1)]   # one seed, one draw
    assert {s.id.split("-", 2)[2] for s in a} != {s.id.split("-", 2)[2] for s in b}
    for sc in a + b:
        v = sc.values
        assert sc.hidden and sc.id.startswith("hidden-")
        assert v["heads_q"] == v["heads_kv"] * v["group"] <= 128
        assert 64 <= v["seqlen_q"] <= 12288 and v["head_dim"] in (64, 96, 128, 192, 256)
        assert task.metric("flops", sc) <= 2e12
    assert load_task(RMS).draw_hidden(0, seed=1) == []


def test_both_tasks_declare_distributions_and_list_them():
    attn = load_task(ATTN)
    assert [d.name for d in attn.distributions] == ["normal", "large_logits", "outlier_channels"]
    assert attn.distributions[1].inputs["q"].scale == 8.0
    assert [d.name for d in load_task(RMS).distributions] == ["normal", "extreme_rows"]
    res = socratic("eval", "rmsnorm", "--list")
    assert res.code == 0 and "extreme_rows" in res.stdout and "hidden: 4 scenarios drawn per evaluation" in res.stdout
    doc = json.loads(socratic("eval", "flash_attn_fwd", "--list", "--json").stdout)
    assert doc["hidden"]["count"] == 4 and doc["hidden"]["fields"]["seqlen_k"].endswith("or seqlen_q (60%)")
    assert [d["name"] for d in doc["distributions"]][1] == "large_logits"


@pytest.mark.parametrize("toml, message", [
    ('[[distributions]]\nname = "x"\ninputs = { nope = { scale = 2.0 } }\n', "'nope' is not an input buffer"),
    ('[[distributions]]\nname = "x"\ninputs = { y = { scale = 2.0 } }\n', "'y' is not an input buffer"),   # an output
    ('[hidden]\ncount = 2\n', "needs `count` and a `[hidden.fields]` table"),
    ('[hidden]\ncount = 2\n[hidden.fields]\nn = { min = 0, max = 9, scale = "log" }\n', "log scale needs min >= 1"),
    ('[hidden]\ncount = 2\n[hidden.fields]\nn = { min = 5, max = 9, equal_to = "m" }\n', "not drawn before it"),
])
def test_bad_declarations_are_one_line_errors_naming_the_file(tmp_path, toml, message):
    d = make_task(tmp_path)
    (d / "task.toml").write_text((d / "task.toml").read_text() + toml)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        load_task(d)
    assert str(err.value).startswith(str(d / "task.toml")) and "\n" not in str(err.value)


def test_a_candidate_failing_only_a_hidden_scenario_is_refused_with_its_shape(tmp_path):
    task = make_task(tmp_path, goal=1.2, hidden=True)
    fixed = candidate_source(1.5)
    script = [
        {"text": "Fast on every listed shape.", "tools": [
            ("write_file", {"path": "candidate.cu", "content": candidate_source(1.5, "// incorrect-hidden")}),
            ("evaluate", {})]},
        {"text": "Done."},                                      # stop: refused on a hidden scenario
        {"text": "Fixed the general case.", "tools": [("write_file", {"path": "candidate.cu", "content": fixed})]},
        {"text": "Done now."},                                  # stop: met
    ]
    with FakeAnthropic(script) as api:
        camp = Campaign.create(task, fake_config(), session_dir=tmp_path / "s", api_key=FAKE_KEY,
                               base_url=api.url)
        reason = camp.run()
    assert reason == "goal_met"
    events = read_jsonl(tmp_path / "s" / "events.jsonl")[0]
    hooks = [e for e in events if e["type"] == "stophook"]
    assert [h["met"] for h in hooks] == [False, True]
    failing = hooks[0]["failing"]
    assert failing and all(f["scenario"].startswith("hidden-") for f in failing)   # the listed ones pass
    refusal = last_user_text(api.requests[2])
    assert "INCORRECT on a hidden scenario (n=" in refusal and "the next evaluation draws other hidden shapes" in refusal
    # the evaluations drew different hidden shapes, each shown only in its own result
    drawn = []
    for path in sorted((tmp_path / "s" / "evals").glob("*.json")):
        doc = json.loads(path.read_text())
        drawn.append(tuple(r["params"]["n"] for r in doc["hidden"]))
        assert doc["hidden_summary"]["n"] == 2
    assert len(drawn) >= 2 and len(set(drawn)) == len(drawn)


def test_a_negative_hidden_count_is_a_one_line_error():
    res = socratic("eval", "rmsnorm", "--hidden", "-1")
    assert res.code == 2
    assert res.stderr.strip().splitlines() == ["socratic: error: --hidden must be 0 or more (got -1)"]


def test_the_table_shows_the_hidden_pass_rate_and_the_failing_shapes():
    from socratic.contracts import HiddenSummary
    from socratic.evaluator.report import table
    from socratic_doubles.testing import eval_result
    doc = eval_result([{"id": "a", "correct": True, "speedup": 1.1}])
    doc.hidden = eval_result([{"id": "hidden-1-r7-c57", "correct": False, "failures": ["extreme_rows: y: max error 2.4"]}]).scenarios
    doc.hidden_summary = HiddenSummary(n=2, n_correct=1, failing=["hidden-1-r7-c57"], geomean_speedup=1.05)
    text = table(doc)
    assert "hidden: 1/2 correct  geomean 1.050x  failing hidden-1-r7-c57" in text
    assert "hidden-1-r7-c57" in text.split("hidden:")[0] and "! extreme_rows: y: max error 2.4" in text
