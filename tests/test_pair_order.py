"""A timed pair's order as the host enqueues it, both contexts' work recorded (no GPU): the two
contexts never have work queued at once, the candidate's sample starts only once the judge's
memory has been fingerprinted and that read back, and after it the first thing the judge
enqueues is the second fingerprint, once the candidate's whole context is done. And the pair's
host waits, each a moment the GPU idles while the host enqueues the next step (the cost of a
bench evaluation: research/judge_cost), stay few. The GPU side of the digests is
tests/test_round3_gpu.py."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from socratic.evaluator import worker as worker_module
from socratic.evaluator.gpu import STATS_DTYPE
from socratic.evaluator.worker import WorkerRun, _Sample

JUDGE_STREAM = 0x51

# the host's waits a timed pair may make: the first digests' read-back (before the candidate's
# sample), the candidate's whole context, the second digests' (the judge's own checks enqueued
# behind them), the watch's statistics; an audited pair one more (the units the reference
# checks, copied in). s26 had 8 (H100: ~3.75 ms a pair beyond the kernels).
MAX_WAITS = 4


class Device:
    """What each context has queued and not yet waited for, as the host enqueues it."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.queued = {"judge": False, "cand": False}
        self.cand_context_idle = True   # the candidate's whole context, not only its stream
        self.waits = 0
        self.fills = 0          # the judge's input fills so far
        self.cand_inputs = -1   # the fill the candidate's copy of the inputs holds

    def enqueue(self, who: str, what: str) -> None:
        other = "cand" if who == "judge" else "judge"
        assert not self.queued[other], f"{who}: {what} enqueued while the {other}'s work may still run ({self.log[-4:]})"
        self.queued[who] = True
        if what == "cand sample":   # the candidate's own work: what it launched may outlive its stream
            self.cand_context_idle = False
        self.log.append((who, what))

    def wait(self, who: str, whole: bool = False) -> None:
        self.waits += 1
        self.queued[who] = False
        if who == "cand" and whole:
            self.cand_context_idle = True
        self.log.append(("wait", who + (" context" if whole else "")))


class FakeGpu:
    def __init__(self, dev: Device):
        self.dev, self.stream_handle = dev, JUDGE_STREAM
        self.after = 0   # what the second digests read (0: as the first)

    def _digests(self, n: int) -> None:
        assert self.dev.cand_context_idle, "digests taken while the candidate's context may still run"
        self.dev.enqueue("judge", "digests")

    def hashes(self, bufs: list[Any]) -> list[int]:
        self._digests(len(bufs))
        self.dev.wait("judge")
        return [0] * len(bufs)

    def hash_later(self, bufs: list[Any]) -> tuple[int, int]:
        self._digests(len(bufs))
        return 1, len(bufs)

    def hash_results(self, ticket: tuple[int, int]) -> list[int]:
        self.dev.wait("judge")
        return [self.after] * ticket[1]

    def sync(self) -> None:
        self.dev.wait("judge")

    def compare(self, *args: Any) -> None:
        self.dev.enqueue("judge", "compare")

    def read_stats_many(self, bufs: list[Any]) -> list[np.void]:
        self.dev.wait("judge")
        return list(np.zeros(len(bufs), dtype=STATS_DTYPE))


class FakeContext:
    def __init__(self, dev: Device):
        self.dev, self.current = dev, nullcontext

    def copy_in(self, dst: Any, src: int, nbytes: int, stream: int | None = None) -> None:
        self.dev.enqueue("judge" if stream == JUDGE_STREAM else "cand", "copy inputs")
        self.dev.cand_inputs = self.dev.fills

    def copy_out(self, dst: int, src: Any, nbytes: int) -> None:
        self.dev.enqueue("cand", "read back")

    def sync(self) -> None:
        self.dev.wait("cand")

    def sync_all(self) -> None:
        self.dev.wait("cand", whole=True)


def worker(dev: Device) -> Any:
    w: Any = WorkerRun.__new__(WorkerRun)
    buf = SimpleNamespace(handle=0x1000)
    w.task = SimpleNamespace(
        inputs=[SimpleNamespace(name="q", dtype="bf16", shape=[], role="input")],
        outputs=[SimpleNamespace(name="o", dtype="bf16", shape=[], role="output")],
        buffers=[SimpleNamespace(name="q", dtype="bf16", shape=[], role="input"),
                 SimpleNamespace(name="o", dtype="bf16", shape=[], role="output")])
    w.gpu, w.cctx = FakeGpu(dev), FakeContext(dev)
    def fill(inputs: Any, v: Any, dist: Any) -> None:
        dev.enqueue("judge", "fill")
        dev.fills += 1

    def enqueue(role: str, slots: Any, ids: Any, salt: Any, events: Any, marked: bool = False) -> None:
        if role == "cand":   # every sample of the candidate's reads this pair's fill, as the baseline's does
            assert dev.cand_inputs == dev.fills, f"the candidate's sample on fill {dev.cand_inputs} of {dev.fills}"
        dev.enqueue("judge" if role == "base" else "cand", f"{role} sample")
    w._fill_inputs, w._enqueue = fill, enqueue
    w._judge_state = lambda slots, ref, v, more=(): [("the judge's buffers", buf, 256)]
    w.ref_fn = None
    return w


def sample(dev: Device, audited: set[int]) -> _Sample:
    buf = SimpleNamespace(handle=0x2000)
    slot: Any = SimpleNamespace(dist=None, inputs={"q": buf}, cand_in={"q": buf}, view={"o": buf},
                                base_out={"o": buf}, cand_out={"o": buf}, mirrored=False)
    def reference(fn: Any, slot: Any, gpu: Any, stream: Any) -> None:
        dev.enqueue("judge", "reference")
        dev.wait("judge")   # ReferenceCheck.run's from_host of the units it checks
    ref: Any = SimpleNamespace(outputs={"o": buf}, run=reference,
                               forget=lambda slot, gpu: dev.enqueue("judge", "reference forgotten"))
    st = _Sample(slots=[slot], v={}, ref=ref, spot={"o": buf}, complete={"o": buf}, audit={"o": buf},
                 tolerance={"o": 1.0}, warmup=False)
    st.audit_pairs = {i: 0 for i in audited}
    return st


def pair_log(dev: Device, w: Any, st: _Sample, i: int) -> list[tuple[str, str]]:
    start = len(dev.log)
    WorkerRun._pair(w, st, i, True)
    assert not dev.queued["cand"] and dev.cand_context_idle, "the pair ends with the candidate's work queued"
    return dev.log[start:]


@pytest.fixture(params=["judge", "candidate"])
def copied_in(request, monkeypatch):
    """Both places the candidate's inputs may be copied (worker.INPUTS_COPIED_IN)."""
    monkeypatch.setattr(worker_module, "INPUTS_COPIED_IN", request.param)
    return request.param


@pytest.mark.parametrize("i", [0, 1, 2])   # the baseline first in even pairs, the candidate in odd
@pytest.mark.parametrize("audited", [False, True])
def test_a_timed_pair_keeps_the_contexts_apart_and_fingerprints_around_the_candidate(i, audited, copied_in):
    dev = Device()
    w, st = worker(dev), sample(dev, {i, i + 1} if audited else set())
    for j in (i, i + 1):   # two pairs running on: the second starts from where the first left
        log = pair_log(dev, w, st, j)
        at = log.index(("cand", "cand sample"))
        judged_before = [e for e in log[:at] if e[0] == "judge"]
        late = copied_in == "candidate"   # its inputs copied at the head of its sample
        assert judged_before[-1] == ("judge", "digests")
        assert log[at - 1 - late] == ("wait", "judge") and (not late or log[at - 1] == ("cand", "copy inputs"))
        after = log[at + 1:]
        first_judge = next(k for k, e in enumerate(after) if e[0] == "judge")
        assert after[first_judge] == ("judge", "digests")
        assert ("wait", "cand context") in after[:first_judge]
        assert ("cand", "read back") in after[:first_judge]   # the compares read what it copied
        # fresh inputs copied in after their fill: before either sample on the judge's stream,
        # or on the candidate's once the judge's is done (the contexts apart, checked above)
        assert log[0] == ("judge", "fill") and log.count(("judge", "fill")) == 1
        assert log.count(("judge" if not late else "cand", "copy inputs")) == 1
        assert log.count(("cand" if not late else "judge", "copy inputs")) == 0
        assert late or log[1] == ("judge", "copy inputs")
        assert (("judge", "reference") in log) == audited


@pytest.mark.parametrize("i", [0, 1])
@pytest.mark.parametrize("audited", [False, True])
def test_a_timed_pair_waits_at_most_four_times_and_the_audit_once_more(i, audited, copied_in):
    dev = Device()
    WorkerRun._pair(worker(dev), sample(dev, {i} if audited else set()), i, True)
    assert dev.waits <= MAX_WAITS + audited, [e for e in dev.log if e[0] == "wait"]


@pytest.mark.parametrize("i", [0, 1])
def test_a_marked_pair_reads_each_copys_time_with_the_contexts_still_apart(i, copied_in):
    dev = Device()
    w, st = worker(dev), sample(dev, set())
    st.slots = st.slots * 2   # two copies, timed one by one
    st.marked = {i}
    w._copy_times = lambda who, n: [0.5] * n
    pair_log(dev, w, st, i)
    assert st.copy_ms["base"][i] == st.copy_ms["cand"][i] == [0.5, 0.5]


@pytest.mark.parametrize("written", [False, True])
def test_when_the_judges_own_work_fails_a_write_of_the_candidates_is_named(written):
    from socratic.evaluator.gpu import GpuError

    dev = Device()
    w, st = worker(dev), sample(dev, set())
    w.gpu.after = 7 if written else 0

    def fails(role: str, *args: Any, **kw: Any) -> None:
        if role == "base":
            raise GpuError("CUDA_ERROR_ILLEGAL_ADDRESS: the baseline's replay")
        dev.enqueue("cand", "cand sample")
    w._enqueue = fails
    with pytest.raises(GpuError) as caught:
        WorkerRun._pair(w, st, 1, True)   # the candidate first: the baseline runs behind the digests
    assert ("the candidate wrote the judge's memory" in str(caught.value)) == written
    assert "the baseline's replay" in str(caught.value)


def test_the_fake_sees_the_candidate_enqueued_beside_the_judges_work():
    # the rule this file checks can fail: a candidate sample right after the baseline's, no wait
    dev = Device()
    dev.enqueue("judge", "base sample")
    with pytest.raises(AssertionError, match="may still run"):
        dev.enqueue("cand", "cand sample")
