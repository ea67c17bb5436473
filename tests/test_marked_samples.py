"""The marked samples (marks between their copies, for the copy profile) apart from the speed
verdict's unmarked ones: where they go among the pairs, and the agreement the two must show."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from socratic.evaluator.timing import MARKS_AGREE, MARKS_AGREE_MS, marked_pairs, marks_agree
from socratic.evaluator.worker import WorkerRun


@pytest.mark.parametrize("n, block", [(400, 2), (10, 2), (12, 4), (2, 2)])
def test_marked_blocks_on_top_keep_the_unmarked_pairs_alternating(n, block):
    rng = np.random.default_rng(7)
    total, marked = marked_pairs(n, block, 0.25, 2, rng)
    assert total - len(marked) == n                      # the verdict keeps all its pairs
    assert len(marked) >= 2 * block                       # at least two blocks for the copy profile
    if n >= 40:
        assert len(marked) / total == pytest.approx(0.25, abs=0.01)
    unmarked = [i for i in range(total) if i not in marked]
    # every block whole: the k-th unmarked pair has the parity (and placement) of the k-th of all pairs
    assert all(i % block == k % block for k, i in enumerate(unmarked))
    assert all({i - i % block + j for j in range(block)} <= marked for i in marked)


def test_marked_blocks_land_anywhere():
    firsts = {min(marked_pairs(40, 2, 0.25, 2, np.random.default_rng(s))[1]) for s in range(30)}
    assert len(firsts) > 5                                # not always first or last: a candidate cannot count to them


def test_marks_costing_both_roles_alike_agree():
    base, cand = [4e-3] * 9, [4.1e-3] * 9                 # ms a call
    a = marks_agree(base, cand, [6.5e-3] * 3, [6.9e-3] * 3)   # s23 H100: events cost ~2.5 us, the candidate +0.3
    assert a.failures == [] and a.excess_ms == pytest.approx(3e-4)


def test_working_ahead_only_where_copies_are_not_timed_apart_fails():
    # honest where the copies are timed one by one, 0.6x the baseline's time where they are not
    base, cand = [4e-3] * 9, [2.4e-3] * 9
    a = marks_agree(base, cand, [6.5e-3] * 3, [6.5e-3] * 3)
    assert a.excess_ms == pytest.approx(1.6e-3)
    assert len(a.failures) == 1 and "not timed one by one" in a.failures[0] and "1.60 us a call more" in a.failures[0]


def test_the_bound_scales_with_the_baseline():
    bound = MARKS_AGREE * 0.1 + MARKS_AGREE_MS           # a 100 us call
    assert not marks_agree([0.1], [0.1], [0.1025], [0.1025 + bound * 0.9]).failures
    assert marks_agree([0.1], [0.1], [0.1025], [0.1025 + bound * 1.1]).failures


def test_the_marked_chains_run_once_untimed_before_the_pairs():
    # review, s24: else the first marked pair of each placement paid for its chain's
    # instantiation and upload inside its timed sample
    log: list[tuple[Any, ...]] = []
    w: Any = WorkerRun.__new__(WorkerRun)
    w._enqueue = lambda role, placed, ids, salt, events, marked=False: log.append((role, id(placed), ids, events, marked))
    w._candidate_sample = lambda st, placed, ids, salt, events, marked=False: log.append(("cand", id(placed), ids, events, marked))
    w.gpu = SimpleNamespace(sync=lambda: log.append(("sync",)))
    slots, mirrors = [object()] * 3, [object()] * 3
    WorkerRun._warm_marked(w, SimpleNamespace(slots=slots, mirrors=mirrors), 7)
    ids = [0, 1, 2]
    assert log == [("base", id(slots), ids, None, True), ("sync",), ("cand", id(slots), ids, None, True),
                   ("base", id(mirrors), ids, None, True), ("sync",), ("cand", id(mirrors), ids, None, True)]
