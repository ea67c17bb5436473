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
    ("left_running", "the GPU stayed busy with work outside the judge"),
])
def test_host_code_attacks_are_rejected_in_one_line(tmp_path, name, reason):
    res = run(tmp_path, "rmsnorm", name, isolation_hostile, "--scenarios", "smoke")
    assert res.code == 1
    found = lines(res)
    assert any(reason in f for f in found), found
    assert all("\n" not in f for f in found)


def test_a_forged_verdict_changes_nothing(tmp_path):
    """It writes verdict lines to every pipe it has and tries the judge's memory and
    descriptors: its result is its kernel's, at the speed of the same kernel unforged."""
    honest = run(tmp_path, "rmsnorm", "correct", rmsnorm_hostile, "--scenarios", "smoke")
    forged = run(tmp_path, "rmsnorm", "forge_result", isolation_hostile, "--scenarios", "smoke")
    assert forged.code == honest.code == 0, lines(forged)
    assert [r["id"] for r in forged.doc["scenarios"]] == [r["id"] for r in honest.doc["scenarios"]]
    for a, b in zip(forged.doc["scenarios"], honest.doc["scenarios"], strict=True):
        assert abs(a["speedup"] / b["speedup"] - 1) < 0.03


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
