"""The judge's timing phase, CPU side, against what a red team found (2026-12): the captures
of a sample's timing-only copies run the candidate's process again after the quiet probe
before timing, so the probe must come again before the first pair; and the warm-up pairs,
timed calls a candidate can tell apart by counting, stay in the outputs' statistics.
The GPU side: tests/test_round3_gpu.py (side_work_after_capture_rms)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import numpy as np

from socratic.evaluator.protocol import Timing
from socratic.evaluator.worker import ErrorStats, WorkerRun


def judge(quiet: list[str], calls: list[str]) -> tuple[Any, tuple[Any, ...]]:
    def prepare(slots: list[object], v: object) -> list[str]:
        calls.append(f"capture {len(slots)}")
        return []

    def probe() -> list[str]:
        calls.append("quiet")
        return quiet

    w: Any = WorkerRun.__new__(WorkerRun)   # no GPU: only what _time reaches before its first pair
    w.gpu = MagicMock()
    w.task = SimpleNamespace(outputs=[SimpleNamespace(name="y", floor=1e-3)])
    w.job = SimpleNamespace(timing=Timing(min_pairs=10, max_pairs=400, target_ms=150.0, max_seconds=1.5))
    w.set_dists = [SimpleNamespace(name=n) for n in ("normal", "large_logits", "outlier_channels")]
    w._copies = lambda slot, v: 4
    w._make_copy_marks = lambda: None
    w._slot = lambda v, d, out: object()
    w._prepare, w._quiet = prepare, probe
    w._pair = lambda *a: calls.append("pair")
    args = (SimpleNamespace(values={}), [object()] * 3, {"normal": {"y": ErrorStats()}}, SimpleNamespace(outputs={}),
            SimpleNamespace())
    return w, args


def test_work_left_by_the_timing_captures_is_probed_for_before_the_first_pair():
    calls: list[str] = []
    w, args = judge(["the GPU stayed busy with work outside the judge"], calls)
    assert w._time(*args) == ["the GPU stayed busy with work outside the judge"]
    assert calls == ["capture 3", "quiet"]   # 4 copies: 1 correctness set reused, 3 captured anew


def test_the_warm_up_pairs_outputs_stay_in_the_statistics():
    # the sampler's statistics are not reset after the warm-up: a candidate that counts its
    # calls knows which pairs are warm-up ones, and nothing else judges their outputs
    calls: list[str] = []
    w, args = judge([], calls)
    samples: list[Any] = []
    w._pair = lambda st, i, timed: samples.append(st)
    warmed: list[Any] = []
    w._warm_marked = lambda st, salt: warmed.append(st)
    w._event = lambda i: float(i)
    w.cctx = SimpleNamespace(elapsed_ms=lambda a, b: 2.0)
    w.gpu.new_stats.side_effect = MagicMock
    w.gpu.free_memory.return_value = 0
    w.gpu.info.name = "no such GPU"
    w._device_lag = lambda: 0.0
    w.rng = np.random.default_rng(0)
    w.task.metric = lambda name, sc: 1.0
    w._timed_output_failures = lambda errors, st: []
    assert w._time(*args) == []
    st = samples[0]
    assert all(s is st for s in samples) and len(samples) > 3   # warm-up and timed pairs alike
    assert warmed == [st] and st.marked   # 4 copies: a marked quarter, its chains run once untimed first
    for buf in [*st.spot.values(), *st.complete.values()]:
        assert not buf.fill.called, "the warm-up's statistics were thrown away"
