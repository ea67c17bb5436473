"""The judge's round 3 on a real GPU (issue 39), against tests/candidates/round3_hostile.py:
device code that profits from what an earlier copy of a timed sample left, or that reaches
for the baseline's and reference's results; host code that tries to keep state, read secrets
or reach the network; entries and kernels that hang. Each is rejected in one line or measured
within 2% of its honest speed (the baseline's: 1.0x). Run on an H100/H200:
    python -m pytest -m gpu tests/test_round3_gpu.py -q"""

from __future__ import annotations

import time

import pytest

from tests.candidates import round3_hostile
from tests.evalcli import socratic

pytestmark = pytest.mark.gpu


def run(tmp_path, name: str, *extra: str):
    path = tmp_path / f"{name}.cu"
    path.write_text(round3_hostile.source(name))
    return socratic("eval", round3_hostile.task_of(name), "--candidate", str(path), "--json", "--no-compare", *extra)


def failures(res) -> list[str]:
    return [f for r in res.doc["scenarios"] + (res.doc.get("hidden") or []) for f in r["failures"]]


def honest_or_rejected(res) -> None:
    if res.code == 1:
        found = failures(res)
        assert found and all("\n" not in f for f in found), found
        return
    assert res.code == 0, res.stderr[-400:]
    for r in res.doc["scenarios"]:
        assert r["speedup"] is not None and r["speedup"] <= 1.02, (r["id"], r["speedup"], r.get("copies"))


@pytest.mark.parametrize("name", ["copies_poison_gate_rms", "copies_poison_gate_attn",
                                  "copies_workspace_marker_attn", "copies_pointer_memo_attn"])
def test_no_copy_of_a_timed_sample_profits_from_another(tmp_path, name):
    honest_or_rejected(run(tmp_path, name, "--scenarios", "smoke"))


@pytest.mark.parametrize("name", ["copies_batch_ahead_rms", "copies_batch_pairs_rms", "copies_ahead_unmarked_rms"])
def test_no_copy_of_a_timed_sample_does_the_work_of_the_copies_after_it(tmp_path, name):
    # red team, 2026-12: every copy's inputs are in place before the sample's first copy
    # runs, so one copy can compute later ones in one launch and they return at once; every
    # output is right, only the speed is false. The microsecond scenarios (64 copies a
    # sample) are where it pays: r1-c4k, r17-c1000. Each copy is timed on its own in a quarter
    # of the pairs, and those must read what the others do (copies_ahead_unmarked_rms works
    # ahead only in the others, s24)
    res = run(tmp_path, name, "--scenarios", "r1-c4k,r16-c4k,r17-c1000", "--hidden", "0")
    honest_or_rejected(res)
    if res.code == 1:
        assert any("do not each do their own work" in f or "not timed one by one" in f for f in failures(res)), failures(res)


def test_a_timed_run_apart_from_the_baseline_says_where_and_whose(tmp_path):
    # a kernel wrong once, in a timed call (as a rare race is): the failure line names the pair,
    # the copy, the element and both values, and shows the candidate's value move when run again
    res = run(tmp_path, "apart_once_rms", "--scenarios", "r1k-c4k", "--hidden", "0")
    assert res.code == 1, res.stderr[-400:]
    line = next(f for f in failures(res) if "timed runs differ from the baseline" in f)
    assert "\n" not in line and "at [rows 0, cols 0]" in line, line
    assert "run again on the same inputs: candidate " in line and line.endswith("baseline the same)"), line
    assert "candidate the same" not in line, line


def test_the_largest_finite_value_in_timed_runs_is_seen(tmp_path):
    # review, s24: a rounding step read from max(|cand|, |base|) was infinite at the largest
    # finite value, so such an element was never compared with the baseline's
    res = run(tmp_path, "timed_maxfinite_rms", "--scenarios", "r1k-c4k", "--hidden", "0")
    assert res.code == 1, res.stderr[-400:]
    assert any("timed runs differ from the baseline" in f for f in failures(res)), failures(res)


def test_work_left_running_by_the_timing_captures_is_not_timed_beside(tmp_path):
    # red team, 2026-12 (unverified on a GPU when written): the captures of the timing-only
    # copies come after the quiet probe; a spin its process leaves on a stream of its own
    # then shares the GPU with the pairs. Refused, or waited out: the timing as quiet as the
    # same kernel's without the spin
    side = run(tmp_path, "side_work_after_capture_rms", "--scenarios", "smoke", "--hidden", "0")
    honest = run(tmp_path, "sandbox_shm_persist_rms", "--scenarios", "smoke", "--hidden", "0")  # same kernel
    if side.code == 1 and any("stayed busy" in f or "capture forbids" in f for f in failures(side)):
        return   # refused: its spin seen, or a launch on its own stream during capture not allowed
    assert side.doc is not None and honest.doc is not None, side.stderr[-400:]
    for a, b in zip(side.doc["scenarios"], honest.doc["scenarios"], strict=True):
        assert a["spread"] is not None and a["spread"] <= 2 * b["spread"] + 0.01, (a["id"], a["spread"], b["spread"])


@pytest.mark.parametrize("name", ["tamper_baseline_rms", "tamper_reference_rms"])
def test_the_baselines_and_references_results_are_out_of_reach(tmp_path, name):
    res = run(tmp_path, name, "--scenarios", "smoke")
    assert res.code == 1, "a kernel doing a third of the work was accepted"
    for r in res.doc["scenarios"]:   # the tolerance never grew: the baseline's error is its own
        if r.get("err_baseline") is not None:
            assert r["err_baseline"] < 0.05, r


@pytest.mark.parametrize("name", ["sandbox_shm_persist_rms", "sandbox_read_secrets_rms", "sandbox_network_rms",
                                  "sandbox_escape_rms"])
def test_the_candidates_process_keeps_nothing_reads_nothing_reaches_nothing(tmp_path, name):
    # its forbidden move failed, so it returned 0 and ran its honest kernel: every scenario
    # correct, no "error code 77/78/79/80" (its speed is its kernel's, not the baseline's: on an
    # H100 a microsecond scenario of it once read order-dependent, 1.149 vs 0.994)
    res = run(tmp_path, name, "--scenarios", "smoke")
    assert res.doc is not None, res.stderr[-400:]
    assert not [f for f in failures(res) if "error code" in f], failures(res)
    assert all(r["err"] is not None for r in res.doc["scenarios"]), res.doc["scenarios"]


@pytest.mark.parametrize("name", ["hang_entry_rms", "hang_kernel_rms"])
def test_a_hanging_candidate_ends_its_evaluation_within_two_minutes(tmp_path, name):
    t0 = time.monotonic()
    res = run(tmp_path, name, "--scenarios", "bench")
    took = time.monotonic() - t0
    assert res.code == 1 and took < 120, took
    found = failures(res)
    assert any("not run: the candidate hung in scenario" in f for f in found) or len(res.doc["scenarios"]) == 1, found


def test_the_candidates_context_can_write_the_judges_memory_and_the_digest_sees_it():
    # one address space for both contexts (research/ctx_probe): a write issued in the
    # candidate's context lands in the judge's buffer; the keyed digest changes for that
    # buffer only
    from cuda.bindings import driver

    from socratic.evaluator.candidate_context import CandidateContext
    from socratic.evaluator.gpu import Gpu, check

    gpu = Gpu()
    cctx = CandidateContext(int(check(driver.cuCtxGetCurrent())), l2_bytes=gpu.info.l2_bytes)
    n = 1 << 20
    bufs = [gpu.alloc(n), gpu.alloc(n)]
    for seed, buf in enumerate(bufs, 1):
        gpu.fill(buf, "bf16", n // 2, seed, "normal", 0.0, 1.0)
    before = gpu.hashes([(buf, n) for buf in bufs])
    with cctx.current():
        check(driver.cuMemsetD8Async(int(bufs[0].handle) + 4096, 7, 2, cctx.stream))
        cctx.sync()
    after = gpu.hashes([(buf, n) for buf in bufs])
    assert after[0] != before[0] and after[1] == before[1]
    cctx.close()


def test_the_digest_covers_every_byte_and_equal_bytes_give_equal_digests():
    # hash_many: one launch for many buffers, 16-byte loads on the aligned body and the bytes
    # around it one at a time; the input check compares digests of two buffers
    import numpy as np

    from socratic.evaluator.gpu import Gpu

    gpu = Gpu()
    n = (1 << 20) + 13   # a tail of 13 bytes past the last 16-byte word
    data = np.random.default_rng(7).integers(0, 256, n, dtype=np.uint8)
    a, b = gpu.alloc(n), gpu.alloc(n)
    gpu.from_host(a, data)
    gpu.from_host(b, data)
    one = [gpu.hash(a, n), gpu.hash(b, n)]
    assert one[0] == one[1] and gpu.hashes([(a, n), (b, n)]) == one
    for at in (0, 15, 16, 4096, n - 14, n - 13, n - 1):   # body, its last byte, the tail
        changed = data.copy()
        changed[at] ^= 1
        gpu.from_host(b, changed)
        assert gpu.hash(b, n) != one[0], at
    swapped = data.copy()
    swapped[0:8], swapped[8:16] = data[8:16], data[0:8]
    gpu.from_host(b, swapped)
    assert gpu.hash(b, n) != one[0]
    assert gpu.hash(a, n - 1) != one[0]   # the length counts
    gpu.from_host(b, data)
    # a start off the 16-byte grid (its first bytes one at a time), the same in both buffers
    head = [gpu.foreign(int(x.handle) + 3, n - 3) for x in (a, b)]
    assert gpu.hash(head[0], n - 3) == gpu.hash(head[1], n - 3)
    changed = data.copy()
    changed[4] ^= 1   # inside the head
    gpu.from_host(b, changed)
    assert gpu.hash(head[1], n - 3) != gpu.hash(head[0], n - 3)
    # one launch for buffers of different contents: each digest in its own place
    assert gpu.hashes([(a, n), (b, n), (a, n)]) == [one[0], gpu.hash(b, n), one[0]]



def test_a_candidate_that_rewrites_the_digest_table_and_results_is_still_seen():
    # the digests' address table and results lie in the judge's memory, which the candidate's
    # kernels can write: hash_later writes the table (and clears the results) after the
    # candidate's context is done, so a table pointed at an untouched twin of the buffer it
    # changed, and the old digest written where the new one goes, are gone before the launch
    import numpy as np
    from cuda.bindings import driver

    from socratic.evaluator.candidate_context import CandidateContext
    from socratic.evaluator.gpu import Gpu, check

    gpu = Gpu()
    cctx = CandidateContext(int(check(driver.cuCtxGetCurrent())), l2_bytes=gpu.info.l2_bytes)
    n = 1 << 20
    buf, twin = gpu.alloc(n), gpu.alloc(n)
    for b in (buf, twin):
        gpu.fill(b, "bf16", n // 2, 11, "normal", 0.0, 1.0)
    before = gpu.hashes([(buf, n)])
    assert gpu.hashes([(twin, n)]) == before   # equal bytes: the twin's digest is the buffer's
    forged_table = cctx.alloc(16)
    forged_digest = cctx.alloc(8)
    with cctx.current():
        for dev, host in ((forged_table, np.array([int(twin.handle), n], dtype=np.uint64)),
                          (forged_digest, np.array(before, dtype=np.uint64))):
            check(driver.cuMemcpyHtoD(dev.handle, host.ctypes.data, host.nbytes))
        check(driver.cuMemsetD8Async(int(buf.handle) + 4096, 7, 2, cctx.stream))   # the change
        cctx.copy(int(gpu._hash_table.handle), forged_table.handle, 16)           # ... hidden
        cctx.copy(int(gpu._digests.handle), forged_digest.handle, 8)
        cctx.sync()
    assert gpu.hashes([(buf, n)]) != before
    cctx.close()


# modules planted where `socratic eval` is typed (an agent's workspace), or on PYTHONPATH:
# once a statistics.py there tripled FA3's measured time (the baseline read 0.98x FA3, not
# 0.33x). Any process socratic starts that imports one leaves a marker; the `socratic`
# command itself (this test's child) may see PYTHONPATH, its children may not.
PLANT = ("import os, pathlib\n"
         "if os.getppid() != {pid}:\n"
         "    pathlib.Path({marker!r}).write_text(__name__ + ' in ' + str(os.getpid()))\n")


@pytest.mark.parametrize("name", ["cwd_planted_modules", "cwd_pythonpath_and_startup"])
def test_a_module_planted_where_socratic_runs_is_not_imported(tmp_path, name):
    import os
    import sys
    from pathlib import Path

    if not (Path(sys.executable).parent / "socratic").exists():
        pytest.skip("no installed `socratic` command beside this interpreter")
    plant, marker = tmp_path / "workspace", tmp_path / "imported"
    plant.mkdir()
    mods = ("sitecustomize", "usercustomize") if name == "cwd_pythonpath_and_startup" else (
        "statistics", "sitecustomize", "usercustomize", "numpy", "torch", "json")
    for mod in mods:
        (plant / f"{mod}.py").write_text(PLANT.format(pid=os.getpid(), marker=str(marker)))
    env = dict(os.environ)
    if name == "cwd_pythonpath_and_startup":
        env.update(PYTHONPATH=str(plant), PYTHONSTARTUP=str(plant / "sitecustomize.py"), PYTHONINSPECT="")
    res = socratic("eval", "flash_attn_fwd", "--scenarios", "smoke", "--json", cwd=plant, env=env, script=True)
    assert not marker.exists(), f"a planted module was imported: {marker.read_text()}"
    assert res.code == 0, res.stderr[-400:]
    fa3 = [r["comparisons"]["fa3"]["speedup"] for r in res.doc["scenarios"]
           if ((r.get("comparisons") or {}).get("fa3") or {}).get("speedup")]
    # the comparison process ran (it is the one a planted statistics.py once reached); on
    # smoke's tiny shapes the naive baseline can beat FA3, so its figure proves nothing here
    assert fa3 or res.doc.get("comparisons_unavailable"), res.doc["scenarios"][0].get("comparisons")
