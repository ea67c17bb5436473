"""The campaign plan: what a campaign is out to do, resolved once when an adapter starts
(or loads) the campaign and handed to the engine, so that no piece decides the goal, the
goal set or the limits again from the settings."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import CampaignStart, Goal, GoalScenarios, HostGpu
from socratic.errors import InputError
from socratic.harness.core.config import Config
from socratic.harness.core.pins import start_fields as pinned_start_fields
from socratic.harness.core.task import CampaignTask


@dataclass(frozen=True)
class Limits:
    """When the campaign ends on its own (None: no such limit)."""

    max_tool_calls: int | None = None
    max_turns: int | None = None
    max_minutes: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        """campaign.start's `limits`, in this order."""
        return {"max_tool_calls": self.max_tool_calls, "max_turns": self.max_turns,
                "max_minutes": self.max_minutes}


@dataclass(frozen=True)
class CampaignPlan:
    """The task, the goal and its set (with the set's scenario ids), the limits, and the
    task files' hashes to hold the frozen task to; for the settings after the log's pins
    (harness/core/pins.py) are applied."""

    task: CampaignTask
    goal: Goal
    goal_set: str | None
    scenario_ids: list[str]
    limits: Limits
    task_hashes: dict[str, str] = field(default_factory=dict)
    task_source: Path | None = None
    libraries: dict[str, str] | None = None   # the built baseline/reference, pinned


def resolve_plan(task: CampaignTask, config: Config, *,
                 sets: dict[str, list[str]] | None = None,
                 scenario_ids: list[str] | None = None,
                 task_hashes: dict[str, str] | None = None,
                 task_source: Path | None = None,
                 libraries: dict[str, str] | None = None) -> CampaignPlan:
    """The plan for `task` under `config`. The goal set's ids: `scenario_ids` as decided
    before (an attached session's settings), else from the evaluator's set lists `sets`
    (`goal_scenarios`: InputError for a set neither knows)."""
    goal_set = config.scenarios or task.default_set
    ids = scenario_ids if scenario_ids is not None else goal_scenarios(sets, task, goal_set)
    goal = task.goal(config.goal_min_speedup, config.goal_against, config.goal_hidden)
    return CampaignPlan(task=task, goal=goal, goal_set=goal_set, scenario_ids=list(ids),
                        limits=Limits(config.max_tool_calls, config.max_turns,
                                      config.max_minutes),
                        task_hashes=dict(task_hashes or {}), task_source=task_source,
                        libraries=libraries)


def start_event(plan: CampaignPlan, config: Config, *, model: str, session: str,
                versions: dict[str, str], gpu: dict[str, Any] | None,
                session_id: str | None, agent: str | None = None,
                recovered: bool = False) -> CampaignStart:
    """campaign.start for the plan, as every adapter logs it (what it pins included)."""
    return CampaignStart(
        task=plan.task.name, goal=plan.goal, model=model,
        scenarios=GoalScenarios(set=plan.goal_set, ids=list(plan.scenario_ids)),
        gpu=HostGpu.from_dict(gpu, "campaign.start event: gpu") if gpu is not None else None,
        host=socket.gethostname(), versions=versions, session=session,
        task_source=str(plan.task_source) if plan.task_source else None,
        task_hashes=plan.task_hashes, auto_questions=config.auto_questions,
        limits=plan.limits.to_dict(), agent=agent, recovered=True if recovered else None,
        **pinned_start_fields(config, plan.task_hashes, plan.task.baseline, session_id))


def check_goal_set(task: CampaignTask, name: str, label: str = "--scenarios") -> None:
    """A new campaign's goal set, checked against task.toml's sets before anything starts
    (an empty one would silently mean the default set); the campaign checks it again
    against the evaluator's list."""
    if not name.strip():
        raise InputError(f"{label}: empty (give a set name or scenario ids)")
    goal_scenarios({n: [sc.id for sc in scs] for n, scs in task.spec.sets.items()}, task, name,
                   label)


def goal_scenarios(sets: dict[str, list[str]] | None, task: CampaignTask,
                   name: str | None, label: str = "--scenarios") -> list[str]:
    """The ids of the goal set `name`: a set of the evaluator's `--list`, or scenario ids
    joined by commas (as `socratic eval --scenarios` takes them). InputError when the list
    knows neither; when the evaluator could not list, task.toml's explicit ids."""
    if sets is None or not name:
        return (sets or {}).get(name or "") or task.scenario_ids(name)
    if name in sets:
        return sets[name]
    known = {i for ids in sets.values() for i in ids}
    ids = [i.strip() for i in name.split(",") if i.strip()]
    if ids and all(i in known for i in ids):
        return ids
    raise InputError(f"{label} {name}: not a scenario set or id of task {task.name} "
                     f"(sets: {', '.join(sets)})")
