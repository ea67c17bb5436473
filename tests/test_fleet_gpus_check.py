"""benchmarks/fleet_gpus_check.py without a GPU: its figures from an evaluator result shaped
as the real one (a recorded H200 result is the template), the geomean tolerance, the UUID
and concurrency checks, the table, one-line exits for bad input, and the whole script run
end to end with the fake evaluator on two made-up GPU UUIDs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from socratic_doubles.testing import FAKE_EVALUATOR, candidate_source, make_task

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "fleet_gpus_check.py"
# a real `socratic eval flash_attn_fwd --json` (H200): comparisons, hidden rows, gpu_lock
TEMPLATE = REPO / "benchmarks" / "results" / "judge_isolation" / "best_hidden.json"
sys.path.insert(0, str(SCRIPT.parent))
import fleet_gpus_check as fgc  # noqa: E402
import fleetbench  # noqa: E402

UUID_A = "GPU-aaaaaaaa-0000-0000-0000-000000000001"
UUID_B = "GPU-bbbbbbbb-0000-0000-0000-000000000002"


def result(speedups: list[float], vs: dict[str, list[float]] | None = None, uuid: str = UUID_A,
           hidden_speedup: float = 9.0, incorrect: int | None = None) -> dict:
    """The template result with its first len(speedups) scenarios kept and their numbers
    set: speedup, and each comparison's speedup (vs); the hidden rows get `hidden_speedup`."""
    doc = copy.deepcopy(json.loads(TEMPLATE.read_text()))
    rows = doc["scenarios"][: len(speedups)]
    for i, (row, sp) in enumerate(zip(rows, speedups, strict=True)):
        row["speedup"] = sp
        row["candidate_ms"] = row["baseline_ms"] / sp
        for name, vals in (vs or {}).items():
            row["comparisons"][name]["speedup"] = vals[i]
        for name in list(row["comparisons"]):
            if vs is not None and name not in vs:
                del row["comparisons"][name]
        if incorrect == i:
            row["correct"] = False
            row["failures"] = ["o: max error 0.5 > tol 0.01 at unit 3"]
    doc["scenarios"] = rows
    for row in doc["hidden"]:
        row["speedup"] = hidden_speedup
    doc["summary"]["n"] = doc["summary"]["n_correct"] = len(rows)
    if incorrect is not None:
        doc["summary"]["all_correct"] = False
        doc["exit_code"] = 1
    doc["gpu_lock"] = uuid
    return doc


def test_the_template_is_a_real_evaluator_result():
    doc = json.loads(TEMPLATE.read_text())
    assert doc["schema"] == "socratic.eval/1" and doc["gpu_lock"].startswith("GPU-")
    assert doc["hidden"] and {"fa3", "cudnn", "fa2"} <= set(doc["scenarios"][0]["comparisons"])


def test_figures_take_the_listed_scenarios_speedups_and_comparisons():
    doc = result([2.0, 3.0, 4.0], {"fa3": [0.9, 1.0, 1.1], "cudnn": [1.2, 1.2, 1.2]})
    ids = [r["id"] for r in doc["scenarios"]]
    f = fgc.figures(doc)
    assert f.problem is None and f.correct and f.uuid == UUID_A
    assert f.sha256 == doc["candidate"]["sha256"]
    assert f.speedup == dict(zip(ids, [2.0, 3.0, 4.0], strict=True))   # hidden rows left out
    assert f.vs["fa3"] == dict(zip(ids, [0.9, 1.0, 1.1], strict=True))
    assert set(f.metrics()) == {"speedup", "vs cudnn", "vs fa3"}
    assert fgc.geomean(f.speedup.values()) == pytest.approx(24 ** (1 / 3))


def test_an_incorrect_scenario_makes_the_evaluation_incorrect_and_untimed_there():
    f = fgc.figures(result([2.0, 3.0, 4.0], incorrect=1))
    assert not f.correct and len(f.speedup) == 2


def test_a_document_that_is_no_result_is_a_problem_not_a_crash():
    assert "no result" in fgc.figures({"error": "evaluator timed out", "exit_code": 2}).problem
    assert fgc.figures({"schema": "socratic.eval/1", "task": 3}).problem
    assert fgc.figures(["not", "a", "dict"]).problem


def test_geomean_deviation_inside_and_outside_the_tolerance():
    ref = fgc.figures(result([2.0, 2.0, 2.0, 2.0], {"fa3": [1.0] * 4}))
    # scenarios off by up to 1.5%, in both directions: the geomean is 0.2% off
    near = fgc.figures(result([2.03, 1.975, 2.01, 2.0], {"fa3": [1.0, 1.0, 1.0, 1.0]}))
    devs = {d.metric: d for d in fgc.deviations(near, ref)}
    assert devs["speedup"].ok(0.01) and abs(devs["speedup"].dev) < 0.003
    assert devs["speedup"].worst_dev == pytest.approx(0.015)       # printed, not checked
    assert devs["speedup"].worst_scenario == ref_ids(4)[0]
    assert devs["vs fa3"].ok(0.01) and devs["vs fa3"].dev == pytest.approx(0.0)
    # every scenario 2% slower against fa3: outside 1%, inside 3%
    slow = fgc.figures(result([2.0] * 4, {"fa3": [0.98] * 4}))
    d = {d.metric: d for d in fgc.deviations(slow, ref)}["vs fa3"]
    assert d.dev == pytest.approx(-0.02) and not d.ok(0.01) and d.ok(0.03)


def ref_ids(n: int) -> list[str]:
    return [r["id"] for r in json.loads(TEMPLATE.read_text())["scenarios"][:n]]


def test_a_missing_comparison_or_other_scenarios_are_problems():
    ref = fgc.figures(result([2.0] * 3, {"fa3": [1.0] * 3}))
    lacking = fgc.figures(result([2.0] * 3, {}))
    d = {d.metric: d for d in fgc.deviations(lacking, ref)}["vs fa3"]
    assert d.problem and "missing" in d.problem and not d.ok(0.5)
    fewer = fgc.figures(result([2.0] * 2, {"fa3": [1.0] * 2}))
    d = {d.metric: d for d in fgc.deviations(fewer, ref)}["speedup"]
    assert d.dev == pytest.approx(0.0) and d.problem and not d.ok(0.01)


def test_distinct_uuids_fail_on_duplicates():
    assert fgc.duplicate_uuids({"01": UUID_A, "02": UUID_B}) == {}
    assert fgc.duplicate_uuids({"01": UUID_A, "02": UUID_B, "03": UUID_A}) == {UUID_A: ["01", "03"]}
    assert fgc.is_uuid(UUID_A) and fgc.is_uuid("MIG-1234") and not fgc.is_uuid("index-0")
    assert not fgc.is_uuid(None)


def test_one_uuid_per_campaign():
    a, b = fgc.figures(result([2.0])), fgc.figures(result([2.0], uuid=UUID_B))
    assert fgc.one_uuid([a, a]) == (UUID_A, None)
    assert "different GPUs" in fgc.one_uuid([a, b])[1]
    assert "without a GPU UUID" in fgc.one_uuid([fgc.figures(result([2.0], uuid="index-0"))])[1]
    assert fgc.one_uuid([]) == (None, "no evaluation")


def test_overlap_counts_campaigns_evaluating_at_once():
    W = fgc.Window
    # three campaigns, two evaluations each; all three evaluate together in [12, 14]
    ws = [W("a", 0, 10), W("a", 11, 20), W("b", 1, 14), W("b", 15, 25), W("c", 12, 30)]
    peak, together = fgc.overlap(ws)
    assert peak == 3 and together == pytest.approx(2 + 5)   # [12, 14] and [15, 20]
    # one after another: never two at once; spans that only touch share no moment
    peak, together = fgc.overlap([W("a", 0, 5), W("b", 5, 9), W("c", 9, 12)])
    assert peak == 1 and together == 0.0
    assert fgc.overlap([]) == (0, 0.0)


def test_the_table_has_a_line_per_row_and_says_pass_or_fail():
    rows = [fgc.Row("solo", "solo", "0", UUID_A, 1, 2.99, 0.96, None, None, 0.0, True),
            fgc.Row("one_per_gpu", "01-flash_attn_fwd-none", "1", UUID_B, 2, 2.98, 0.95,
                    -0.0123, 0.02, 0.0, False, ["eval 1: speedup geomean -1.23%"])]
    text = fgc.format_table(rows, "fa3")
    lines = text.splitlines()
    assert len(lines) == 4 and "vs fa3" in lines[0]
    assert "GPU-aaaaaaaa" in lines[2] and lines[2].endswith("PASS")
    assert "-1.23%" in lines[3] and "+2.00%" in lines[3] and lines[3].endswith("FAIL")
    assert "0.9500" in lines[3]


def test_the_scripted_agent_writes_then_evaluates_then_stops():
    agent = fleetbench.scripted_agent([("write_file", {"path": "candidate.cu", "content": "x"}),
                                       ("evaluate", {})])

    def body(turns: int) -> dict:
        return {"messages": [{"role": "user"}] + [{"role": "assistant"}, {"role": "user"}] * turns}
    assert agent(body(0))["tools"] == [("write_file", {"path": "candidate.cu", "content": "x"})]
    assert agent(body(1))["tools"] == [("evaluate", {})]
    assert "tools" not in agent(body(2))


def test_the_fleet_file_loads():
    from socratic.fleet.spec import load_fleet

    text = fleetbench.fleet_toml("flash_attn_fwd", 3, max_parallel=3, gpus=["0"],
                                 options={"max_turns": 5, "goal_min_speedup": 0.01,
                                          "goal_against": "baseline", "scenarios": "smoke"})
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"fgc-{os.getpid()}.toml"
    path.write_text(text)
    try:
        spec = load_fleet(path)
    finally:
        path.unlink()
    assert spec.max_parallel == 3 and spec.gpus == ["0"] and len(spec.campaigns) == 3
    assert "--goal-against" in spec.campaigns[0].args and "smoke" in spec.campaigns[0].args


def run_script(*args: str, env: dict[str, str] | None = None, timeout: float = 60):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=timeout)


def cpu_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.pop("SOCRATIC_EVALUATOR", None)
    env.update(extra)
    return env


@pytest.mark.parametrize("args, says", [
    (["--candidate", "/nonexistent/cand.cu"], "/nonexistent/cand.cu: no such candidate file"),
    (["--task", "no_such_task"], "no_such_task: no such task directory"),
    (["--scenarios", "no_such_set"], "unknown scenario or set 'no_such_set'"),
    (["--evals", "0"], "--evals must be 1 or more"),
    (["--tol", "5"], "--tol must be a fraction"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, args, says):
    p = run_script("--out", str(tmp_path / "out"), *args, env=cpu_env())
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and says in p.stderr and "Traceback" not in p.stderr
    assert p.stdout == ""


def test_no_gpu_visible_exits_2_with_one_line(tmp_path):
    p = run_script("--out", str(tmp_path / "out"), env=cpu_env(CUDA_VISIBLE_DEVICES=""))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "no GPU visible (CUDA_VISIBLE_DEVICES is empty)" in p.stderr


def test_a_missing_harness_package_is_named(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "anthropic" else real(name, *a))
    assert fgc.main(["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`anthropic` is missing" in err


def e2e(tmp_path: Path, gpus: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    task = make_task(tmp_path)
    cand = tmp_path / "cand.cu"
    cand.write_text(candidate_source(1.5, "// sleep: 0.6"))
    env = cpu_env(SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR), CUDA_VISIBLE_DEVICES=gpus,
                  SOCRATIC_GPU_LOCKS=str(tmp_path / "locks"), ANTHROPIC_MODEL="claude-test")
    out = tmp_path / "out"
    p = run_script("--task", str(task), "--candidate", str(cand), "--out", str(out), *args,
                   env=env, timeout=300)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    return p, summary


@pytest.mark.slow
def test_end_to_end_with_the_fake_evaluator_on_two_gpus(tmp_path):
    p, summary = e2e(tmp_path, f"{UUID_A},{UUID_B}")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert summary["pass"] and all(c["ok"] for c in summary["checks"])
    phases = [r["phase"] for r in summary["rows"]]
    assert phases == ["solo", "solo", "one_per_gpu", "one_per_gpu", "sharing", "sharing"]
    one = [r for r in summary["rows"] if r["phase"] == "one_per_gpu"]
    assert {r["uuid"] for r in one} == {UUID_A, UUID_B}
    assert all(r["uuid"] == UUID_A for r in summary["rows"] if r["phase"] == "sharing")
    assert summary["overlap"]["peak"] == 2
    out = tmp_path / "out"
    files = sorted(f.name for f in out.glob("*.json"))
    assert len(files) == 2 + 2 * 2 + 2 * 2 + 1     # solo, one per GPU, sharing, summary
    assert f"solo-gpu{UUID_A}-e1.json" in files
    assert any(f.startswith("sharing-02-") and f.endswith("-e2.json") for f in files)
    assert p.stdout.rstrip().splitlines()[-1].startswith("PASS")


@pytest.mark.slow
def test_end_to_end_fails_when_results_carry_no_gpu_uuid(tmp_path):
    # indices, not UUIDs: the fake evaluator's gpu_lock is `index-0`, which names no GPU
    p, summary = e2e(tmp_path, "0", "--evals", "1", "--skip-sharing")
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-2000:]
    assert summary["pass"] is False
    failed = [c["what"] for c in summary["checks"] if not c["ok"]]
    assert any("on a GPU UUID" in w for w in failed)
    assert not any(r["phase"] == "sharing" for r in summary["rows"])
    assert p.stdout.rstrip().splitlines()[-1].startswith("FAIL")


def test_solo_phase_checks_each_gpu_and_fails_on_a_shared_uuid(tmp_path, monkeypatch, capsys):
    docs = {"0": result([2.0, 3.0], {"fa3": [0.9, 1.1]}, uuid=UUID_A),
            "1": result([2.0, 3.0], {"fa3": [0.9, 1.1]}, uuid=UUID_B),
            "2": result([2.0, 3.0], {"fa3": [0.9, 1.1]}, uuid=UUID_A)}
    monkeypatch.setattr(fgc, "solo_eval", lambda s, gpu: (fgc.figures(docs[gpu]),
                                                          json.dumps(docs[gpu]), 1.0))
    s = fgc.Setup(tmp_path, "flash_attn_fwd", "bench", None, tmp_path / "c.cu", "x", 2, 0.01,
                  tmp_path, ["0", "1", "2"], [])
    rep = fgc.Report()
    solo = fgc.solo_phase(s, rep)
    assert set(solo) == {"0", "1", "2"} and rep.vs_name == "fa3"
    assert [c.ok for c in rep.checks] == [True, True, True, False]   # GPUs 0 and 2: one UUID
    assert rep.rows[0].vs == pytest.approx((0.9 * 1.1) ** 0.5)
    assert json.loads((tmp_path / "solo-gpu1-e1.json").read_text())["gpu_lock"] == UUID_B
    assert "vs fa3" in fgc.format_table(rep.rows, rep.vs_name)
