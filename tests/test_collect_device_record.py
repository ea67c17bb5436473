"""benchmarks/judge_h200/collect.py: what the device calls brought back becomes
hostile_h200.json and control_h200.json (issue 39's record). A call's folder as the call
scripts leave it: card.txt, commit.txt, the tests' logs (round3_final.sh's gpu_tests.log or
calls/sNcM.sh's logs/tests*.log), evidence/ (each GPU test's evaluation) and evals/ (the
controls)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def collect_module():
    spec = importlib.util.spec_from_file_location("collect", REPO / "benchmarks" / "judge_h200" / "collect.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def evaluation(task: str, rows: list[tuple[str, float]], candidate: str = "x.cu") -> dict:
    scen = [{"id": i, "speedup": sp, "correct": True, "failures": []} for i, sp in rows]
    return {"task": task, "set": "bench", "candidate": {"path": candidate}, "scenarios": scen,
            "summary": {"n": len(scen), "n_correct": len(scen), "geomean_speedup": 1.0}}


def call_folder(root: Path) -> Path:
    d = root / "c1"
    (d / "logs").mkdir(parents=True)
    (d / "evidence").mkdir()
    (d / "evals").mkdir()
    (d / "card.txt").write_text("NVIDIA H100 80GB HBM3, 580.159.04\n")
    (d / "commit.txt").write_text("6ece2da\n")
    test = "tests/test_round3_gpu.py::test_the_largest_finite_value_in_timed_runs_is_seen"
    (d / "logs" / "tests_copies.log").write_text(f"PASSED {test}\n1 passed in 8.0s\n")
    doc = evaluation("rmsnorm", [("r1k-c4k", 0.97)], candidate="timed_maxfinite_rms.cu")
    doc["scenarios"][0].update(correct=False, failures=["y: timed runs differ from the baseline by 3.39e+38"])
    doc["summary"]["n_correct"] = 0
    (d / "evidence" / "t.json").write_text(json.dumps({"test": f"../work/main/{test}", "exit_code": 1,
                                                       "seconds": 7.9, "doc": doc}))
    for run in (1, 2):
        (d / "evals" / f"rms_ctl{run}.json").write_text(json.dumps(evaluation("rmsnorm", [("r1-c4k", 0.998)])))
    return d


def test_a_call_folder_becomes_the_hostile_and_control_records(tmp_path, monkeypatch, capsys):
    collect = collect_module()
    results = tmp_path / "results"
    results.mkdir()
    monkeypatch.setattr(collect, "RESULTS", results)
    earlier = [{"task": "flash_attn_fwd", "run": 1, "card": "H100", "code": "099341f", "scenario": "s",
                "speedup": 0.99, "correct": True, "hidden": False},
               {"task": "rmsnorm", "run": 1, "card": "NVIDIA H200", "code": "a96638a", "scenario": "r1-c4k",
                "speedup": 1.028, "correct": True, "hidden": False}]
    (results / "control_h200.json").write_text(json.dumps(earlier))
    collect.main([call_folder(tmp_path)])

    hostile = json.loads((results / "hostile_h200.json").read_text())
    assert [(h["name"], h["class"], h["test_outcome"], h["code"]) for h in hostile] == [
        ("timed_maxfinite_rms", "timed", "PASSED", "6ece2da")]   # named, its outcome from the call's own log
    control = json.loads((results / "control_h200.json").read_text())
    assert sorted((c["task"], c["code"], c["run"]) for c in control) == [
        ("flash_attn_fwd", "099341f", 1),                       # a task these calls did not run keeps its rows
        ("rmsnorm", "6ece2da", 1), ("rmsnorm", "6ece2da", 2)]   # the one they ran is replaced
    assert "control rmsnorm: 2 runs, 2/2 correct" in capsys.readouterr().out
