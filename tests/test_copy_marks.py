"""What stands between the copies of a timed sample: event record nodes, each role's in its own
context, only in the marked samples (worker.MARKED_SHARE); each copy's time read back from
them. No GPU: the chain's arguments and the events' reading. The GPU side is the copy profile's
tests (tests/test_round3_gpu.py, `copies`)."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import pytest

import socratic.evaluator.worker as W
from socratic.evaluator.plan import PlanError, PlanLib
from socratic.evaluator.worker import WorkerRun


class Plan:
    """plan.chain as the worker calls it: its arguments kept."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def chain(self, graphs, events, region):
        self.calls.append((graphs, events, region))
        return len(self.calls)

    marks = staticmethod(PlanLib.marks)


def run() -> Any:
    w: Any = WorkerRun.__new__(WorkerRun)
    w.plan, w.chains = Plan(), {}
    w.copy_events = {"base": list(range(100, 230)), "cand": list(range(300, 430))}
    w.gpu = SimpleNamespace(flush_region=(0xF0, 64))
    w.cctx = SimpleNamespace(flush_region=(0xF1, 64), current=nullcontext)
    return w


def slots(n: int) -> list[Any]:
    return [SimpleNamespace(graphs={"base": 1000 + k, "cand": 2000 + k}) for k in range(n)]


@pytest.mark.parametrize("who, first", [("base", 100), ("cand", 300)])
def test_a_marked_sample_has_one_event_more_than_its_copies_of_its_own_role(who, first):
    w = run()
    s = slots(3)
    WorkerRun._chain(w, who, s, (0, 1, 2), True)
    graphs, events, region = w.plan.calls[0]
    assert graphs == [s[0].graphs[who], s[1].graphs[who], s[2].graphs[who]]
    assert events == [first, first + 1, first + 2, first + 3] and region == (0, 0)


def test_an_unmarked_sample_has_nothing_between_its_copies(monkeypatch):
    # the speed verdict's samples (worker.MARKED_SHARE): its copies back to back, no flush either
    monkeypatch.setattr(W, "FLUSH_BETWEEN_COPIES", True)
    w = run()
    s = slots(3)
    WorkerRun._chain(w, "cand", s, (0, 1, 2))
    assert w.plan.calls[0][1:] == ([], (0, 0))
    assert WorkerRun._chain(w, "cand", s, (0, 1, 2), True) == 2   # the marked chain is another one


def test_one_copy_takes_no_marks():
    w = run()
    WorkerRun._chain(w, "base", slots(1), (0,), True)
    assert w.plan.calls[0][1:] == ([], (0, 0))


def test_a_flush_between_copies_takes_each_copys_start_and_end(monkeypatch):
    monkeypatch.setattr(W, "FLUSH_BETWEEN_COPIES", True)
    w = run()
    WorkerRun._chain(w, "cand", slots(2), (0, 1), True)
    assert w.plan.calls[0][1:] == ([300, 301, 302, 303], (0xF1, 64))


def test_a_chain_is_made_once_per_role_and_slots():
    w = run()
    s = slots(2)
    assert WorkerRun._chain(w, "base", s, (0, 1)) == WorkerRun._chain(w, "base", s, (0, 1)) == 1
    assert WorkerRun._chain(w, "cand", s, (0, 1)) == 2


def test_a_wrong_count_of_events_is_refused_before_cuda_sees_it():
    lib: Any = PlanLib.__new__(PlanLib)   # no library needed: the check comes first
    with pytest.raises(PlanError, match="takes 3 events, not 2"):
        lib.chain([1, 2], [5, 6], (0, 0))


def test_marks_per_layout():
    assert PlanLib.marks(5, flush=False) == 6 and PlanLib.marks(5, flush=True) == 10


def test_copy_times_read_each_roles_events_in_its_context(monkeypatch):
    entered: list[str] = []

    class Ctx:
        def __enter__(self):
            entered.append("cand")

        def __exit__(self, *a):
            return False

    stamps = {f"b{k}": 3.0 * k for k in range(4)} | {f"c{k}": [0, 2, 4.5, 7][k] for k in range(4)}
    monkeypatch.setattr(W, "check", lambda r: r)
    monkeypatch.setattr(W, "driver", SimpleNamespace(cuEventElapsedTime=lambda a, b: stamps[b] - stamps[a]))
    w: Any = WorkerRun.__new__(WorkerRun)
    w.copy_events = {"base": [f"b{k}" for k in range(4)], "cand": [f"c{k}" for k in range(4)]}
    w.cctx = SimpleNamespace(current=Ctx)
    assert WorkerRun._copy_times(w, "cand", 3) == pytest.approx([2, 2.5, 2.5]) and entered == ["cand"]
    assert WorkerRun._copy_times(w, "base", 3) == pytest.approx([3, 3, 3]) and entered == ["cand"]


def test_the_events_are_made_once_each_role_in_its_context(monkeypatch):
    made: list[int] = []
    monkeypatch.setattr(W, "driver", SimpleNamespace(cuEventCreate=lambda flags: made.append(1) or len(made),
                                                     CUevent_flags=SimpleNamespace(CU_EVENT_DEFAULT=0)))
    monkeypatch.setattr(W, "check", lambda result: result)
    w: Any = WorkerRun.__new__(WorkerRun)
    w.copy_events = {}
    w.cctx = SimpleNamespace(current=nullcontext)
    WorkerRun._make_copy_marks(w)
    WorkerRun._make_copy_marks(w)
    assert len(w.copy_events["base"]) == len(w.copy_events["cand"]) == 2 * W.MAX_COPIES == len(made) // 2
