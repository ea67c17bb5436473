"""The swapped placement of timed pairs (worker.SWAP_PLACES, off until measured on a GPU):
which slots a pair runs on, and a mirror slot's buffers, without a GPU."""

from __future__ import annotations

from types import SimpleNamespace

from socratic.evaluator.candidate_context import DevBuf
from socratic.evaluator.worker import Slot, WorkerRun, _Sample


def sample(mirrors: list) -> _Sample:
    return _Sample(slots=["a", "b"], v={}, ref=None, spot={}, complete={}, audit={}, mirrors=mirrors)  # type: ignore[list-item,arg-type]


def test_pairs_run_on_the_mirrors_every_other_two_pairs_both_orders_in_each():
    st = sample(["A", "B"])
    placed = [st.placed(i) for i in range(8)]
    assert placed == [["a", "b"], ["a", "b"], ["A", "B"], ["A", "B"]] * 2
    assert all(sample([]).placed(i) == ["a", "b"] for i in range(8))   # the switch off: always the slots


class Buf(SimpleNamespace):
    """A judge buffer as the worker reads it: `.handle` and `.size`."""


def test_a_mirror_gives_each_kernel_the_others_allocations_and_keeps_the_judges_view():
    judge = {n: Buf(handle=h, size=512) for n, h in (("x", 0x1000), ("y", 0x2000), ("ws", 0x3000))}
    cand = {n: DevBuf(h, 512) for n, h in (("x", 0x9000), ("y", 0xA000), ("ws", 0xB000))}
    view = {"y": Buf(handle=0x5000, size=512)}
    slot = Slot(dist=None, inputs={"x": judge["x"]}, base_out={"y": judge["y"]}, base_ws={"ws": judge["ws"]},  # type: ignore[arg-type]
                cand_in={"x": cand["x"]}, cand_out={"y": cand["y"]}, cand_ws={"ws": cand["ws"]}, view=view)
    fake = SimpleNamespace(gpu=SimpleNamespace(foreign=lambda ptr, n: Buf(handle=ptr, size=n)), scenario_slots=[],
                           _params=lambda v, i, o, w: (i, o, w))
    m = WorkerRun._mirror(fake, slot, {}, {"y": "ref_out"})  # type: ignore[arg-type]
    assert m.mirrored and not slot.mirrored and fake.scenario_slots == [m]
    assert (m.inputs["x"].handle, m.base_out["y"].handle, m.base_ws["ws"].handle) == (0x9000, 0xA000, 0xB000)
    assert (m.cand_in["x"].handle, m.cand_out["y"].handle, m.cand_ws["ws"].handle) == (0x1000, 0x2000, 0x3000)
    assert m.view is view   # the candidate's outputs still read back where the judge reads them
    assert m.base_params == (m.inputs, m.base_out, m.base_ws)
    assert m.cand_params == (m.cand_in, m.cand_out, m.cand_ws)
    assert m.ref_params == (m.inputs, {"y": "ref_out"}, m.base_ws)   # the reference beside the baseline
