"""The goal and limits in force come from the one reading of the log (issue 44): `LogState`
keeps the goals in force (the start's, then each resume's) and the limits (the start's,
updated by each resume's), and the harness's pins (`pins_of`) and the report's verdict
(`_Judge.goals`) read them there. Their own folds, as they were before, are kept here as the
oracles: for the bundled sessions' logs and for made-up sequences, after every start and
resume and at the end, the reading's values are the oracles'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from socratic.contracts import CampaignResume, CampaignStart, Event, Goal
from socratic.harness.core.pins import Pins, pins_of
from socratic.logread import LogState, read_log
from socratic.resources import demo_session_dir
from socratic.sessionfiles import open_session
from tests.fa3data import TRIMMED, shipped
from tests.logseq import Seq, demo_start

# ------------------------------------------------------------------ the old folds (oracles)


def old_pins_of(events: list[Event]) -> Pins | None:
    """harness.core.pins.pins_of as it was (before it read socratic.logread)."""
    start = next((e for e in events if isinstance(e, CampaignStart)), None)
    if start is None:
        return None
    pins = Pins(goal=start.goal, goal_set=start.scenarios.set, limits=dict(start.limits or {}),
                evaluator=list(start.evaluator) if start.evaluator else None, agent=start.agent,
                task_hashes=dict(start.task_hashes) if start.task_hashes is not None else None,
                task_source=start.task_source,
                libraries=dict(start.libraries) if start.libraries else None)
    for e in events:
        if isinstance(e, CampaignResume):
            if e.goal is not None:
                pins.goal = e.goal
            if e.limits is not None:
                pins.limits.update(e.limits)
    return pins


def old_goals_in_force(events: list[Event]) -> list[tuple[int, Goal]]:
    """report.verdict.goals_in_force as it was (before it read socratic.logread)."""
    out: list[tuple[int, Goal]] = []
    for e in events:
        if isinstance(e, CampaignStart) and not out:
            out.append((e.seq, e.goal))
        elif isinstance(e, CampaignResume) and e.goal is not None:
            out.append((e.seq, e.goal))
    return out


def _pins_dict(p: Pins | None) -> dict | None:
    return None if p is None else asdict(p)


def check(events: list[Event]) -> None:
    """After every start and resume (and at the end), whether read whole or one event at a
    time, the reading gives the oracles' pins and goals; a checkpoint (`copy`) taken there
    is not moved by what the reading folds in later."""
    running = LogState()
    checkpoints: list[tuple[LogState, list[tuple[int, Goal]], dict | None]] = []
    for i, ev in enumerate(events):
        running.apply(ev)
        if not isinstance(ev, (CampaignStart, CampaignResume)) and i != len(events) - 1:
            continue
        prefix = events[:i + 1]
        want_pins, want_goals = _pins_dict(old_pins_of(prefix)), old_goals_in_force(prefix)
        for log in (running, read_log(prefix)):
            assert _pins_dict(pins_of(log)) == want_pins, f"pins after event {i + 1}"
            assert log.goals == want_goals, f"goals after event {i + 1}"
        checkpoints.append((running.copy(), want_goals, want_pins))
    for cp, goals, pins in checkpoints:
        assert cp.goals == goals and _pins_dict(pins_of(cp)) == pins


# ------------------------------------------------------------------ the bundled logs


def _logs() -> list[tuple[str, Path]]:
    return [("demo", demo_session_dir()), ("fa3-h200", shipped()), ("fa3-trimmed", TRIMMED)]


@pytest.mark.parametrize("name,path", _logs(), ids=[n for n, _ in _logs()])
def test_the_bundled_logs_give_the_old_folds_pins_and_goals(name, path):
    events = open_session(path).events().events
    assert any(isinstance(e, CampaignStart) for e in events)
    check(events)


# ------------------------------------------------------------------ made-up sequences


LIMITS: dict[str, float | None] = {"max_tool_calls": 100, "max_turns": 50, "max_minutes": 30.0}

SEQUENCES: dict[str, Callable[[Seq], Seq]] = {
    "start only": lambda s: s.start(limits=LIMITS).call(),
    "start without limits": lambda s: s.start(limits=None).call(),
    "resume with a new goal": lambda s: s.start(limits=LIMITS).call().resume(goal=1.5),
    "resume with new limits": lambda s: s.start(limits=LIMITS).call()
    .resume(limits={"max_turns": 80, "max_minutes": None}),
    "resume without goal": lambda s: s.start(limits=LIMITS).call().resume().call(),
    "resume limits not in the start": lambda s: s.start(limits={"max_turns": 5})
    .resume(limits={"max_tool_calls": 9}).resume(limits={"max_turns": 7}),
    "goals in turn": lambda s: s.start(goal=1.1, limits=LIMITS).resume(goal=1.3).call()
    .resume().resume(goal=1.0, against="fa2", limits={"max_minutes": 60.0}).call()
    .resume(goal=1.4).resume(limits={"max_tool_calls": 300}),
    "a second start": lambda s: s.start(goal=1.1, limits=LIMITS).resume(goal=1.3)
    .start(goal=2.0, limits={"max_turns": 1}).call(),
    "a resume before the start": lambda s: s.resume(goal=1.7, limits={"max_turns": 3})
    .start(goal=1.1, limits=LIMITS).call().resume(limits={"max_minutes": 5.0}),
    "resumes and no start": lambda s: s.resume(goal=1.7).resume(limits={"max_turns": 3})
    .call(),
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_made_up_sequences_give_the_old_folds_pins_and_goals(name):
    check(SEQUENCES[name](Seq()).events)


def test_the_goal_and_limits_in_force():
    log = read_log(SEQUENCES["goals in turn"](Seq()).events)
    assert log.goal == Goal(min_speedup=1.4, against="baseline")
    assert [g.min_speedup for _, g in log.goals] == [1.1, 1.3, 1.0, 1.4]
    assert log.limits == {**LIMITS, "max_minutes": 60.0, "max_tool_calls": 300}
    assert log.terms == (demo_start().goal.against or "baseline")   # the start's, as before
