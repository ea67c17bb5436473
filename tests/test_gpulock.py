"""GPU turns (socratic.gpulock): two processes on one GPU take turns, the waiter is told who
holds it and how long it waited, a killed holder frees the GPU at once, and the evaluator
(real runner and fake) waits before its GPU part, never inside a measurement."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from socratic.gpulock import Holder, current_holder, gpu_turn, locks_dir, visible_gpu_key
from socratic.resources import resolve_task_dir
from socratic_doubles.testing import candidate_source, make_task

HOLD = """
import sys, time
from socratic.gpulock import gpu_turn
with gpu_turn(sys.argv[1], "holder script"):
    print("held", flush=True)
    if sys.argv[2] == "release":
        sys.stdin.readline()      # until the test says so
    else:
        time.sleep(float(sys.argv[2]))
"""


def hold(key: str, seconds: float | None = None) -> subprocess.Popen:
    """A process that holds `key` for `seconds` (None: until release()); returns once it
    holds it."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, key,
                          "release" if seconds is None else str(seconds)],
                         stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"held"
    return p


def release(p: subprocess.Popen, after_s: float = 0.0) -> None:
    """Let the holder go, `after_s` seconds from now (without blocking the caller)."""
    def go() -> None:
        p.stdin.write(b"\n")
        p.stdin.flush()
    threading.Timer(after_s, go).start()


@pytest.fixture(autouse=True)
def own_locks(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_GPU_LOCKS", str(tmp_path / "locks"))


def test_keys_from_cuda_visible_devices():
    assert visible_gpu_key({}) == "index-0"
    assert visible_gpu_key({"CUDA_VISIBLE_DEVICES": "3,1"}) == "index-3"
    assert visible_gpu_key({"CUDA_VISIBLE_DEVICES": "GPU-1a2b-x"}) == "GPU-1a2b-x"


def test_two_processes_take_turns_and_the_wait_is_logged():
    holder = hold("GPU-abc", 1.0)
    seen = []
    assert current_holder("GPU-abc").pid == holder.pid
    t0 = time.monotonic()
    with gpu_turn("GPU-abc", "me", lambda key, h: seen.append((key, h))) as turn:
        got = time.monotonic()
        assert holder.wait(5) == 0   # our turn began as the holder let go, at its end
        assert current_holder("GPU-abc").pid == os.getpid()
    assert current_holder("GPU-abc") is None
    assert len(seen) == 1 and seen[0][0] == "GPU-abc" and seen[0][1].pid == holder.pid
    assert seen[0][1].what == "holder script"
    assert 0.5 < turn.wait_s <= got - t0 + 0.01
    # another GPU never waits for this one
    other = hold("GPU-abc", 1.0)
    with gpu_turn("GPU-def", "me") as turn2:
        assert turn2.wait_s == 0 and turn2.waited_for is None
    other.kill()
    other.wait()


def test_a_killed_holder_frees_the_gpu_at_once():
    holder = hold("index-0", 60)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    t0 = time.monotonic()
    with gpu_turn("index-0") as turn:
        assert turn.wait_s == 0
    assert time.monotonic() - t0 < 1


def test_an_unwritable_lock_folder_does_not_refuse_the_evaluation(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SOCRATIC_GPU_LOCKS", str(tmp_path / "file" / "locks"))
    with gpu_turn("index-0") as turn:
        assert turn.wait_s == 0


def fakeeval(task: Path, cand: Path, gpu: str) -> subprocess.Popen:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu)
    return subprocess.Popen([sys.executable, "-m", "socratic_doubles.fakeeval", str(task),
                             "--candidate", str(cand), "--json"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_fake_evaluations_on_one_gpu_take_turns(tmp_path):
    task = make_task(tmp_path)
    cand = tmp_path / "c.cu"
    cand.write_text(candidate_source(1.1, "// sleep: 0.5"))
    first = fakeeval(task, cand, "0")
    deadline = time.monotonic() + 30   # the second starts once the first has the GPU
    while (current_holder("index-0") or Holder(None, "", "", "")).pid != first.pid:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.01)
    second, third = fakeeval(task, cand, "0"), fakeeval(task, cand, "1")
    docs, errs = [], []
    for p in (first, second, third):
        out, err = p.communicate(timeout=30)
        docs.append(json.loads(out))
        errs.append(err)
    waits = [json.loads(line) for line in errs[1].splitlines() if '"gpu_wait"' in line]
    assert waits and waits[0]["gpu"] == "index-0" and "fakeeval tiny" in waits[0]["holder"]
    assert docs[0]["gpu_wait_s"] < 0.1 and docs[2]["gpu_wait_s"] < 0.1   # GPU 1 is free
    assert docs[1]["gpu_wait_s"] > 0.05 and docs[1]["gpu_lock"] == "index-0"
    # the numbers are those of the candidate, whatever the wait
    assert [r["speedup"] for r in docs[1]["scenarios"]] == [1.1, 1.1, 1.1]
    assert (locks_dir() / "index-0.lock").exists()


def test_the_evaluator_takes_its_turn_before_the_gpu_part(tmp_path, monkeypatch):
    """runner.evaluate: the wait happens before the workers start (no measurement can
    include it) and is reported as gpu_wait_s, beside the times."""
    from socratic.evaluator import runner
    from socratic.evaluator.build import BuildResult

    monkeypatch.setattr(runner, "gpu_present", lambda: None)
    monkeypatch.setattr(runner, "gpu_key", lambda: "GPU-test")
    lib = BuildResult(ok=True, cached=True, seconds=0.0, command="nvcc", log="", sha256="0" * 64,
                      resources=[], dir=tmp_path)
    lib.library.write_bytes(b"a built library's stand-in")   # its hash goes on record (build.libraries)
    monkeypatch.setattr(runner, "build", lambda *a, **k: lib)
    monkeypatch.setattr(runner, "build_task_sources", lambda *a, **k: (lib, lib))
    monkeypatch.setattr(runner.bans, "static_checks", lambda *a, **k: [])
    monkeypatch.setattr(runner, "missing_entry", lambda *a, **k: None)
    calls = []

    def workers(job, scenarios, timeout_s, progress, *more):
        calls.append((time.monotonic(), current_holder("GPU-test").pid))
        return [runner.failed_row(s, "not run: this test's stand-in") for s in scenarios], None

    monkeypatch.setattr(runner, "run_workers", workers)
    waited = []
    holder = hold("GPU-test")

    def waiting(key, h):
        waited.append((time.monotonic(), h.pid))
        release(holder, 0.6)

    doc = runner.evaluate(runner.EvalOptions(task_dir=resolve_task_dir("rmsnorm"),
                                             scenarios="smoke"), waiting=waiting)
    holder.wait()
    assert waited and waited[0][1] == holder.pid
    assert calls and calls[0][1] == os.getpid()          # the workers ran inside our turn
    assert calls[0][0] - waited[0][0] >= 0.5              # ... only after the wait
    doc = doc if isinstance(doc, dict) else doc.to_dict()
    assert doc["gpu_wait_s"] >= 0.5 and doc["gpu_lock"] == "GPU-test"


def test_the_harness_does_not_count_the_wait_against_its_timeout(tmp_path):
    """run_evaluator: a wait for the GPU's turn longer than the evaluation's whole time
    budget does not kill it; the wait is reported as it starts."""
    from socratic.harness.core.evaluator_process import run_evaluator
    from socratic_doubles.testing import FAKE_EVALUATOR

    task = make_task(tmp_path)
    cand = tmp_path / "c.cu"
    cand.write_text(candidate_source(1.3, "// sleep: 0.1"))
    holder = hold("index-0")
    waits = []

    def on_wait(line):   # the turn comes 2 s after the wait began: beyond the 1.5 s budget
        waits.append(line)
        release(holder, 2.0)

    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0")
    result, code, _, error = run_evaluator(FAKE_EVALUATOR, task, cand, None, env=env,
                                           timeout_s=1.5, on_gpu_wait=on_wait)
    holder.wait()
    assert error is None and code == 0, error
    assert waits and waits[0]["gpu"] == "index-0" and "holder script" in waits[0]["holder"]
    assert result.gpu_wait_s > 1.5
    # the budget still applies to the evaluation itself
    cand.write_text(candidate_source(1.3, "// sleep: 2"))
    result, code, _, error = run_evaluator(FAKE_EVALUATOR, task, cand, None, env=env,
                                           timeout_s=1.5)
    assert result is None and "ran past 1.5 s" in error


@pytest.mark.gpu
def test_the_gpu_key_is_the_uuid_nvidia_smi_shows():
    """On a GPU node: the evaluator's lock key for device 0 is its UUID, the same whatever
    index CUDA_VISIBLE_DEVICES gives it."""
    from socratic.evaluator.runner import gpu_key

    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=60).stdout.split()
    key = gpu_key()
    assert key in out, (key, out)   # (CUDA's device order need not be nvidia-smi's)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=key)
    again = subprocess.run([sys.executable, "-c", "from socratic.evaluator.runner import "
                            "gpu_key; print(gpu_key())"], env=env, capture_output=True,
                           text=True, timeout=120).stdout.strip()
    assert again == key
