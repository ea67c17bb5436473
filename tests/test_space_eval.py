"""`socratic eval TASK --space N [--seed S]`: N scenarios drawn from the task's hidden space
with a recorded seed (the same seed draws the same shapes), each drawn id runnable again
alone, and the coverage table (socratic.coverage) per hidden field. CPU paths: the draw,
`--list`, `--check-only`, bad input, the fake evaluator, and the coverage math."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest

from socratic.contracts import Comparison, ScenarioResult, parse_eval
from socratic.coverage import build, cells_worst_first, cross, lines
from socratic.errors import InputError
from socratic.taskfile import HiddenField, load_task, parse_space
from socratic_doubles.testing import eval_result, make_task
from tests.evalcli import ROOT, socratic

ATTN, RMS = ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd", ROOT / "src" / "socratic" / "kernels" / "rmsnorm"


def test_a_seed_draws_the_same_shapes_and_another_seed_others():
    task = load_task(ATTN)
    label, a = task.select("space:12@77")
    assert label == "space:12@77" and len(a) == 12
    assert [s.id for s in a] == [s.id for s in task.select("space:12@77")[1]]
    assert {s.id.split("-", 3)[3] for s in a} != {s.id.split("-", 3)[3] for s in task.select("space:12@78")[1]}
    assert all(re.fullmatch(r"space-77-\d+-d\d+-.+", s.id) and s.hidden for s in a)
    # the first k draws of a seed are the same whatever the count
    assert [s.id for s in task.select("space:5@77")[1]] == [s.id for s in a[:5]]
    # inside the declared space, as hidden draws are
    for sc in a:
        assert sc.values["heads_q"] <= 128 and task.metric("flops", sc) <= 2e12


def test_no_seed_given_socratic_picks_one_and_records_it_in_the_label():
    label, drawn = load_task(ATTN).select("space:3")
    space = parse_space(label)
    assert space is not None and space.n == 3 and space.seed is not None and 100000 <= space.seed < 10**6
    assert [s.id for s in drawn] == [s.id for s in load_task(ATTN).select(label)[1]]


def test_any_drawn_scenario_runs_again_by_its_id():
    task = load_task(ATTN)
    drawn = task.select("space:9@5")[1]
    label, again = task.select(f"{drawn[6].id},d128-s1k-b16-h16-full")
    assert [s.id for s in again] == [drawn[6].id, "d128-s1k-b16-h16-full"]
    assert again[0].values == drawn[6].values
    with pytest.raises(InputError, match=r"draw 7 of seed 5 is 'space-5-7-"):
        task.select(drawn[6].id.replace("space-5-7-d", "space-5-7-x"))


@pytest.mark.parametrize("spec, message", [
    ("space:0@1", "a space evaluation draws 1 to 4096 scenarios (got 0)"),
    ("space:5000", "a space evaluation draws 1 to 4096 scenarios (got 5000)"),
])
def test_bad_space_selections_are_one_line(spec, message):
    with pytest.raises(InputError, match=re.escape(message)):
        load_task(ATTN).select(spec)


def test_a_task_without_a_hidden_space_cannot_draw_one(tmp_path):
    with pytest.raises(InputError, match="declares no \\[hidden\\] space"):
        load_task(make_task(tmp_path)).select("space:4@1")


def test_list_shows_the_draw_and_the_same_seed_lists_the_same_ids():
    one = socratic("eval", "flash_attn_fwd", "--list", "--space", "6", "--seed", "9", "--json")
    two = socratic("eval", "flash_attn_fwd", "--list", "--space", "6", "--seed", "9", "--json")
    assert one.code == two.code == 0 and one.doc == two.doc
    assert one.doc["set"] == "space:6@9" and len(one.doc["scenarios"]) == 6
    text = socratic("eval", "flash_attn_fwd", "--list", "--space", "6", "--seed", "9")
    assert text.stdout.splitlines()[0] == "space:6@9 (6 scenarios)"
    assert [ln.strip() for ln in text.stdout.splitlines()[1:]] == one.doc["scenarios"]
    plain = socratic("eval", "flash_attn_fwd", "--list")
    assert "--space N [--seed S]" in plain.stdout


@pytest.mark.parametrize("args, message", [
    (["--space", "0"], "--space must be 1 to 4096 (got 0)"),
    (["--seed", "3"], "--seed goes with --space N"),
    (["--space", "3", "--scenarios", "bench"], "--space and --scenarios: give one"),
    (["--space", "3", "--seed", "-1"], "--seed must be 0 or more (got -1)"),
    (["--scenarios", "space-5-1-r1-c2"], "scenario 'space-5-1-r1-c2': draw 1 of seed 5 is"),
])
def test_bad_space_options_are_one_line_exit_2(args, message):
    res = socratic("eval", "rmsnorm", *args, "--check-only")
    assert res.code == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr


def test_check_only_records_the_space_set_without_a_gpu():
    res = socratic("eval", "rmsnorm", "--check-only", "--space", "3", "--seed", "5", "--json")
    assert res.code == 0, res.stderr
    assert res.doc["set"] == "space:3@5" and res.doc["scenarios"] == [] and "coverage" not in res.doc


def _fake(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "socratic_doubles.fakeeval", str(ATTN),
                           "--json", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_the_fake_evaluator_draws_the_same_space_and_builds_its_coverage():
    a, b = _fake("--space", "8", "--seed", "3"), _fake("--space", "8", "--seed", "3")
    assert a["set"] == "space:8@3" and "hidden" not in a          # no other hidden draws
    assert [r["id"] for r in a["scenarios"]] == [r["id"] for r in b["scenarios"]]
    cov = parse_eval(a).coverage
    assert cov is not None and cov.seed == 3 and cov.n == 8 and cov.grid == ["head_dim", "causal"]
    assert cov.fields == ["head_dim", "heads_kv", "group", "causal", "batch", "seqlen_q", "seqlen_k"]
    assert cov.axes == ["seqlen_q", "seqlen_k"]
    assert sum(c.n for c in cov.cells if c.field == "head_dim") == 8
    # a drawn id runs again alone, with the same shape
    again = _fake("--scenarios", a["scenarios"][4]["id"])
    assert again["scenarios"][0]["params"] == a["scenarios"][4]["params"]


def _row(sid: str, params: dict, speedup: float | None, fa3: float | None = None,
         correct: bool = True) -> ScenarioResult:
    return ScenarioResult(id=sid, params=params, correct=correct, failures=[], error=None, err=None,
                          err_baseline=None, err_ratio=None, errors={},
                          speedup=speedup if correct else None,
                          comparisons={"fa3": Comparison(ms=1.0, speedup=fa3)} if fa3 and correct else None)


def test_coverage_math_per_field_geomean_min_and_the_worst():
    task = load_task(ATTN)
    shape = {"heads_kv": 2, "group": 1, "batch": 1, "seqlen_k": 100}
    rows = [
        _row("a", {**shape, "head_dim": 64, "causal": 0, "seqlen_q": 64}, 2.0, 1.0),
        _row("b", {**shape, "head_dim": 64, "causal": 1, "seqlen_q": 127}, 8.0, 0.25),
        _row("c", {**shape, "head_dim": 192, "causal": 1, "seqlen_q": 128}, 1.0, 0.5),
        _row("d", {**shape, "head_dim": 192, "causal": 0, "seqlen_q": 5000}, None, None, correct=False),
    ]
    cov = build(task, rows, seed=11)
    assert cov.goal == "fa3" and cov.against == ["baseline", "fa3"] and cov.n_correct == 3
    d64 = next(c for c in cov.cells if c.field == "head_dim" and c.label == "64")
    assert d64.n == d64.n_correct == 2
    assert math.isclose(d64.geomean["baseline"], 4.0) and d64.min["baseline"] == 2.0
    assert math.isclose(d64.geomean["fa3"], 0.5) and d64.min["fa3"] == 0.25 and d64.worst == "b"
    d192 = next(c for c in cov.cells if c.field == "head_dim" and c.label == "192")
    assert (d192.n, d192.n_correct, d192.geomean, d192.worst) == (2, 1, {"baseline": 1.0, "fa3": 0.5}, "d")
    # a log-scale length in octaves [2^k, 2^(k+1)), in order
    assert [(c.label, c.n) for c in cov.cells if c.field == "seqlen_q"] == [
        ("64-128", 2), ("128-256", 1), ("4k-8k", 1)]
    assert cov.worst[:3] == ["d", "b", "c"]          # incorrect first, then the lowest vs FA3
    ordered = cells_worst_first(cov)               # cells with an incorrect draw, then by min
    bad = sum(c.n_correct < c.n for c in cov.cells)
    assert bad and all(c.n_correct < c.n for c in ordered[:bad])
    mins = [c.min.get("fa3", math.inf) for c in ordered[:bad]]
    assert mins == sorted(mins)
    rest = [(c.field, c.label) for c in ordered[bad:]]
    assert rest.index(("head_dim", "64")) < rest.index(("seqlen_q", "128-256"))   # 0.25 < 0.5
    first_ok = cells_worst_first(cov, "baseline")[bad]
    assert (first_ok.field, first_ok.label, first_ok.min["baseline"]) == ("seqlen_q", "128-256", 1.0)
    grid = cross(cov)
    assert grid[("64", "0")] == (1, 1.0) and grid[("192", "0")] == (1, None)
    assert math.isclose(grid[("64", "1")][1], 0.25)
    text = "\n".join(lines(cov))
    assert "4 scenarios drawn from the task's space (seed 11), 3/4 correct" in text
    assert re.search(r"head_dim\s+64\s+2\s+2\s+4\.000 / 2\.000\s+0\.500 / 0\.250", text)
    assert "INCORRECT  d" in text
    # the record round-trips through the result contract
    doc = eval_result([{"id": "x", "correct": True, "speedup": 1.0}]).to_dict()
    doc["coverage"] = cov.to_dict()
    assert parse_eval(doc).coverage == cov


def test_binning_is_generic_over_the_field_declarations():
    from socratic.coverage import Binner

    narrow = Binner(HiddenField("batch", low=1, high=8), [1, 8])
    assert narrow.label(3) == "3"
    octave = Binner(HiddenField("n", low=1, high=10**6, log=True), [5, 900])
    assert octave.label(5) == "4-8" and octave.label(1024) == "1k-2k"
    linear = Binner(HiddenField("x", low=0, high=599), [0, 599])
    assert linear.label(0) == "0-100" and linear.label(599) == "500-600"
    expr = Binner(HiddenField("y", expr="2*n"), [2, 4, 2])
    assert expr.label(4) == "4"                       # few values: one cell each
    wide_expr = Binner(HiddenField("z", expr="n*n"), list(range(1, 40)))
    assert wide_expr.label(33) == "32-64"
    choice = Binner(HiddenField("mode", choices=("b", "a")), ["a", "b"])
    assert choice.key("b") < choice.key("a")           # declared order


def test_the_evaluator_table_carries_the_coverage():
    from socratic.evaluator.report import table

    task = load_task(ATTN)
    _, drawn = task.select("space:3@2")
    rows = [_row(s.id, dict(s.values), 2.0, 0.9) for s in drawn]
    doc = eval_result([{"id": s.id, "correct": True, "speedup": 2.0} for s in drawn])
    doc.coverage = build(task, rows, 2)
    out = table(doc)
    assert "coverage: 3 scenarios drawn from the task's space (seed 2)" in out
    assert "worst draws (vs fa3" in out and drawn[0].id in out.split("worst draws")[1]
