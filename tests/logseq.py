"""Made-up campaign logs for the tests of the one reading (test_logread_marks,
test_logread_goals): events stamped as a log would stamp them."""
from __future__ import annotations

from dataclasses import replace

from socratic.contracts import (
    AgentText,
    CampaignEnd,
    CampaignResume,
    CampaignStart,
    EvalEnd,
    EvalSummary,
    Event,
    Goal,
    StopHook,
    ToolCall,
    Trigger,
)
from socratic.contracts.vocab import EndReason
from socratic.resources import demo_session_dir
from socratic.sessionfiles import open_session


def demo_start() -> CampaignStart:
    """The bundled demo's campaign.start, a real one to vary."""
    demo = open_session(demo_session_dir()).events().events
    return next(e for e in demo if isinstance(e, CampaignStart))


class Seq:
    """A log under construction: each method appends one event and returns the log."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, ev: Event) -> Seq:
        ev.seq, ev.t, ev.ts = len(self.events) + 1, float(len(self.events)), "x"
        self.events.append(ev)
        return self

    def demo_start(self) -> Seq:
        return self.add(demo_start())

    def start(self, goal: float = 1.2, limits: dict[str, float | None] | None = None) -> Seq:
        s = demo_start()
        return self.add(replace(s, goal=Goal(min_speedup=goal, against=s.goal.against), limits=limits))

    def call(self) -> Seq:
        return self.add(ToolCall(id=f"c{len(self.events)}", name="bash", input={}))

    def stop(self, met: bool = False) -> Seq:
        return self.add(StopHook(met=met, failing=[]))

    def say(self, text: str) -> Seq:
        return self.add(AgentText(text=text))

    def trig(self, kind: str) -> Seq:
        return self.add(Trigger(kind=kind, reason="r", suggestions=[]))

    def evaluated(self, n: int, correct: bool = True) -> Seq:
        return self.add(EvalEnd(n=n, result=f"evals/{n:04d}.json", summary=EvalSummary(all_correct=correct)))

    def end(self, reason: EndReason = "stalled") -> Seq:
        return self.add(CampaignEnd(reason=reason))

    def resume(self, goal: float | None = None, against: str = "baseline",
               limits: dict[str, float | None] | None = None) -> Seq:
        return self.add(CampaignResume(
            evaluations=0, tool_calls=0, turns=0, ctx=0, messages=0, limits=limits,
            goal=Goal(min_speedup=goal, against=against) if goal is not None else None))
