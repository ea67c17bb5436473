"""Evaluator on a real GPU: the baseline passes as its own candidate, and each hostile
candidate is rejected for the right reason. Run on an H200 before resolving."""

from __future__ import annotations

import glob
import math

import pytest

from tests.candidates.rmsnorm_hostile import source
from tests.evalcli import socratic

pytestmark = pytest.mark.gpu


def evaluate(tmp_path, name: str, *extra: str, env=None):
    path = tmp_path / f"{name}.cu"
    path.write_text(source(name))
    return socratic("eval", "src/socratic/kernels/rmsnorm", "--candidate", str(path), "--json", *extra, env=env)


def failures(result) -> str:
    return " | ".join(f for r in result.doc["scenarios"] for f in r["failures"])


def test_baseline_passes_as_its_own_candidate():
    res = socratic("eval", "src/socratic/kernels/rmsnorm", "--scenarios", "smoke", "--json")
    assert res.code == 0, res.stderr
    doc = res.doc
    assert doc["summary"]["all_correct"]
    for row in doc["scenarios"]:
        assert 0.9 < row["speedup"] < 1.1, row
        assert row["err"] <= row["errors"]["y"]["tol_max"]


def test_correct_rewrite_passes(tmp_path):
    res = evaluate(tmp_path, "correct", "--scenarios", "smoke")
    assert res.code == 0, failures(res)


# The candidate's host code runs in its own process and only what it launched on the given
# stream is replayed (evaluator/plan.py), so several of these fail earlier than they used
# to, on the rule their trick breaks; each reason below is the line the judge gives.
@pytest.mark.parametrize("name, expected", [
    ("wrong", ("> tolerance",)),
    ("partial_write", ("never written",)),
    ("input_mutation", ("input x was modified",)),
    ("side_stream", ("no kernel into the given stream",)),         # its work went elsewhere: not captured
    ("deferred", ("no kernel into the given stream",)),
    ("shape_special", ("> tolerance", "no kernel into the given stream")),   # a copy where the kernel was
    ("precision_downgrade", ("> tolerance",)),
    ("own_allocation", ("device memory of its own",)),
    ("timed_only_downgrade", ("> tolerance", "audited timed run")),   # each input set is a call of its own
])
def test_hostile_candidate_is_rejected(tmp_path, name, expected):
    res = evaluate(tmp_path, name, "--scenarios", "smoke")
    assert res.code == 1, f"{name} was accepted: {res.stderr[-2000:]}"
    assert not res.doc["summary"]["all_correct"]
    assert any(e in failures(res) for e in expected), failures(res)


def test_an_output_reused_by_pointer_is_never_served(tmp_path):
    # its host code launches nothing for an output pointer it has served before; every input
    # set and every timed copy has buffers of its own, each captured once, so the trick never
    # fires (in sessions 16 and 18 it was rejected only for another rule, launch order or the
    # copy profile's first thresholds): rejected in one line, or measured as the baseline it is
    res = evaluate(tmp_path, "stale_output", "--scenarios", "smoke")
    if res.code == 1:
        lines = [f for r in res.doc["scenarios"] + (res.doc.get("hidden") or []) for f in r["failures"]]
        assert lines and all("\n" not in f for f in lines), lines
        return
    assert res.code == 0, res.stderr[-2000:]
    for r in res.doc["scenarios"]:
        assert r["speedup"] is not None and r["speedup"] <= 1.02, (r["id"], r["speedup"])


def test_a_cache_keyed_by_pointer_serves_nothing(tmp_path):
    # its cache is a __device__ array of its own, keyed by the input's address: a call it
    # serves from the cache launches no kernel. Every input set and every timed copy has its
    # own buffers, captured once, so the cache never hits: rejected, or measured at its true
    # speed (the baseline's kernel plus a copy: never faster than the baseline)
    res = evaluate(tmp_path, "pointer_cache", "--scenarios", "smoke")
    if res.code == 1:
        assert any(e in failures(res) for e in ("reaches outside the buffers", "no kernel into the given stream",
                                                "> tolerance")), failures(res)
        return
    assert res.code == 0, res.stderr[-2000:]
    assert all(r["speedup"] <= 1.02 for r in res.doc["scenarios"]), [r["speedup"] for r in res.doc["scenarios"]]


@pytest.mark.parametrize("name", ["side_busy", "device_settings"])
def test_tricks_confined_to_the_candidates_process_change_nothing(tmp_path, name):
    """Side work and device settings now live in the candidate's own process and CUDA
    context: the judge's measurement does not see them. Either the judge refuses the call
    (a capture it cannot replay) or the candidate is measured at its true speed."""
    honest = evaluate(tmp_path, "correct", "--scenarios", "smoke")
    res = evaluate(tmp_path, name, "--scenarios", "smoke")
    if res.code == 1:
        assert failures(res), res.stderr[-2000:]
        return
    # two evaluations apart: a microsecond row of one kernel reads up to ~3% apart from run to
    # run (RMSNorm's baseline against itself: 0.965-1.029 on an H100, s19; side_busy against
    # the honest rewrite: 0.593 vs 0.615 on r1-c4k, geomean 1.9% apart); a gain from the trick
    # would lift every row
    ratios = [a["speedup"] / b["speedup"] for a, b in zip(res.doc["scenarios"], honest.doc["scenarios"], strict=True)]
    assert all(abs(r - 1) < 0.06 for r in ratios), ratios
    assert abs(math.prod(ratios) ** (1 / len(ratios)) - 1) < 0.03, ratios


def test_fault_is_reported_and_later_scenarios_still_run(tmp_path):
    res = evaluate(tmp_path, "fault", "--scenarios", "r1-c4k,r17-c1000,r4k-c8k", "--timeout", "60")
    assert res.code == 1
    assert "CUDA error" in res.row("r17-c1000")["error"] or "died" in res.row("r17-c1000")["error"]
    assert res.row("r1-c4k")["correct"] and res.row("r4k-c8k")["correct"]


def test_hang_is_reported_and_the_evaluation_stops_there(tmp_path):
    # a kernel that hangs in one scenario mostly hangs in all: the rest is one line each,
    # naming the scenario, not a timeout each (issue 39)
    res = evaluate(tmp_path, "hang", "--scenarios", "r1-c4k,r17-c1000,r4k-c8k", "--timeout", "15")
    assert res.code == 1
    assert "timed out" in res.row("r17-c1000")["error"]
    assert res.row("r1-c4k")["correct"]
    assert "hung in scenario r17-c1000" in " ".join(res.row("r4k-c8k")["failures"] + [res.row("r4k-c8k")["error"] or ""])


def test_a_candidate_that_does_not_load_fails_every_scenario_with_one_clean_line(tmp_path):
    path = tmp_path / "unloadable.cu"
    path.write_text(source("correct") + 'extern "C" int socratic_absent(void);\n'
                    'extern "C" int rmsnorm_keep(void) { return socratic_absent(); }\n')
    res = socratic("eval", "src/socratic/kernels/rmsnorm", "--candidate", str(path), "--scenarios", "smoke", "--json")
    assert res.code == 1
    assert len(res.doc["scenarios"]) == res.doc["summary"]["n"] > 1
    assert {r["error"] for r in res.doc["scenarios"]} == \
        {"the candidate library does not load: undefined symbol: socratic_absent"}


def test_runtime_dlopen_of_a_banned_library_is_caught(tmp_path):
    import site
    found = [p for d in site.getsitepackages() for p in glob.glob(f"{d}/nvidia/cu*/lib/libcublas.so*")]
    found += glob.glob("/usr/local/cuda*/lib64/libcublas.so*")
    if not found:
        pytest.skip("no libcublas on this machine to dlopen")
    # the candidate's process gets no environment of ours (SOCRATIC_* included): the path is
    # baked into its source, encoded so that no string of it is there to scan
    path = tmp_path / "dlopen_runtime.cu"
    codes = ",".join(str(ord(c) + 1) for c in found[0])
    path.write_text(source("dlopen_runtime").replace(
        'const char* path = getenv("SOCRATIC_TEST_DLOPEN");',
        f"static const int enc[] = {{{codes}}}; static char buf[4096]; int n = sizeof(enc) / sizeof(int); "
        "for (int i = 0; i < n; ++i) buf[i] = (char)(enc[i] - 1); buf[n] = 0; const char* path = buf;"))
    res = socratic("eval", "src/socratic/kernels/rmsnorm", "--candidate", str(path), "--json", "--scenarios", "r1-c4k")
    assert res.code == 1
    assert any(h["layer"] == "runtime" for h in res.doc["bans"]["hits"]), res.doc["bans"]


def test_full_set_of_rmsnorm_baseline_is_correct():
    res = socratic("eval", "rmsnorm", "--scenarios", "full", "--no-timing", "--json")
    assert res.code == 0, res.stderr[-3000:]
    assert res.doc["summary"]["n_correct"] == res.doc["summary"]["n"] >= 50
