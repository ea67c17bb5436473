"""What stands between the copies of a timed sample (worker.COPY_MARKS): event record nodes
as shipped, or stamps (a one-thread kernel writing the global timer into a slot of a buffer
at a random address of the role's context), chosen once per worker; each copy's time read back
from either. No GPU: the chain's arguments and the stamps' arithmetic. The GPU side is the
launch-order probe's variant `stamps` (research/launch_order)."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import socratic.evaluator.worker as W
from socratic.evaluator.candidate_context import DevBuf
from socratic.evaluator.plan import PlanError, PlanLib
from socratic.evaluator.timing import copy_profile, stamp_times
from socratic.evaluator.worker import WorkerRun


class Plan:
    """plan.chain as the worker calls it: its arguments kept."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def chain(self, graphs, events, region, stamps):
        self.calls.append((graphs, events, region, stamps))
        return len(self.calls)

    marks = staticmethod(PlanLib.marks)


def run(stamps: bool, flush: bool = False) -> Any:
    w: Any = WorkerRun.__new__(WorkerRun)
    w.plan, w.chains = Plan(), {}
    w.copy_events = {} if stamps else {"base": list(range(100, 230)), "cand": list(range(300, 430))}
    w.copy_stamps = {"base": (11, SimpleNamespace(handle=0xB000)), "cand": (22, SimpleNamespace(handle=0xC000))} if stamps else {}
    w.gpu = SimpleNamespace(flush_region=(0xF0, 64))
    w.cctx = SimpleNamespace(flush_region=(0xF1, 64), current=nullcontext)
    return w


def slots(n: int) -> list[Any]:
    return [SimpleNamespace(graphs={"base": 1000 + k, "cand": 2000 + k}) for k in range(n)]


@pytest.mark.parametrize("who, fn, buf", [("base", 11, 0xB000), ("cand", 22, 0xC000)])
def test_stamps_replace_the_event_nodes_in_each_roles_own_context(who, fn, buf):
    w = run(stamps=True)
    s = slots(3)
    WorkerRun._chain(w, who, s, (0, 1, 2), True)
    graphs, events, region, stamps = w.plan.calls[0]
    assert graphs == [s[0].graphs[who], s[1].graphs[who], s[2].graphs[who]]
    assert events == [] and stamps == (fn, buf) and region == (0, 0)


def test_events_as_shipped_one_more_than_the_copies():
    w = run(stamps=False)
    WorkerRun._chain(w, "cand", slots(3), (0, 1, 2), True)
    _graphs, events, _region, stamps = w.plan.calls[0]
    assert events == [300, 301, 302, 303] and stamps == (0, 0)


def test_an_unmarked_sample_has_nothing_between_its_copies(monkeypatch):
    # the speed verdict's samples (worker.MARKED_SHARE): its copies back to back, no flush either
    monkeypatch.setattr(W, "FLUSH_BETWEEN_COPIES", True)
    for stamps in (True, False):
        w = run(stamps=stamps)
        s = slots(3)
        WorkerRun._chain(w, "cand", s, (0, 1, 2))
        assert w.plan.calls[0][1:] == ([], (0, 0), (0, 0))
        assert WorkerRun._chain(w, "cand", s, (0, 1, 2), True) == 2   # the marked chain is another one


def test_one_copy_takes_no_marks():
    for stamps in (True, False):
        w = run(stamps=stamps)
        WorkerRun._chain(w, "base", slots(1), (0,))
        assert w.plan.calls[0][1:] == ([], (0, 0), (0, 0))


def test_stamps_with_a_flush_between_copies(monkeypatch):
    monkeypatch.setattr(W, "FLUSH_BETWEEN_COPIES", True)
    w = run(stamps=True)
    WorkerRun._chain(w, "cand", slots(2), (0, 1), True)
    assert w.plan.calls[0][2:] == ((0xF1, 64), (22, 0xC000))


def test_a_chain_is_made_once_per_role_and_slots():
    w = run(stamps=True)
    s = slots(2)
    assert WorkerRun._chain(w, "base", s, (0, 1)) == WorkerRun._chain(w, "base", s, (0, 1)) == 1
    assert WorkerRun._chain(w, "cand", s, (0, 1)) == 2


def test_events_and_stamps_together_are_refused_before_cuda_sees_them():
    lib: Any = PlanLib.__new__(PlanLib)   # no library needed: the check comes first
    with pytest.raises(PlanError, match="events or stamps"):
        lib.chain([1, 2], [5, 6, 7], (0, 0), (9, 0xB000))


def test_marks_per_layout():
    assert PlanLib.marks(5, flush=False) == 6 and PlanLib.marks(5, flush=True) == 10


def test_stamp_times_per_copy_in_ms():
    ns = np.array([1_000_000, 1_004_000, 1_006_500, 1_010_000], dtype=np.uint64)
    assert stamp_times(ns, [(0, 1), (1, 2), (2, 3)]) == pytest.approx([0.004, 0.0025, 0.0035])
    flushed = np.array([0, 3000, 9000, 12000], dtype=np.uint64)   # start, end, (flush), start, end
    assert stamp_times(flushed, [(0, 1), (2, 3)]) == pytest.approx([0.003, 0.003])


def test_a_stamp_out_of_order_reads_negative_and_the_profile_fails():
    ns = np.array([1_000_000, 1_004_000, 1_002_000, 1_010_000], dtype=np.uint64)
    times = stamp_times(ns, [(0, 1), (1, 2), (2, 3)])
    assert times[1] < 0
    honest = np.tile([0.004, 0.004, 0.004], (20, 1))
    assert copy_profile(honest, np.tile(times, (20, 1))).failures


def test_copy_times_read_each_roles_stamps_where_they_are():
    w: Any = WorkerRun.__new__(WorkerRun)
    cand = np.array([0, 2000, 4500, 7000], dtype=np.uint64)
    base = np.array([10, 3010, 6010, 9010], dtype=np.uint64)
    w.copy_stamps = {"base": (1, "judge-buf"), "cand": (2, "cand-buf")}

    def to_host(buf, nbytes, out):
        assert buf == "judge-buf" and nbytes == base.nbytes
        out[:] = base.view(np.uint8)
    w.gpu = SimpleNamespace(to_host=to_host)
    w.cctx = SimpleNamespace(read=lambda buf, n: cand.tobytes()[:n] if buf == "cand-buf" else b"")
    assert WorkerRun._copy_times(w, "cand", 3) == pytest.approx([0.002, 0.0025, 0.0025])
    assert WorkerRun._copy_times(w, "base", 3) == pytest.approx([0.003, 0.003, 0.003])


def test_shipped_marks_are_events():
    assert W.COPY_MARKS == "events"


class FakeDriver:
    """The virtual-memory calls alloc_hidden makes: hints refused, moved, then honoured."""

    CUresult = SimpleNamespace(CUDA_SUCCESS=0)
    CUmemAllocationType = SimpleNamespace(CU_MEM_ALLOCATION_TYPE_PINNED=1)
    CUmemLocationType = SimpleNamespace(CU_MEM_LOCATION_TYPE_DEVICE=1)
    CUmemAllocationGranularity_flags = SimpleNamespace(CU_MEM_ALLOC_GRANULARITY_MINIMUM=0)
    CUmemAccess_flags = SimpleNamespace(CU_MEM_ACCESS_FLAGS_PROT_READWRITE=3)

    def __init__(self, answers: list[str]):
        self.answers = answers
        self.freed: list[int] = []
        self.mapped: list[tuple[int, int]] = []

    @staticmethod
    def CUmemAllocationProp():
        return SimpleNamespace(location=SimpleNamespace())

    @staticmethod
    def CUmemAccessDesc():
        return SimpleNamespace()

    def cuMemGetAllocationGranularity(self, prop, flag):
        return (0, 2 << 20)

    def cuMemAddressReserve(self, size, align, hint, flags):
        answer = self.answers.pop(0) if hint else "driver"
        if answer == "refuse":
            return (1, 0)
        return (0, hint if answer == "honour" else 0x7F00_0000_0000)

    def cuMemAddressFree(self, ptr, size):
        self.freed.append(ptr)
        return (0,)

    def cuMemCreate(self, size, prop, flags):
        return (0, "phys")

    def cuMemMap(self, ptr, size, offset, handle, flags):
        self.mapped.append((ptr, size))
        return (0,)

    def cuMemSetAccess(self, ptr, size, descs, n):
        return (0,)


def hidden_ctx() -> Any:
    import socratic.evaluator.candidate_context as CC

    ctx: Any = CC.CandidateContext.__new__(CC.CandidateContext)
    ctx._ordinal, ctx._hidden, ctx.current = 0, [], nullcontext
    return ctx


def test_hidden_memory_lies_at_a_random_hint_after_refused_and_moved_ones(monkeypatch):
    import socratic.evaluator.candidate_context as CC

    fake = FakeDriver(["refuse", "move", "honour"])
    monkeypatch.setattr(CC, "driver", fake)
    buf = hidden_ctx().alloc_hidden(1000)
    assert fake.freed == [0x7F00_0000_0000]            # the moved reservation given back
    assert CC.HIDDEN_BASE <= buf.handle < CC.HIDDEN_BASE + CC.HIDDEN_SPAN and buf.handle % (2 << 20) == 0
    assert buf.hidden
    assert buf.nbytes == 2 << 20 and fake.mapped == [(buf.handle, 2 << 20)]


def test_hidden_memory_two_places_apart():
    import socratic.evaluator.candidate_context as CC

    ctx = hidden_ctx()
    addrs = set()
    for _ in range(2):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(CC, "driver", FakeDriver(["honour"]))
            addrs.add(ctx.alloc_hidden(64).handle)
    assert len(addrs) == 2   # 2^25 places: two draws alike once in 30 million


def test_hidden_memory_where_the_driver_chooses_when_no_hint_holds(monkeypatch):
    import socratic.evaluator.candidate_context as CC

    fake = FakeDriver(["move"] * CC.HIDDEN_TRIES)
    monkeypatch.setattr(CC, "driver", fake)
    buf = hidden_ctx().alloc_hidden(64)
    assert buf.handle == 0x7F00_0000_0000 and len(fake.freed) == CC.HIDDEN_TRIES and not buf.hidden


def test_stamps_fall_back_to_events_where_their_buffer_could_not_be_hidden(monkeypatch):
    monkeypatch.setattr(W, "COPY_MARKS", "stamps")
    monkeypatch.setattr(W, "driver", SimpleNamespace(cuEventCreate=lambda flags: (0, "ev"),
                                                     CUevent_flags=SimpleNamespace(CU_EVENT_DEFAULT=0)))
    monkeypatch.setattr(W, "check", lambda result: result[1])
    w: Any = WorkerRun.__new__(WorkerRun)
    w.copy_events, w.copy_stamps = {}, {}
    w.cctx = SimpleNamespace(alloc_hidden=lambda n: DevBuf(0x7F00_0000_0000, n, hidden=False), current=nullcontext)
    WorkerRun._make_copy_marks(w)
    assert w.copy_stamps == {} and len(w.copy_events["base"]) == len(w.copy_events["cand"]) == 2 * W.MAX_COPIES


def test_a_failed_mapping_gives_its_reservation_back(monkeypatch):
    import socratic.evaluator.candidate_context as CC

    fake = FakeDriver(["honour"])
    fake.cuMemMap = lambda *a: (7,)                  # type: ignore[method-assign]
    monkeypatch.setattr(CC, "driver", fake)
    monkeypatch.setattr(CC, "check", lambda r: (_ for _ in ()).throw(RuntimeError("map failed")) if r[0] else r[1] if len(r) > 1 else None)
    fake.cuMemUnmap = lambda ptr, size: (0,)         # type: ignore[attr-defined]
    fake.cuMemRelease = lambda h: (0,)               # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="map failed"):
        hidden_ctx().alloc_hidden(64)
    assert len(fake.freed) == 1
