"""The judge on a real GPU against candidates that attack it (tests/candidates/isolation_hostile.py,
blindspot_hostile.py): host code that patches the timer or forges verdicts, memory of its
own, synchronisation inside the entry, work left running in its own process, and kernels
right only on the listed shapes or on N(0,1) inputs. Run on an H200:
    python -m pytest -m gpu tests/test_judge_gpu.py -q"""

from __future__ import annotations

import pytest

from tests.candidates import blindspot_hostile, isolation_hostile, rmsnorm_hostile
from tests.evalcli import socratic

pytestmark = pytest.mark.gpu


def run(tmp_path, task: str, name: str, module, *extra: str):
    path = tmp_path / f"{name}.cu"
    path.write_text(module.source(name))
    return socratic("eval", task, "--candidate", str(path), "--json", "--no-compare", *extra)


def lines(res) -> list[str]:
    return [f for r in res.doc["scenarios"] + (res.doc.get("hidden") or []) for f in r["failures"]]


@pytest.mark.parametrize("name, reason", [
    ("timer_patch", "never written"),            # the half it meant to launch after the end event never runs
    ("static_alloc", "device memory of its own"),
    ("sync_inside", "synchronises or waits for the device inside the call"),
])
def test_host_code_attacks_are_rejected_in_one_line(tmp_path, name, reason):
    res = run(tmp_path, "rmsnorm", name, isolation_hostile, "--scenarios", "smoke")
    assert res.code == 1
    found = lines(res)
    assert any(reason in f for f in found), found
    assert all("\n" not in f for f in found)


def test_a_forged_verdict_is_never_accepted(tmp_path):
    """It tries the judge's memory and descriptors (denied) and writes verdict lines to
    every pipe it has, its CUDA driver's own among them, which breaks its own launches: on
    the H200 every scenario failed, `the entry launched no kernel into the given stream`.
    No forged row reaches the result."""
    forged = run(tmp_path, "rmsnorm", "forge_result", isolation_hostile, "--scenarios", "smoke")
    ids = [r["id"] for r in forged.doc["scenarios"]]
    assert "forged" not in ids and len(ids) == 3
    if forged.code == 1:
        assert all(r["failures"] for r in forged.doc["scenarios"] if not r["correct"])
    else:   # its kernel's own result, at its own speed
        honest = run(tmp_path, "rmsnorm", "correct", rmsnorm_hostile, "--scenarios", "smoke")
        for a, b in zip(forged.doc["scenarios"], honest.doc["scenarios"], strict=True):
            assert abs(a["speedup"] / b["speedup"] - 1) < 0.03


def test_work_left_running_in_its_own_process_changes_nothing(tmp_path):
    """A kernel it leaves running in its own CUDA context either trips the judge's quiet
    probe before timing (`the GPU stayed busy ...`) or does not touch the measurement: the
    candidate comes out at the speed of the same kernel without it (seen on the H200: the
    latter, 0.770 against 0.785 in another call)."""
    honest = run(tmp_path, "rmsnorm", "correct", rmsnorm_hostile, "--scenarios", "smoke")
    res = run(tmp_path, "rmsnorm", "left_running", isolation_hostile, "--scenarios", "smoke")
    if res.code == 1:
        assert any("the GPU stayed busy with work outside the judge" in f for f in lines(res)), lines(res)
        return
    for a, b in zip(res.doc["scenarios"], honest.doc["scenarios"], strict=True):
        assert abs(a["speedup"] / b["speedup"] - 1) < 0.03, (a["id"], a["speedup"], b["speedup"])


@pytest.mark.parametrize("task, name, reason", [
    ("flash_attn_fwd", "listed_shapes", "hidden-"),
    ("flash_attn_fwd", "no_max", "large_logits"),
    ("rmsnorm", "half_squares", "extreme_rows"),
])
def test_blind_spot_candidates_are_rejected(tmp_path, task, name, reason):
    res = run(tmp_path, task, name, blindspot_hostile, "--scenarios", "smoke", "--hidden", "6", "--no-timing")
    assert res.code == 1
    if reason == "hidden-":
        assert res.doc["summary"]["all_correct"]            # every listed scenario passes...
        assert res.doc["hidden_summary"]["n_correct"] < 6    # ...the hidden ones do not
    else:
        assert any(f.startswith(reason + ":") for f in lines(res)), lines(res)


def test_the_baselines_pass_every_distribution_and_hidden_scenario():
    for task in ("rmsnorm", "flash_attn_fwd"):
        res = socratic("eval", task, "--scenarios", "smoke", "--hidden", "4", "--no-compare", "--json")
        assert res.code == 0, lines(res)
        assert res.doc["hidden_summary"]["n_correct"] == 4
        for r in res.doc["scenarios"]:
            assert 0.97 < r["speedup"] < 1.03, r
