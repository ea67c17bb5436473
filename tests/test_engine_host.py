"""The engine's seams (issue 44): it is handed the campaign plan, a sink and its host when it
is made, and uses nothing else for its clock, its waits, the end's sync or letting go of the
campaign while an evaluation runs; nothing is assigned to it afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import FrozenInstanceError

import pytest

from socratic.contracts import ControlCommand
from socratic.eventlog import EventLog, inject, read_jsonl
from socratic.harness.core.record import Recorder
from socratic.harness.core.redaction import Redactor, scrubbed_env
from socratic.harness.core.resume import ResumeState
from socratic.harness.core.session import Session
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.engine import Engine, Marks
from socratic.harness.engine.host import Host
from socratic.harness.engine.plan import CampaignPlan, resolve_plan
from socratic_doubles.testing import candidate_source, fake_config, make_task


class FakeHost:
    """A host that records what the engine asked of it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: list[str] = []
        self.alive = True

    def minutes(self) -> float:
        return self.now

    def sync(self) -> None:
        self.calls.append("sync")

    def sleep(self, seconds: float) -> None:
        self.calls.append("sleep")
        self.alive = False          # the caller hangs up while the engine waits

    def caller_alive(self) -> bool:
        return self.alive

    @contextmanager
    def _mark(self, what: str) -> Iterator[None]:
        self.calls.append(what)
        yield

    def outside(self) -> AbstractContextManager[object]:
        return self._mark("outside")

    def inside(self) -> AbstractContextManager[object]:
        return self._mark("inside")


def engine(tmp_path, **cfg) -> tuple[Engine, FakeHost, Session]:
    config = fake_config(**cfg)
    session, hashes = Session.create(CampaignTask.load(make_task(tmp_path, goal=1.2)), config,
                                     tmp_path / "s")
    task = CampaignTask.load(session.task_dir)
    plan = resolve_plan(task, config, scenario_ids=["a", "b", "c"], task_hashes=hashes)
    host = FakeHost()
    h: Host = host      # the fake is a Host as mypy sees it
    eng = Engine(session, plan, config, sink=Recorder(EventLog.open(session.dir), Redactor([])),
                 host=h, env=scrubbed_env(), redact=Redactor([]), suggester=None,
                 resumed=ResumeState(), marks=Marks())
    return eng, host, session


def test_the_plan_is_resolved_once_and_frozen(tmp_path):
    eng, _, _ = engine(tmp_path, max_turns=3, max_minutes=2.0, scenarios="bench")
    plan = eng.plan
    assert (plan.goal_set, plan.limits.max_turns, plan.limits.max_minutes) == ("bench", 3, 2.0)
    assert eng.goal is plan.goal and eng.evals.goal is plan.goal and eng.goal_set == "bench"
    with pytest.raises(FrozenInstanceError):
        plan.goal_set = "smoke"  # type: ignore[misc]
    assert isinstance(plan, CampaignPlan)


def test_the_clock_and_the_end_are_the_hosts(tmp_path):
    eng, host, session = engine(tmp_path, max_minutes=5.0)
    assert eng.limit_reached() is None
    host.now = 5.0
    assert eng.limit_reached() == "max_minutes"
    eng.end("max_minutes")
    assert host.calls == ["sync"]
    assert read_jsonl(session.events)[0][-1]["type"] == "campaign.end"


def test_a_pause_waits_in_the_hosts_sleep_while_its_caller_waits(tmp_path):
    eng, host, session = engine(tmp_path)
    inject(session.dir, ControlCommand(action="pause"))
    eng.safe_point()                 # paused: sleeps once, then the caller is gone
    assert eng.inbox.paused and host.calls == ["sleep"]


def test_an_evaluation_lets_go_of_the_campaign_through_the_host(tmp_path):
    eng, host, session = engine(tmp_path)
    session.candidate.write_text(candidate_source(1.3))
    ev = eng.evaluate(None)
    assert ev.all_correct
    # outside while the evaluator runs; inside for each row it logs
    assert host.calls[0] == "outside" and host.calls.count("inside") == 3
