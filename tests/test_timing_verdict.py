"""The timed comparison's schedule and verdict (evaluator/timing.py), without a GPU."""

from __future__ import annotations

import pytest

from socratic.evaluator.protocol import Timing
from socratic.evaluator.timing import ORDER_LIMIT, OWN_MEMORY_LIMIT, pairs_needed, settled, speed_verdict

NO_BOUND: dict[str, float | None] = {"physical": None, "measured": None}


def verdict(base, cand, **kw):
    args = dict(copies=1, took_bytes=0, flops=None, nbytes=None, bound=NO_BOUND)
    return speed_verdict(base, cand, **{**args, **kw})


def test_the_clocks_settle_on_two_close_pairs_after_the_first_two():
    assert not settled(0, 1.0, None)
    assert not settled(1, 1.0, 1.0)           # the first pairs warm the clocks, whatever they read
    assert settled(2, 1.01, 1.0)
    assert not settled(5, 1.05, 1.0)


def test_pairs_fill_the_target_within_bounds():
    opts = Timing(min_pairs=10, max_pairs=200, target_ms=100.0, max_seconds=10.0)
    assert pairs_needed(1.0, opts) == 100
    assert pairs_needed(50.0, opts) == 10      # long kernels: the minimum
    assert pairs_needed(0.0, opts) == 200      # a zero time cannot ask for infinitely many


def test_the_same_time_reads_one_and_fails_nothing():
    v = verdict([2.0] * 20, [2.0] * 20)
    assert v.speedup == pytest.approx(1.0) and v.order_ratio == pytest.approx(1.0)
    assert v.failures == [] and v.pairs == 20 and v.spread == pytest.approx(0.0)


def test_a_baseline_slower_when_it_runs_first_reads_the_lower_median_and_fails_nothing():
    # the judge's own history before a first baseline (H100, microsecond RMSNorm): even pairs
    # run the baseline first, and only there is it slower
    base = [1.3, 1.0] * 10
    v = verdict(base, [1.0] * 20)
    assert v.speedup == pytest.approx(1.0)
    assert v.order_ratio == pytest.approx(1.3) and v.order_ratio > ORDER_LIMIT
    assert v.failures == []


def test_a_candidate_faster_when_it_runs_second_fails():
    # even pairs run the candidate second: there it reads what the baseline just made
    v = verdict([1.0] * 20, [0.7, 1.0] * 10)
    assert v.speedup == pytest.approx(1.0)
    assert v.failures == ["speedup depends on launch order (1.429 when the baseline runs first, "
                          "1.000 when the candidate does; median ms a call, first | second: "
                          "baseline 1 | 1, candidate 1 | 0.7)"]


def test_a_baseline_slower_right_after_the_candidate_fails():
    # odd pairs run the baseline second: work the candidate left lands in its time
    [line] = verdict([1.0, 1.3] * 10, [1.0] * 20).failures
    assert line.startswith("speedup depends on launch order") and "baseline 1 | 1.3" in line


def test_an_order_difference_within_the_limit_passes():
    v = verdict([1.1, 1.0] * 10, [1.0] * 20)
    assert v.failures == [] and v.speedup == pytest.approx(1.0)


def test_memory_taken_during_timing_fails():
    assert verdict([1.0] * 4, [1.0] * 4, took_bytes=OWN_MEMORY_LIMIT).failures == []
    [line] = verdict([1.0] * 4, [1.0] * 4, took_bytes=OWN_MEMORY_LIMIT + (1 << 20)).failures
    assert line == "candidate took 65 MiB of device memory during timed runs"


def test_below_the_physical_limit_fails_only_for_single_copy_samples():
    bound = {"physical": 0.5, "measured": 0.6}
    v = verdict([1.0] * 4, [0.25] * 4, bound=bound, flops=1e9, nbytes=1e6)
    assert v.below_bound and v.failures == ["candidate time 0.25 ms is below the physical limit 0.5 ms"]
    assert v.tflops == pytest.approx(4.0) and v.tbps == pytest.approx(0.004)
    assert v.bound_fraction == pytest.approx(2.4)
    # back-to-back copies may find their inputs in L2: no physical limit then
    assert verdict([1.0] * 4, [0.25] * 4, bound=bound, copies=8).failures == []
