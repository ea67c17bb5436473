"""The timed sample's lead-in with worker.WARM_PAGES (off until measured on a GPU): every
buffer of every copy read in the sample's own context before the spin, the flush and the
start event, for both roles alike; untimed calls and the switch off untouched. No GPU."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest

import socratic.evaluator.worker as W
from socratic.evaluator.candidate_context import DevBuf
from socratic.evaluator.worker import Slot, WorkerRun


class Recorder:
    """A context's stream as the lead-in drives it: each call appended to `log`."""

    def __init__(self, who: str, log: list):
        self.who, self.log, self.stream_handle = who, log, 0

    def __getattr__(self, name: str):
        return lambda *args: self.log.append((self.who, name, *(getattr(a, "handle", a) for a in args)))

    def current(self):
        return nullcontext()


def fake_run(log: list) -> SimpleNamespace:
    task = SimpleNamespace(outputs=[SimpleNamespace(name="y", dtype="bf16")])
    plan = SimpleNamespace(launch=lambda chain, stream: log.append(("plan", "launch", chain)))
    gpu, cctx = Recorder("judge", log), Recorder("cand", log)
    return SimpleNamespace(task=task, gpu=gpu, cctx=cctx, plan=plan, _event=lambda k: k,
                           _chain=lambda who, slots, ids, marked=False: f"{who}-chain")


def slot(k: int) -> Slot:
    def b(h: int):
        return SimpleNamespace(handle=h, size=256)
    return Slot(dist=None, inputs={"x": b(0x100 + k)}, base_out={"y": b(0x200 + k)}, base_ws={"ws": b(0x300 + k)},  # type: ignore[arg-type]
                cand_in={"x": DevBuf(0x900 + k, 256)}, cand_out={"y": DevBuf(0xA00 + k, 256)},
                cand_ws={"ws": DevBuf(0xB00 + k, 256)}, view={})


@pytest.mark.parametrize("role, who, first", [("base", "judge", 0x100), ("cand", "cand", 0x900)])
def test_every_buffer_of_every_copy_is_read_in_the_samples_own_context_before_its_lead_in(
        monkeypatch, role, who, first):
    monkeypatch.setattr(W, "WARM_PAGES", True)
    log: list = []
    WorkerRun._enqueue(fake_run(log), role, [slot(0), slot(1)], [0, 1], 7, (0, 1))  # type: ignore[arg-type]
    steps = [e[1] for e in log]
    touched = [e[2] for e in log if e[1] == "touch"]
    assert all(e[0] == who for e in log if e[1] == "touch")
    # inputs, outputs, workspace (0x100 apart) of each copy (k)
    assert sorted(touched) == sorted(first + d + k for d in (0, 0x100, 0x200) for k in (0, 1))
    # after the copies' fresh poison and workspace, before the spin, the flush and the start event
    assert max(i for i, s in enumerate(steps) if s in ("poison", "scramble")) < steps.index("touch")
    last_touch = max(i for i, s in enumerate(steps) if s == "touch")
    assert last_touch < steps.index("delay") < steps.index("flush_l2") < steps.index("record") < steps.index("launch")


def test_no_touch_when_off_or_untimed(monkeypatch):
    for warm, events in ((False, (0, 1)), (True, None)):
        monkeypatch.setattr(W, "WARM_PAGES", warm)
        for role in ("base", "cand"):
            log: list = []
            WorkerRun._enqueue(fake_run(log), role, [slot(0)], [0], 7, events)  # type: ignore[arg-type]
            assert "touch" not in [e[1] for e in log] and ("plan", "launch", f"{role}-chain") in log
