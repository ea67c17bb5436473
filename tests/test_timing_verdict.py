"""The timed comparison's schedule and verdict (evaluator/timing.py), without a GPU."""

from __future__ import annotations

import pytest

from socratic.evaluator.protocol import Timing
from socratic.evaluator.timing import (
    ORDER_LIMIT,
    OWN_MEMORY_LIMIT,
    PLACE_ALLOWANCE,
    pairs_needed,
    settled,
    speed_verdict,
)

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


def test_a_place_that_speeds_every_kernel_cancels():
    # H200, 2026-12-06: the second sample of a pair read ~2.3% faster, whichever role it was;
    # the lower per-order median read the baseline against itself at 0.977
    v = verdict([1.0, 0.977] * 10, [0.977, 1.0] * 10)
    assert v.speedup == pytest.approx(1.0, abs=0.004) and v.failures == []   # PLACE_ALLOWANCE 1.02 of 1.0235
    assert v.order_ratio == pytest.approx(1.0 / 0.977 ** 2, rel=1e-3)


def test_a_candidate_faster_only_when_it_runs_first_reads_its_other_place():
    # odd pairs run the candidate first; a gain there alone never counts
    v = verdict([1.0] * 20, [1.0, 0.9] * 10)
    assert v.speedup == pytest.approx(1.0)
    v = verdict([1.0] * 20, [0.9] * 20)   # a gain in both places does
    assert v.speedup == pytest.approx(1 / 0.9)


def test_a_candidate_faster_only_when_second_gains_at_most_the_place_allowance():
    # H100: the baseline's first place carries the judge's own history (+15%); a candidate
    # 14% faster when it runs second (it can tell its place by its own call gaps) would read
    # that offset as its gain if first places were only compared with first places
    v = verdict([1.15, 1.0] * 20, [1 / 1.14, 1.0] * 20)
    assert v.speedup <= PLACE_ALLOWANCE + 1e-9 and v.failures == []
    v = verdict([1.0, 0.977] * 20, [1 / 1.14, 1.0] * 20)   # the H200's place effect: nothing gained
    assert v.speedup == pytest.approx(1.0, abs=0.004)


def test_slow_drift_cancels_between_adjacent_pairs():
    drift = [1.0 + 0.002 * i for i in range(40)]
    v = verdict(drift, drift)
    assert v.speedup == pytest.approx(1.0, abs=0.003)


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


# each copy of a timed sample on its own (copy_profile) -----------------------------------

def _profile(per_copy_us, pairs=120, noise_us=0.3, seed=0):
    """Per-pair per-copy times (ms) around `per_copy_us`, read through event timestamps 0.5 us apart."""
    import numpy as np
    rng = np.random.default_rng(seed)
    x = np.asarray(per_copy_us, dtype=float)[None, :] + rng.normal(0, noise_us, (pairs, len(per_copy_us)))
    return np.round(x / 0.5) * 0.5e-3


def test_copies_that_each_do_their_own_work_pass_a_colder_first_copy_and_an_odd_slot_too():
    # as an honest rewrite read on an H200: 0.59x on every copy but one slot, 0.69x (its
    # buffers' placement), and a first copy a little colder than the baseline's
    from socratic.evaluator.timing import copy_profile
    base = _profile([7.4] + [6.0] * 20 + [6.8] + [6.0] * 11)
    cand = _profile([13.9] + [10.2] * 20 + [9.9] + [10.2] * 11, seed=1)
    p = copy_profile(base, cand)
    assert not p.failures, p
    assert abs(p.first) < 0.15 and 0.1 < p.spread < 0.25


def test_a_first_copy_that_computes_the_later_ones_fails_naming_it():
    # copies_batch_ahead_rms on an H200, r1-c4k: copy 1 0.348x (20.2 us), the others 0.642x
    from socratic.evaluator.timing import copy_profile
    base = _profile([7.04] + [7.0] * 32)
    cand = _profile([20.2] + [10.9] * 32, seed=1)
    p = copy_profile(base, cand)
    assert len(p.failures) == 1 and "copy 1 of 33" in p.failures[0], p.failures
    assert "\n" not in p.failures[0]


def test_copies_done_in_pairs_or_left_to_the_last_fail():
    from socratic.evaluator.timing import copy_profile
    base = _profile([7.0] * 34)
    pairs = _profile([12.0, 4.0] * 17, seed=2)         # even copies do the next one's too
    behind = _profile([6.0] * 33 + [40.0], seed=3)     # the last does everyone's
    for cand in (pairs, behind):
        assert copy_profile(base, cand).failures


def test_two_copies_the_second_left_empty_fail():
    from socratic.evaluator.timing import copy_profile
    base = _profile([110.0, 100.0])
    assert not copy_profile(base, _profile([95.0, 85.0], seed=1)).failures
    assert copy_profile(base, _profile([180.0, 4.0], seed=1)).failures


def test_copies_alternating_heavy_and_padded_fail():
    # red team: copy 2k does copy 2k+1's rows too, copy 2k+1 finds its outputs written and spins
    # to half the heavy copy's time; one copy in between puts the median between the two groups
    from socratic.evaluator.timing import copy_profile
    base = _profile([2.0] * 16, noise_us=0.04)
    cand = _profile([1.5, 0.75] * 7 + [1.5, 1.1], noise_us=0.03, seed=4)
    assert copy_profile(base, cand).failures


def test_two_long_copies_the_second_padded_fail():
    # 100 us copies: a first copy doing both, the second spinning to 70% of it, reads -0.3
    from socratic.evaluator.timing import copy_profile
    base = _profile([101.0, 100.0])
    assert copy_profile(base, _profile([100.0, 70.0], seed=5)).failures
    assert not copy_profile(base, _profile([86.0, 85.0], seed=5)).failures


def _placed(n: int, judge: float, swapped: float, cand_gain: float = 1.0) -> tuple[list[float], list[float]]:
    """n pairs of the baseline against a kernel `cand_gain` times faster, where the judge's
    buffers make any kernel take `judge` and the candidate's `swapped`: pairs 4j, 4j+1 the
    baseline on the judge's and the candidate on its own; 4j+2, 4j+3 swapped."""
    base, cand = [], []
    for i in range(n):
        mirrored = (i // 2) % 2 == 1
        base.append(swapped if mirrored else judge)
        cand.append((judge if mirrored else swapped) / cand_gain)
    return base, cand


def test_two_placements_read_the_geometric_mean_of_each():
    # a buffer placement 6% faster for the candidate's own allocations, the same kernel on
    # both sides: unswapped it reads 1.06; swapped half the pairs it reads 1.0 exactly,
    # whatever share of pairs each placement got
    assert verdict([1.0] * 64, [1.06 ** -1] * 64).speedup == pytest.approx(1.06)
    for n in (64, 68, 70):
        base, cand = _placed(n, 1.0, 1.06 ** -1)
        v = verdict(base, cand, placements=2)
        assert v.speedup == pytest.approx(1.0) and v.failures == []
        assert v.baseline_ms == pytest.approx(v.candidate_ms)


def test_two_placements_keep_a_real_gain():
    base, cand = _placed(64, 1.0, 0.95, cand_gain=1.2)
    assert verdict(base, cand, placements=2).speedup == pytest.approx(1.2)


def test_a_gain_in_one_placement_counts_for_its_half_only():
    # a candidate that is fast only where its buffers are its own allocations
    base, cand = _placed(64, 1.0, 1.0)
    cand = [c / 1.5 if (i // 2) % 2 == 0 else c for i, c in enumerate(cand)]
    assert verdict(base, cand, placements=2).speedup == pytest.approx(1.5 ** 0.5)
