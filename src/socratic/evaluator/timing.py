"""The timed comparison's schedule and verdict, pure: no GPU, no clock. The worker's sampler
(WorkerRun._time) runs the interleaved pairs and hands the sample times here.

Schedule: warm-up pairs until two consecutive pair times agree within 2% (clocks settled),
then enough pairs for `target_ms` of timed work, within [min_pairs, max_pairs].
Verdict: the baseline runs first in even pairs, the candidate in odd ones. Each role is
compared with the other in the same place: its first-in-pair sample against the other's
first-in-pair sample of the adjacent pair, likewise the second ones; so what a place does to
any kernel cancels (the second sample of a pair read ~2.3% faster for both roles on an H200,
2026-12-06: the lower per-order median read 0.97-0.98 for the baseline against itself). A
third reading guards the second place: the candidate first against the baseline second in the
same pair, allowed the baseline's own place ratio up to PLACE_ALLOWANCE. The speedup is the
lowest of the three, so a gain seen in one place only counts for at most 2%: on an H100 the
baseline's first place carries the judge's own history (its fills and input copies come just
before; ~0.36 us a call, research/launch_order), and a candidate faster when it runs second
would otherwise read that offset as its gain. The scenario fails when the candidate's own
time moves with the order by more than ORDER_LIMIT (it profits from what ran just before it),
or when the baseline is that much slower right after the candidate than before it (work the
candidate left lands in the baseline's time).
Copies: a sample of several back-to-back calls; in a quarter of the pairs (blocks chosen at
random, left out of the verdict) each copy is also timed on its own (event nodes between
them); every copy must read the same speedup as the others (the first, colder one, within a
wider band): a copy that did the work of others, or left its own to another, reads far off
(copy_profile); and the marks must cost the candidate what they cost the baseline
(marks_agree)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from socratic.evaluator.protocol import Timing

WARMUP_PAIRS = 30             # at most this many warm-up pairs
SETTLED = 0.02                # two consecutive warm-up pair times this close: the clocks settled
ORDER_LIMIT = 1.15            # a role's per-order medians further apart than this fail the scenario
PLACE_ALLOWANCE = 1.02        # the most a second place may speed a kernel, read from the baseline's
OWN_MEMORY_LIMIT = 64 << 20   # device memory a candidate may hold of its own (code, statics)
CHUNK = 16                    # timed pairs between two checks for work left running
# Honest copies differ by where their buffers lie: on an H200 (2026-12-06, 177 rows of copies > 1
# over the GPU tests and controls) later copies read up to 0.23 apart (one slot of ~33, the same
# one every time), first copies up to 0.19 (microsecond copies; 0.03 at 20 us and more); a first
# copy doing the later ones' work read a spread of 0.84-1.22, copies done in pairs 1.56-2.1
# (benchmarks/judge_h200/copy_profiles.py). Tolerances scale with the baseline's copy time,
# never the candidate's (a copy padded to look busy must not widen its own band).
COPY_SPREAD = 0.35            # one later copy's speedup this far from the later copies' median fails
COPY_BULK = 0.20              # ... a quarter of them this far (copies alternating heavy and padded)
COPY_FIRST = 0.15             # the first copy's, plus COPY_COLD_MS of the baseline's copy time
COPY_COLD_MS = 1e-3           # what a cold first copy may cost more (its code, tables, translations)
COPY_JITTER_MS = 1e-4         # per copy time: what event timestamps (about 0.5 us apart) leave in a mean
# The marked samples (marks between their copies) against the unmarked (the verdict's): a
# candidate that works ahead only where its copies are not timed apart gains there alone. The
# marks cost about a constant per copy (H100, s23: ~2.5 us for event nodes, the candidate 0.25-0.47
# us a call more than the baseline), so the bound is mostly absolute: a 0.2 ms call may not hide
# 20 us of work ahead under a relative one.
MARKS_AGREE = 0.03            # the candidate's extra cost of the marks over the baseline's: at most
MARKS_AGREE_MS = 6e-4         # ... this share of the baseline's unmarked time a call, plus this


def settled(w: int, per_pair_ms: float, last_pair_ms: float | None) -> bool:
    """Warm-up pair `w` (from 0) took `per_pair_ms`, the one before `last_pair_ms`."""
    return last_pair_ms is not None and w >= 2 and abs(per_pair_ms - last_pair_ms) <= SETTLED * last_pair_ms


def pairs_needed(per_pair_ms: float, opts: Timing) -> int:
    """Timed pairs for `opts.target_ms` of work, within the options' bounds."""
    return int(min(opts.max_pairs, max(opts.min_pairs, math.ceil(opts.target_ms / max(per_pair_ms, 1e-4)))))


@dataclass
class SpeedVerdict:
    """What the timed pairs say of the candidate's speed; `failures` one line each."""
    baseline_ms: float
    candidate_ms: float
    speedup: float
    spread: float
    pairs: int
    order_ratio: float
    tflops: float | None
    tbps: float | None
    bound_ms: float | None
    bound_fraction: float | None
    below_bound: bool
    failures: list[str] = field(default_factory=list)


def _center(x: np.ndarray, placements: int, per: int = 1) -> float:
    """The median of `x`; with two placements (pairs 4j and 4j+1 on the judge's buffers, 4j+2
    and 4j+3 swapped; `per` values of `x` to two pairs), the geometric mean of each
    placement's median, so that neither placement's share of the values decides it."""
    place = (np.arange(len(x)) // per) % placements
    if placements == 1 or len(set(place.tolist())) < placements:
        return float(np.median(x))
    return float(np.exp(np.mean([np.log(np.median(x[place == p])) for p in range(placements)])))


def speed_verdict(base_ms: Sequence[float], cand_ms: Sequence[float], *, copies: int, took_bytes: int,
                  flops: float | None, nbytes: float | None, bound: dict[str, float | None],
                  placements: int = 1) -> SpeedVerdict:
    """From per-call sample times (pair i's baseline and candidate; the baseline first in
    even pairs), the memory the candidate took meanwhile and the datasheet bounds
    (`limits.bound_ms`): the row's speed figures and the speed rules' failures. With
    `placements` 2 the kernels swapped buffers every other two pairs (worker.SWAP_PLACES):
    every reading is the geometric mean of the two placements' (where a kernel's buffers lie
    moved microsecond rows by up to 6% either way, the same for a whole run)."""
    b, c = np.asarray(base_ms, dtype=float), np.asarray(cand_ms, dtype=float)
    ratios = b / c

    def center(x: np.ndarray) -> float:   # x's k-th value from pairs 2k and 2k+1
        return _center(x, placements)

    med_base_first, med_cand_first = center(ratios[0::2]), center(ratios[1::2])
    b_first, b_second = center(b[0::2]), center(b[1::2])
    c_first, c_second = center(c[1::2]), center(c[0::2])
    m = 2 * (len(b) // 2)
    # pairs 2k and 2k+1: the baseline first in one, the candidate first in the other
    same_place = [b[0:m:2] / c[1:m:2], b[1:m:2] / c[0:m:2]] if m else [ratios]
    place = min(max(b_first / b_second, 1.0), PLACE_ALLOWANCE) if len(b) > 1 else 1.0
    med = min([center(r) for r in same_place] + [place * med_cand_first])
    q1, q3 = np.percentile(np.concatenate(same_place), [25, 75])
    b_ms, c_ms = _center(b, placements, per=2), _center(c, placements, per=2)
    # back-to-back copies may find their inputs in L2: the DRAM limit holds for one copy only
    physical = bound["physical"] if copies == 1 else None
    measured = bound["measured"]
    v = SpeedVerdict(
        baseline_ms=b_ms, candidate_ms=c_ms, speedup=float(med), spread=float((q3 - q1) / 2), pairs=len(ratios),
        order_ratio=max(med_base_first, med_cand_first) / min(med_base_first, med_cand_first),
        tflops=flops / (c_ms * 1e9) if flops else None, tbps=nbytes / (c_ms * 1e9) if nbytes else None,
        bound_ms=measured, bound_fraction=measured / c_ms if measured else None,
        below_bound=bool(physical and c_ms < physical))
    if max(c_first, c_second) > ORDER_LIMIT * min(c_first, c_second) or b_second > ORDER_LIMIT * b_first:
        v.failures.append(f"speedup depends on launch order ({med_base_first:.3f} when the baseline runs first, "
                          f"{med_cand_first:.3f} when the candidate does; median ms a call, first | second: "
                          f"baseline {b_first:.4g} | {b_second:.4g}, candidate {c_first:.4g} | {c_second:.4g})")
    if took_bytes > OWN_MEMORY_LIMIT:
        v.failures.append(f"candidate took {took_bytes / 2**20:.0f} MiB of device memory during timed runs")
    if v.below_bound and physical is not None:
        v.failures.append(f"candidate time {c_ms:.4g} ms is below the physical limit {physical:.4g} ms")
    return v


@dataclass
class CopyProfile:
    """Each copy of the timed samples against the others: `first` and `spread` are the first
    copy's and the farthest later copy's speedup relative to the later copies' median, minus 1."""
    first: float
    spread: float
    failures: list[str] = field(default_factory=list)


def marked_pairs(n: int, block: int, share: float, min_blocks: int, rng: np.random.Generator) -> tuple[int, set[int]]:
    """`n` unmarked pairs (a multiple of `block`) and, on top, blocks of `block` pairs for the
    marks, `share` of all and at least `min_blocks`, at random places: the total and the marked
    pairs. Whole blocks, so that the unmarked pairs alternate the orders (and placements) as
    all pairs do."""
    blocks = n // block
    extra = max(min_blocks, math.ceil(blocks * share / (1 - share)))
    chosen = rng.choice(blocks + extra, size=extra, replace=False)
    return (blocks + extra) * block, {int(b) * block + j for b in chosen for j in range(block)}


@dataclass
class MarksAgreement:
    """What the marks between copies cost the candidate a call beyond what they cost the
    baseline (ms; medians of the marked and unmarked samples); `failures` one line each."""
    excess_ms: float
    failures: list[str] = field(default_factory=list)


def marks_agree(base_ms: Sequence[float], cand_ms: Sequence[float], marked_base_ms: Sequence[float],
                marked_cand_ms: Sequence[float]) -> MarksAgreement:
    """The speed verdict reads the samples with no marks between their copies, the copy profile
    those with them (blocks of pairs chosen at random): a candidate faster only in the
    unmarked ones (it works ahead where its copies are not timed one by one) pays the marks
    more than the baseline does. Per-call sample times in ms."""
    bu, cu = float(np.median(base_ms)), float(np.median(cand_ms))
    bm, cm = float(np.median(marked_base_ms)), float(np.median(marked_cand_ms))
    a = MarksAgreement(excess_ms=(cm - cu) - (bm - bu))
    if a.excess_ms > MARKS_AGREE * bu + MARKS_AGREE_MS:
        a.failures.append(
            f"the candidate reads faster where its copies are not timed one by one: the marks between them "
            f"cost it {a.excess_ms * 1e3:.2f} us a call more than the baseline (baseline {bu * 1e3:.2f} -> "
            f"{bm * 1e3:.2f} us, candidate {cu * 1e3:.2f} -> {cm * 1e3:.2f} us a call)")
    return a


def _trimmed_mean(x: np.ndarray) -> np.ndarray:
    """Per column, the mean without its highest and lowest tenth (robust to a stray sample;
    a median of timestamps about 0.5 us apart would carry their steps, a mean averages them out)."""
    x = np.sort(x, axis=0)
    cut = len(x) // 10
    return np.asarray(x[cut:len(x) - cut].mean(axis=0))


def copy_profile(base_ms: np.ndarray, cand_ms: np.ndarray) -> CopyProfile:
    """From each timed pair's per-copy times (rows: pairs, columns: copies in order; ms), the
    copies' speedups against each other. A copy that computes later copies' outputs (their
    inputs are all in place before the first starts) is slow where they are fast; one that
    leaves its work to a later copy, fast where that one is slow: only a gain from running
    the copies together shows as copies far apart, which one call never has."""
    mb, mc = _trimmed_mean(np.asarray(base_ms)), _trimmed_mean(np.asarray(cand_ms))
    speedup = mb / np.maximum(mc, 1e-9)
    typical = float(np.median(speedup[1:]))
    dev = speedup / typical - 1
    base_copy = max(float(np.median(mb[1:])), 1e-6)   # ms: the baseline's, out of the candidate's reach
    slack = 2 * COPY_JITTER_MS / base_copy
    later = np.abs(dev[1:])
    p = CopyProfile(first=float(dev[0]), spread=float(later.max()))
    worst = None
    if abs(dev[0]) > COPY_FIRST + COPY_COLD_MS / base_copy + slack:
        worst = 0
    elif later.max() > COPY_SPREAD + slack:
        worst = int(np.argmax(later)) + 1
    elif len(later) >= 4 and float(np.percentile(later, 75)) > COPY_BULK + slack:
        worst = int(np.argmax(later)) + 1
    if worst is None:
        return p
    p.failures.append(
        f"the copies of a timed sample do not each do their own work: copy {worst + 1} of {len(mb)} reads "
        f"{speedup[worst]:.3f}x ({mc[worst] * 1e3:.2f} us against the baseline's {mb[worst] * 1e3:.2f}), "
        f"the other copies {typical:.3f}x")
    return p
