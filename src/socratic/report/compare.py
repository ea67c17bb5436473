"""Across sessions: groups by task, questions mode and agent, with medians; and the
comparisons a fleet is run for, by questions mode and by agent (each across the other):
the best campaign on the goal's terms, how many met the goal, tool calls and time to the
goal, cost where the log priced the model's turns.

The task is part of every key because speedups of different tasks do not compare; on a
fleet of one task the groups are exactly "by questions mode and agent".
"""

from __future__ import annotations

import statistics
from typing import Any

from socratic.report.figures import SessionReport

# the figures given as medians per group, in table order
MEDIANS = ("evaluations", "questions", "tool_calls", "tool_calls_per_question", "turns",
           "duration_s", "best_geomean", "best_min", "time_to_goal_s", "tool_calls_to_goal",
           "churn", "cost_usd")


def figure(r: SessionReport, name: str) -> float | None:
    if name == "churn":
        return r.churn.share
    if name == "cost_usd" and not r.cost_known:
        return None   # an outside agent whose turns the log does not price: unknown, not $0
    v = getattr(r, name)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def groups(reports: list[SessionReport]) -> list[dict[str, Any]]:
    keyed: dict[tuple[str, str, str], list[SessionReport]] = {}
    for r in reports:
        keyed.setdefault((r.task or "?", r.questions_mode, r.agent), []).append(r)
    out = []
    for (task, mode, agent), members in sorted(keyed.items()):
        out.append({
            "task": task, "questions_mode": mode, "agent": agent,
            "sessions": [r.session for r in members], "n": len(members),
            "goal_met": sum(1 for r in members if r.goal_met),
            "medians": {name: median([figure(r, name) for r in members]) for name in MEDIANS},
        })
    return out


# the figures a comparison by questions mode or by agent gives as medians
TO_GOAL = ("tool_calls_to_goal", "time_to_goal_s", "cost_usd")
DIMENSIONS = ("questions_mode", "agent")


def best_of(members: list[SessionReport]) -> dict[str, Any] | None:
    """The best campaign on the goal's terms: ranked by best min, then best geomean (as
    the harness ranks evaluations); None when none has a correct evaluation. A campaign
    that is no result (hooks_silent, agent_exited) is never the best."""
    ranked = [r for r in members if r.best_min is not None and not r.end_detail]
    if not ranked:
        return None
    r = max(ranked, key=lambda r: (r.best_min or 0.0, r.best_geomean or 0.0))
    return {"session": r.session, "best_min": r.best_min, "best_geomean": r.best_geomean,
            "goal_met": r.goal_met}


def compare_by(reports: list[SessionReport], dimension: str) -> list[dict[str, Any]]:
    """One entry per task and value of `dimension` (questions_mode or agent)."""
    keyed: dict[tuple[str, str], list[SessionReport]] = {}
    for r in reports:
        keyed.setdefault((r.task or "?", getattr(r, dimension)), []).append(r)
    out = []
    for (task, value), members in sorted(keyed.items()):
        out.append({
            "task": task, dimension: value, "sessions": [r.session for r in members],
            "n": len(members), "goal_met": sum(1 for r in members if r.goal_met),
            # hooks_silent, agent_exited: campaigns that are no result
            "no_result": sum(1 for r in members if r.end_detail),
            "best": best_of(members),
            "cost_known": sum(1 for r in members if r.cost_known),
            "medians": {name: median([figure(r, name) for r in members]) for name in TO_GOAL},
        })
    return out


def comparisons(reports: list[SessionReport]) -> dict[str, list[dict[str, Any]]]:
    return {d: compare_by(reports, d) for d in DIMENSIONS}
