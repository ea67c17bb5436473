"""Whether the record holds up: the report re-derives "met" instead of taking the log's word.

- The chain (socratic.chain): a broken one is named by its first bad line; its lines are
  left out of every figure already (report.source reads the trusted events only).
- Each evaluation's saved result must still have the bytes its `eval.end` recorded
  (`result_sha256`): one rewritten later is no evaluation.
- A `goal_met` end, and a `stophook` with `met`, must cite an evaluation that meets the goal
  pinned at the start (or by the engineer at a resume) on the goal's terms: every scenario
  correct and its min at least the goal; the stop's own goal must be that goal.
- The same source (sha256) measured again must agree within noise; a jump beyond it is
  flagged (what a poisoned cache or a doctored evaluator looks like).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from socratic.chain import BROKEN, ChainCheck
from socratic.contracts import EvalEnd, Event, Goal, Problem

# the same source measured twice: the baseline against itself lands within 0.997-1.001x;
# a relative change of geomean or min above this is no noise
SAME_SOURCE_NOISE = 0.10


@dataclass
class Verdict:
    """What the checks found: the evaluations that do not stand, and every contradiction in
    one line."""

    rewritten: set[int] = field(default_factory=set)   # evaluations whose result file changed
    contradictions: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        if line not in self.contradictions:
            self.contradictions.append(line)


def record_dict(check: ChainCheck) -> dict[str, Any]:
    return {"status": check.status, "lines": check.lines, "first_bad": check.first_bad,
            "why": check.why, "bad_lines": len(check.bad), "text": check.describe()}


def check_results(read_bytes: Any, events: list[Event], verdict: Verdict) -> None:
    """Each evaluation whose saved result no longer has the bytes eval.end recorded."""
    for e in events:
        if not isinstance(e, EvalEnd) or not e.result_sha256:
            continue
        try:
            got = hashlib.sha256(read_bytes(e.result)).hexdigest()
        except OSError:
            got = None
        if got != e.result_sha256:
            verdict.rewritten.add(e.n)
            verdict.say(f"evaluation #{e.n}: {e.result} "
                        + ("is missing" if got is None else "differs from the result eval.end "
                           "recorded (rewritten after it was logged)")
                        + ": it counts as no evaluation")


def goal_at(goals: list[tuple[int, Goal]], seq: int) -> Goal | None:
    """The goal in force at `seq`, of the goals in force in order (LogState.goals: the
    start's, then any a resume set)."""
    g = None
    for s, goal in goals:
        if s <= seq:
            g = goal
    return g


def same_goal(a: Goal | None, b: Goal | None) -> bool:
    return a is not None and b is not None and (a.min_speedup, a.against) == (b.min_speedup,
                                                                              b.against)


@dataclass
class Point:
    """What the checks need of an evaluation (report.figures.EvalPoint's fields)."""

    n: int
    sha: str
    goal_set: bool
    correct: bool
    min: float | None
    geomean: float | None
    baseline_geomean: float | None
    source: str | None


def meets(p: Point | None, goal: Goal) -> str | None:
    """Why evaluation `p` does not meet `goal`, or None when it does."""
    if p is None:
        return "no such evaluation in the record"
    if not p.goal_set:
        return "it is not on the goal's scenario set"
    if not p.correct:
        return "it is not correct"
    if p.min is None:
        return f"it has no min speedup against {goal.against}"
    if p.min < goal.min_speedup:
        return f"its min {p.min:.3f}x is below the goal's {goal.min_speedup:g}x"
    return None


def same_source_jumps(points: list[Point], verdict: Verdict) -> None:
    last: dict[str, Point] = {}
    for p in points:
        if not (p.goal_set and p.correct and p.sha):
            continue
        before, last[p.sha] = last.get(p.sha), p
        if before is None:
            continue
        for label, a, b in (("geomean", before.geomean, p.geomean), ("min", before.min, p.min)):
            if a and b and abs(b / a - 1.0) > SAME_SOURCE_NOISE:
                verdict.say(f"evaluations #{before.n} and #{p.n} measured the same source "
                            f"(sha256 {p.sha[:12]}): {label} {a:.3f}x vs {b:.3f}x, beyond "
                            f"noise ({SAME_SOURCE_NOISE:.0%})")
                break


def broken_record(check: ChainCheck, verdict: Verdict) -> None:
    if check.status == BROKEN:
        verdict.say(f"the record is {check.describe()} (those lines are left out of every "
                    f"figure)")


# what the harness logs when it finds the record or its settings tampered with
TAMPER_WHERE = ("config.json", "attach.json", "events.jsonl", "hook evaluate --import", "hooks",
                "build")


def logged_tampering(events: list[Event], verdict: Verdict) -> None:
    """The harness's own `problem` lines about the record (a config.json that disagrees with
    the pins, a rewritten result, a refused import, a broken chain), each said once."""
    for e in events:
        if isinstance(e, Problem) and (e.where in TAMPER_WHERE or e.where.startswith("evals/")):
            verdict.say(f"the harness logged ({e.where}): {e.error}")
