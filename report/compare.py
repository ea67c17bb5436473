"""Across sessions: groups by task, questions mode and agent, with medians.

The task is part of the key because speedups of different tasks do not compare; on a fleet
of one task the groups are exactly "by questions mode and agent".
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
