"""What the verdict depends on, pinned in `campaign.start`: the goal, its scenario set, the
limits, the evaluator's command, the agent, the task's file hashes and the baseline's.

config.json is the agent's to reach (it sits beside the workspace): every adapter that
loads a campaign (a hook, the session server, `run --resume`, a step by hand) takes these
values from the log's verified start, not from that file, and says in the log what the file
said otherwise (a `problem` event `where: config.json`, once per difference). Only the
engineer changes them, with `run --resume --goal-...`, recorded in `campaign.resume`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from socratic.chain import ChainCheck
from socratic.contracts import Event, Goal, Problem
from socratic.harness.core.config import Config
from socratic.logread import LogState

LIMITS = ("max_tool_calls", "max_turns", "max_minutes")
CONFIG_FILE = "config.json"


@dataclass
class Pins:
    goal: Goal
    goal_set: str | None
    limits: dict[str, float | None] = field(default_factory=dict)
    evaluator: list[str] | None = None
    agent: str | None = None
    task_hashes: dict[str, str] | None = None
    task_source: str | None = None
    libraries: dict[str, str] | None = None   # the built baseline/reference (sha256)


def pins_of(log: LogState) -> Pins | None:
    """The pins of a log, from its one reading (socratic.logread): its campaign.start's,
    with the goal and limits in force (what the engineer changed at a resume); None without
    a campaign.start."""
    start, goal = log.start, log.goal
    if start is None or goal is None:
        return None
    return Pins(goal=goal, goal_set=start.scenarios.set, limits=log.limits,
                evaluator=list(start.evaluator) if start.evaluator else None, agent=start.agent,
                task_hashes=dict(start.task_hashes) if start.task_hashes is not None else None,
                task_source=start.task_source,
                libraries=dict(start.libraries) if start.libraries else None)


def start_fields(config: Config, task_hashes: dict[str, str], baseline: str,
                 session_id: str | None) -> dict[str, Any]:
    """The pins campaign.start adds to its fields (goal, set, limits and task hashes are
    its own fields already)."""
    out: dict[str, Any] = {"evaluator": list(config.evaluator),
                           "baseline_sha256": task_hashes.get(baseline)}
    if session_id:
        out["session_id"] = session_id
    return {k: v for k, v in out.items() if v is not None}


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def enforce(config: Config, pins: Pins, default_set: str) -> list[str]:
    """Put the pinned values into `config` (as read from config.json); what the file said
    otherwise, one phrase per value."""
    diffs: list[str] = []
    if config.goal_min_speedup is not None and config.goal_min_speedup != pins.goal.min_speedup:
        diffs.append(f"goal min_speedup {config.goal_min_speedup:g} (pinned "
                     f"{pins.goal.min_speedup:g})")
    if config.goal_against is not None and config.goal_against != pins.goal.against:
        diffs.append(f"goal against {config.goal_against!r} (pinned {pins.goal.against!r})")
    config.goal_min_speedup, config.goal_against = pins.goal.min_speedup, pins.goal.against
    if pins.goal_set is not None and (config.scenarios or default_set) != pins.goal_set:
        diffs.append(f"scenarios {config.scenarios!r} (pinned {pins.goal_set!r})")
        config.scenarios = pins.goal_set
    for name in LIMITS:
        if name not in pins.limits:
            continue
        pinned, now = _num(pins.limits[name]), _num(getattr(config, name))
        if pinned != now:
            diffs.append(f"{name} {now} (pinned {pinned})")
        setattr(config, name, pins.limits[name] if name == "max_minutes" or pinned is None
                else int(pinned))
    if pins.evaluator is not None and list(config.evaluator) != pins.evaluator:
        diffs.append(f"evaluator {' '.join(config.evaluator)!r} (pinned "
                     f"{' '.join(pins.evaluator)!r})")
        config.evaluator = list(pins.evaluator)
    return diffs


def hashes(saved: dict[str, str], pins: Pins | None) -> tuple[dict[str, str], list[str]]:
    """The task's file hashes to hold the frozen task to: the pinned ones."""
    if pins is None or pins.task_hashes is None:
        return dict(saved), []
    if saved != pins.task_hashes:
        odd = sorted(k for k in set(saved) | set(pins.task_hashes)
                     if saved.get(k) != pins.task_hashes.get(k))
        return dict(pins.task_hashes), [f"task_hashes of {', '.join(odd[:4])} (pinned "
                                        f"otherwise)"]
    return dict(pins.task_hashes), []


def problem_line(diffs: list[str]) -> str:
    return ("config.json differs from what campaign.start pinned: " + "; ".join(diffs)
            + ": not obeyed; the campaign keeps its pinned values")


def record_problem(check: ChainCheck) -> str:
    """The `problem` line for a log whose chain is broken (`where: events.jsonl`)."""
    return (f"the record is {check.describe()}; the {len(check.bad)} line(s) that do not "
            f"verify are ignored")


def already_said(events: list[Event], where: str, error: str) -> bool:
    return any(isinstance(e, Problem) and e.where == where and e.error == error for e in events)


def resume_changes(config: Config, pins: Pins) -> dict[str, Any]:
    """What the engineer's `run --resume` options change of the pins (campaign.resume's
    `goal` and `limits`)."""
    out: dict[str, Any] = {}
    if (config.goal_min_speedup, config.goal_against) != (pins.goal.min_speedup,
                                                          pins.goal.against):
        out["goal"] = {"min_speedup": float(config.goal_min_speedup
                                            if config.goal_min_speedup is not None
                                            else pins.goal.min_speedup),
                       "against": config.goal_against or pins.goal.against}
    limits = {n: getattr(config, n) for n in LIMITS if n in pins.limits
              and _num(getattr(config, n)) != _num(pins.limits[n])}
    if limits:
        out["limits"] = limits
    return out


def library_problem(pinned: dict[str, str] | None, built: dict[str, str] | None) -> str | None:
    """The `problem` line (`where: build`) for an evaluation whose built baseline or
    reference is not the one campaign.start pinned (a build cache holding others), or None."""
    if not pinned or built is None:
        return None
    odd = [f"{k} {built.get(k, 'none')[:12]} (pinned {v[:12]})" for k, v in sorted(pinned.items())
           if built.get(k) != v]
    if not odd:
        return None
    return ("the task's built libraries differ from those campaign.start pinned: "
            + ", ".join(odd) + ": the evaluation counts as none")
