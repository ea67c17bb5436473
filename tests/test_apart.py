"""Where a timed copy's output first parts from the baseline's (evaluator/apart.py and the
worker's watch after each pair): the element, both values, and each kernel run again on the same
inputs, so that a failure line says whose output moved. No GPU: host arithmetic, and the worker's
watch over fake device buffers."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from socratic.evaluator.apart import Apart, farthest, host_values, position, rounding_step
from socratic.evaluator.gpu import STATS_DTYPE
from socratic.evaluator.worker import ErrorStats, WorkerRun, _Sample, spot_tolerance


def bf16_bytes(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)


def test_host_values_of_each_dtype():
    x = np.array([0.5, -2.0, 0.1234], dtype=np.float32)
    assert host_values(bf16_bytes(x), "bf16")[:2].tolist() == [0.5, -2.0]
    assert host_values(bf16_bytes(x), "bf16")[2] == pytest.approx(0.1234, rel=2**-7)
    assert host_values(x.astype(np.float16).view(np.uint8), "f16").tolist() == pytest.approx(x.tolist(), rel=1e-3)
    assert host_values(x.view(np.uint8), "f32").tolist() == x.tolist()


def test_farthest_apart_where_both_are_finite_as_the_device_measures():
    c = np.array([1.0, 2.0, np.nan, 4.0, np.inf], dtype=np.float32)
    b = np.array([1.0, 2.5, 7.0, 3.9, 1.0], dtype=np.float32)
    i, d = farthest(c, b)                         # an unwritten (NaN) or infinite element: other checks' business
    assert i == 1 and d == pytest.approx(0.5, abs=1e-6)
    assert farthest(np.array([np.nan], dtype=np.float32), np.array([1.0], dtype=np.float32)) == (0, 0.0)


def test_one_rounding_step_of_the_output_type_is_not_a_parting():
    # s24c2 (H100): the shipped kernel and the baseline one bf16 step apart at |o| ~ 1.07
    # (0.0078, over a bound of 0.0037 drawn from smaller values), each the same when run again
    one, two = np.float32(1.0625 + 2**-7), np.float32(1.0625 + 2**-6)
    base = np.array([1.0625, 1.0625, -3.0], dtype=np.float32)
    assert rounding_step(np.array([1.0625, -0.25, 0.0], dtype=np.float32), "bf16").tolist() == [2**-7, 2**-9, 2.0**-133]
    assert rounding_step(np.array([1.0], dtype=np.float32), "f16").tolist() == [2**-10]
    assert farthest(np.array([one, 1.0625, -3.0], dtype=np.float32), base, "bf16") == (0, 0.0)
    assert farthest(np.array([1.0625, two, -3.0], dtype=np.float32), base, "bf16") == (1, 2**-7)
    assert farthest(np.array([1.0625, 1.0625, -3.0 - 2**-6], dtype=np.float32), base, "bf16") == (0, 0.0)   # one step at 3
    assert farthest(np.array([1.0625, 1.0625, -3.0 - 2**-5], dtype=np.float32), base, "bf16") == (2, 2**-6)
    assert farthest(np.array([1.0625, 1.0625, 2**-7 + 2**-8 - 3.0], dtype=np.float32), base, "bf16") == (0, 0.0)   # below 3 too
    assert farthest(np.array([one], dtype=np.float32), np.array([1.0625], dtype=np.float32), "f32")[1] > 0.007


def test_the_largest_finite_value_widens_nothing():
    # review, s24: a step read from max(|c|, |b|) was infinite where the candidate wrote the
    # largest finite value, hiding that element; the step is the baseline's value's alone
    big_bf16 = np.array([0x7F7F << 16], dtype=np.uint32).view(np.float32)
    assert farthest(big_bf16, np.array([1.0], dtype=np.float32), "bf16")[1] > 1e38
    big_f32 = np.array([np.finfo(np.float32).max], dtype=np.float32)
    assert farthest(big_f32, np.array([1.0], dtype=np.float32), "f32")[1] > 1e38
    # the baseline at the largest value: the step below it, finite
    below = np.array([0x7F7E << 16], dtype=np.uint32).view(np.float32)
    assert rounding_step(big_bf16, "bf16")[0] == float(big_bf16[0]) - float(below[0]) == 2.0**120
    assert farthest(below, big_bf16, "bf16") == (0, 0.0)
    assert np.isfinite(rounding_step(big_f32, "f32")).all()


def test_position_names_every_axis():
    dims, names = [2, 3, 4], ["batch", "seqlen_q", "head_dim"]
    assert position(1 * 12 + 2 * 4 + 3, dims, names) == "batch 1, seqlen_q 2, head_dim 3"


def test_the_clause_says_whose_value_moved_when_run_again():
    a = Apart(pair=57, copy=0, copies=1, where="batch 2, seqlen_q 811", cand=0.125, base=0.1211,
              cand_again=0.125, base_again=0.125)
    assert a.clause() == ("pair 57, copy 1 of 1, at [batch 2, seqlen_q 811]: candidate 0.125, baseline 0.1211; "
                          "run again on the same inputs: candidate the same, baseline 0.125")
    assert "run again" not in Apart(1, 2, 3, "x 0", 1.0, 2.0).clause()
    assert Apart(4, 0, 1, "x 0", 1.0, 2.0, warmup=True).clause().startswith("warm-up pair 4, copy 1 of 1")


def test_spot_tolerance_is_the_shipped_rule():
    e = ErrorStats(b_max=0.000615)
    assert spot_tolerance(e, 1e-3) == pytest.approx(0.00369)   # s23c2's draw 55
    assert spot_tolerance(ErrorStats(b_max=1e-5), 1e-3) == pytest.approx(2 * (1e-3 + 1e-5))


class FakeGpu:
    """Device buffers as host arrays: what the watch reads, and the kernels' runs as edits."""

    def __init__(self, mem: dict[str, np.ndarray], cb_max: float):
        self.mem, self.cb_max, self.reads = mem, cb_max, 0

    def read_stats_many(self, bufs):
        self.reads += 1
        out = np.zeros(len(bufs), dtype=STATS_DTYPE)
        out["cb_max"] = self.cb_max
        return list(out)

    def to_host(self, buf, nbytes, out):
        out[:] = bf16_bytes(self.mem[buf])[:nbytes]
        return out

    def sync(self):
        pass

    def hashes(self, bufs):
        return []


def watched(cb_max: float) -> tuple[Any, Any, list[str]]:
    base = np.zeros(24, dtype=np.float32)
    cand = base.copy()
    cand[13] = 0.5                                   # the element that parted
    mem = {"view0": cand, "out0": base.copy()}
    log: list[str] = []
    w: Any = WorkerRun.__new__(WorkerRun)
    w.task = SimpleNamespace(outputs=[SimpleNamespace(name="o", dtype="bf16", shape=["b", "s", "d"], role="output")])
    w.gpu = FakeGpu(mem, cb_max)
    w.cctx = SimpleNamespace(current=nullcontext, sync=lambda: None)
    w._copy_inputs = lambda slots, v: log.append("inputs")

    def enqueue(role, slots, ids, salt, events, marked=False):
        log.append(f"{role} {ids} {events}")
        if role == "base":
            mem["out0"][13] = 0.25                   # the baseline's second run moves: it is the flaky one
    w._enqueue = enqueue
    def judge_state(*args: object) -> list:
        log.append("fingerprint")
        return []
    w._judge_state = judge_state
    w._read_back = lambda slots, v: log.append("read back")
    def untouched(judged: list, held: list, then: Any = None) -> list[str]:
        if then is not None:   # the judge's own work behind the second digests
            then()
        return []
    w._untouched = untouched
    slot: Any = SimpleNamespace(view={"o": "view0"}, base_out={"o": "out0"})
    ref: Any = SimpleNamespace()
    st = _Sample(slots=[slot], v={"b": 2, "s": 3, "d": 4}, ref=ref, spot={"o": "spot"},
                 complete={}, audit={}, tolerance={"o": 0.004}, warmup=False)
    return w, st, log


def test_an_output_past_its_bound_is_looked_at_while_its_pair_is_there():
    w, st, log = watched(cb_max=0.5)
    WorkerRun._watch(w, st, 57, st.slots)
    a = st.apart["o"]
    assert (a.pair, a.copy, a.where, a.cand, a.base) == (57, 0, "b 1, s 0, d 1", 0.5, 0.0)
    assert (a.cand_again, a.base_again) == (0.5, 0.25)
    # the baseline run again first, then the candidate, fingerprinted around, untimed
    assert log == ["inputs", "base [0] None", "fingerprint", "cand [0] None", "read back"]
    WorkerRun._watch(w, st, 58, st.slots)           # once per output: nothing is read again
    assert w.gpu.reads == 2 and len(log) == 5


def test_nothing_is_looked_at_within_the_bound():
    w, st, log = watched(cb_max=0.001)
    WorkerRun._watch(w, st, 3, st.slots)
    assert st.apart == {} and log == []


def test_the_failure_line_carries_the_clause():
    w, st, _log = watched(cb_max=0.5)
    WorkerRun._watch(w, st, 57, st.slots)
    w.task.outputs[0].floor = 1e-3
    stats = np.zeros(1, dtype=STATS_DTYPE)[0]
    stats["cb_max"] = 0.5
    w.gpu.read_stats = lambda buf: stats
    st.audited, st.ref, st.complete, st.audit = 0, SimpleNamespace(n_selected=0, per_unit={"o": 1}), {"o": "c"}, {"o": "a"}
    w._check_output = lambda b, e, base: []
    lines = WorkerRun._timed_output_failures(w, {"o": ErrorStats(b_max=0.0006)}, st)
    assert len(lines) == 1 and "\n" not in lines[0]
    assert lines[0].startswith("o: timed runs differ from the baseline by 0.5 beyond one rounding step (pair 57, copy 1 of 1, at [b 1, s 0, d 1]")
    assert lines[0].endswith("candidate the same, baseline 0.25)")


def test_a_fault_in_the_account_leaves_the_verdict_alone():
    w, st, _log = watched(cb_max=0.5)
    w.task.outputs[0].shape = ["b", "s", "q"]        # an axis the scenario does not define
    WorkerRun._watch(w, st, 9, st.slots)
    assert st.apart["o"].where.startswith("not found: ") and "pair 9" in st.apart["o"].clause()
