"""The campaign's rules, written once: limits, the end, the safe point (the inbox's
controls, a requested evaluation, a pause), questions and notes delivered, tool calls
counted and logged, the stop verdict (the goal judged, stalls, the agent's refusal cap) and
the triggers they feed.

Three adapters drive an `Engine`, each in its own way of running an agent:
- campaign.py, socratic's own API loop (one process for the whole campaign);
- attached_campaign.py + hooks.py (and the session server), an outside agent's hooks, where each
  hook call acts on the campaign and saves what it changed;
- manual.py, the steps a person runs by hand.
Each hands it, when it is made, the campaign plan (plan.py: task, goal, goal set, limits,
resolved once), a sink for events and itself as the host (host.py: clock, sync, sleep,
whether the caller waits, who holds the campaign).

Its state is the inbox's (state.json), the evaluations' (the log and evals/), the counters
(the log) and `Marks`: what the rules remember between two events (stop attempts in a row,
the triggers' marks, whether the campaign has ended). The one reading of the log
(socratic.logread's `LogState`) keeps them as it folds the events (`RuleMarks`), and
`Marks.rebuilt` / `Marks.of` take them from it, so a campaign resumed, or a hook whose saved
state is lost, goes on as it was.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from socratic.contracts import (
    AgentText,
    BestEvaluation,
    CampaignEnd,
    CampaignResume,
    Control,
    EndReason,
    Event,
    Goal,
    Question,
    ToolCall,
    ToolResult,
)
from socratic.harness.core.config import Config
from socratic.harness.core.history import Evaluation
from socratic.harness.core.inbox import Inbox, Taken
from socratic.harness.core.record import Emit
from socratic.harness.core.redaction import Redactor
from socratic.harness.core.resume import Counters, ResumeState
from socratic.harness.core.session import Session
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.evaluations import Evaluations
from socratic.harness.engine.host import Host
from socratic.harness.engine.plan import CampaignPlan
from socratic.harness.engine.prompt import question_message
from socratic.harness.engine.stophook import StopAttempts, Verdict, judge_stop
from socratic.harness.engine.triggers import Suggester, Triggers
from socratic.logread import RuleMarks, read_log

WAIT_REASON = "repeated stop attempts; waiting for a question"


@dataclass
class Marks:
    """What the rules remember between events, rebuilt from the log when lost."""

    in_a_row: int = 0          # stop attempts in a row with no tool call between
    calls_since: int = 0       # tool calls since the last stop attempt
    blocks: int = 0            # refused stops in a row with no tool call between them
    recent_text: str = ""      # the agent's latest words, for the bank's suggestions
    start_fired: bool = False
    declared_last_at: int | None = None
    explained_n: int = 0       # the last failing evaluation correctness_failure fired for
    stop_requested: bool = False   # read from the inbox, not yet acted on
    eval_requested: bool = False
    ended: EndReason | None = None   # the campaign.end reason, while ended

    @classmethod
    def of(cls, marks: RuleMarks) -> Marks:
        """The marks the one reading of the log keeps (`LogState.marks`), as the engine's."""
        return cls(**asdict(marks))

    @classmethod
    def rebuilt(cls, events: list[Event]) -> Marks:
        """The marks as the log leaves them (the inbox's requests are not in it: a request
        read but not acted on when the state was lost is lost with it): the one reading's
        (socratic.logread), which keeps them as it folds the events."""
        return cls.of(read_log(events).marks)


MARK_FIELDS = tuple(f.name for f in fields(Marks))


@dataclass
class StopOutcome:
    """What a stop attempt came to: the campaign ended (`ended`), or the stop is refused
    with `refusal` for the agent (the questions due are the adapter's to add)."""

    ended: EndReason | None
    refusal: str = ""
    verdict: Verdict | None = None


class Engine:
    """One campaign's rules over its pieces (inbox, triggers, evaluations, counters)."""

    def __init__(self, session: Session, plan: CampaignPlan, config: Config, *, sink: Emit,
                 host: Host, env: dict[str, str], redact: Redactor,
                 suggester: Suggester | None, resumed: ResumeState, marks: Marks,
                 record_note: str | None = None) -> None:
        self.session = session
        self.plan = plan
        self.config = config
        self.emit = sink
        self.host = host
        # the log's chain is broken (the adapter checked it when it loaded the campaign):
        # where, in one line, for the stop verdicts (the broken lines are not in the state)
        self.record_note = record_note
        auto = resumed.saved.auto_questions
        self.inbox = Inbox(session.inbox, session.state_file,
                           auto_questions=config.auto_questions if auto is None else auto,
                           saved=resumed.saved, asked_ids=resumed.asked_ids,
                           asked_texts=resumed.asked_texts)
        self.triggers = Triggers(config.triggers, goal_set=plan.goal_set, inbox=self.inbox,
                                 emit=sink, suggester=suggester, against=plan.goal.against)
        self.evals = Evaluations(session, plan, evaluator=config.evaluator,
                                 timeout_s=config.eval_timeout_s, env=env, redact=redact,
                                 emit=sink, triggers=self.triggers, holder=host)
        # replays the detectors: nothing fires
        self.evals.restore(resumed.eval_ends, resumed.eval_seq, resumed.retractions)
        self.counters: Counters = resumed.counters
        self.stops = StopAttempts()
        self.blocks = 0
        self.ended: EndReason | None = None
        self.end_event: dict[str, Any] | None = None   # the campaign.end logged by this process
        self._taken: list[Taken] = []
        self.restore_marks(marks)

    # the plan's parts, by their names
    @property
    def task(self) -> CampaignTask:
        return self.plan.task

    @property
    def goal(self) -> Goal:
        return self.plan.goal

    @property
    def goal_set(self) -> str | None:
        return self.plan.goal_set

    # ------------------------------------------------------------------ state
    def marks(self) -> Marks:
        start_fired, declared_last_at, explained = self.triggers.marks()
        return Marks(in_a_row=self.stops.in_a_row, calls_since=self.stops.calls_since,
                     blocks=self.blocks, recent_text=self.triggers.recent_text,
                     start_fired=start_fired, declared_last_at=declared_last_at,
                     explained_n=explained, stop_requested=self.inbox.stop_requested,
                     eval_requested=self.inbox.eval_requested, ended=self.ended)

    def restore_marks(self, m: Marks) -> None:
        self.stops = StopAttempts(m.in_a_row, m.calls_since)
        self.blocks = m.blocks
        self.triggers.recent_text = m.recent_text
        self.triggers.restore_marks(m.start_fired, m.declared_last_at, m.explained_n)
        self.inbox.stop_requested = m.stop_requested
        self.inbox.eval_requested = m.eval_requested
        self.ended = m.ended

    # ------------------------------------------------------------------ the campaign's life
    def limit_reached(self) -> EndReason | None:
        c, n = self.plan.limits, self.counters
        if c.max_tool_calls is not None and n.tool_calls >= c.max_tool_calls:
            return "max_tool_calls"
        if c.max_turns is not None and n.turns >= c.max_turns:
            return "max_turns"
        if c.max_minutes is not None and self.host.minutes() >= c.max_minutes:
            return "max_minutes"
        return None

    def due_end(self) -> EndReason | None:
        """Why the campaign must end now: stopped from the inbox, or a limit."""
        return "stopped" if self.inbox.stop_requested else self.limit_reached()

    def end(self, reason: EndReason, **extra: Any) -> dict[str, Any] | None:
        """campaign.end, once (the event, or None when it had ended already)."""
        if self.ended is not None:
            return None
        best = self.evals.history.best(self.goal, self.goal_set)
        event = self.emit(CampaignEnd(
            reason=reason, evaluations=len(self.evals.history),
            tool_calls=self.counters.tool_calls, turns=self.counters.turns,
            cost_usd=round(self.counters.cost_usd, 4),
            best=BestEvaluation.from_dict(best.to_record()) if best else None, **extra))
        self.host.sync()
        self.ended = reason
        self.end_event = event
        self.inbox.save()
        return event

    def resumed(self, **fields_: Any) -> None:
        """campaign.resume: an ended or interrupted campaign goes on."""
        self.emit(CampaignResume(evaluations=len(self.evals.history),
                                 tool_calls=self.counters.tool_calls, turns=self.counters.turns,
                                 **fields_))
        self.ended = None
        self.inbox.stop_requested = False
        self.stops.reset()
        self.blocks = 0

    def fire_start(self) -> None:
        self.triggers.start(self.task.name, self.goal.describe())

    # ------------------------------------------------------------------ the agent's work
    def tool_call(self, tool_id: str, name: str, tool_input: Any) -> None:
        """A tool call, logged: it counts, and breaks a run of stop attempts (the agents
        count their refusals afresh after one, too)."""
        self.counters.tool_calls += 1
        self.stops.tool_call()
        self.blocks = 0
        self.emit(ToolCall(id=tool_id, name=name, input=tool_input))

    def tool_result(self, tool_id: str, name: str, ok: bool, output: str,
                    seconds: float | None = None) -> None:
        """The tool's output for the log: inline, or its head and the full text in a blob."""
        result = ToolResult(id=tool_id, name=name, ok=ok, output=output,
                            seconds=round(seconds, 3) if seconds is not None else None)
        cap = self.config.log_output_cap
        if len(output) > cap:
            result.blob = "blobs/" + re.sub(r"[^A-Za-z0-9_-]", "_", tool_id)[:80] + ".txt"
            (self.session.dir / result.blob).write_text(output, encoding="utf-8")
            result.output = output[:cap] + "\n[... full text in blob]"
        self.emit(result)

    def model_turn(self, cost_usd: float = 0.0) -> None:
        self.counters.turns += 1
        self.counters.cost_usd += cost_usd

    def saw_text(self, text: str) -> None:
        """The agent's words (logged by the adapter): the triggers read them."""
        self.triggers.on_text(text, len(self.evals.history))

    def agent_text(self, text: str) -> None:
        if text.strip():
            self.emit(AgentText(text=text))
            self.saw_text(text)

    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        return self.evals.run(set_name or self.goal_set, source=source)

    # ------------------------------------------------------------------ the safe point
    def poll_inbox(self) -> None:
        self.inbox.poll(on_control=lambda action: self.emit(Control(action=action)))

    def run_requested_evaluation(self) -> None:
        ib = self.inbox
        if ib.eval_requested and not ib.stop_requested:
            ib.eval_requested = False
            ev = self.evals.run(self.goal_set, source="control")
            ib.note("The engineer ran an evaluation of the current candidate:\n"
                    + self.evals.table(ev))

    def safe_point(self, deadline: float | None = None) -> None:
        """Between a tool result and the next step: the inbox read, a requested evaluation
        run, and a pause waited out (until `deadline`, monotonic, where the adapter has one)."""
        self.poll_inbox()
        ib = self.inbox
        self.run_requested_evaluation()
        self.wait(lambda: not ib.paused or ib.stop_requested, deadline)

    def wait(self, until: Callable[[], bool], deadline: float | None) -> bool:
        """Read the inbox (running a requested evaluation) until `until()` holds, the
        deadline passes, max_minutes is reached or the caller is gone; returns until()."""
        while not until() and (deadline is None or time.monotonic() < deadline) \
                and self.host.caller_alive() and self.limit_reached() != "max_minutes":
            self.host.sleep(max(self.config.poll_s, 0.01))
            self.poll_inbox()
            self.run_requested_evaluation()
        return until()

    # ------------------------------------------------------------------ questions and notes
    def take(self) -> list[str]:
        """Harness notes and questions due, as texts for the agent. They count as
        delivered (the questions logged) only once the answer reached it: `settle`."""
        taken = self.inbox.take()
        if taken.notes or taken.questions:
            self._taken.append(taken)
        return list(taken.notes) + [question_message(q.text, q.source, q.trigger)
                                    for q in taken.questions]

    def taken(self) -> list[Taken]:
        """What `take` handed to the answer being made (the caller settles it)."""
        out, self._taken = self._taken, []
        return out

    def settle(self, taken: list[Taken], written: bool) -> None:
        """The answer holding `taken` reached the agent (its questions are logged as
        asked) or did not (they are due again)."""
        for t in taken:
            if written:
                for q in t.questions:
                    self.emit(q)   # the record queued (bank or inbox) is the one logged
            self.inbox.settle(t, delivered=written)

    def deliver_now(self) -> list[str]:
        """`take`, counted as delivered at once (the message goes out as it is made)."""
        texts = self.take()
        self.settle(self.taken(), written=True)
        return texts

    def human_question(self, text: str) -> None:
        """Words the engineer typed into the agent directly: a human question."""
        self.emit(Question(text=text, source="human"))
        self.inbox.asked_texts.append(text)

    # ------------------------------------------------------------------ the stop verdict
    def judge(self, declared: bool = True) -> Verdict:
        """The goal judged on the current candidate (evaluated now unless it was); met ends
        the campaign goal_met; unmet, a stop attempt is a declared_done moment for the
        triggers (`declared`; not when the campaign ends anyway: a give-up)."""
        verdict = judge_stop(self.evals, self.record_note)
        if verdict.met:
            self.end("goal_met", n=verdict.ev.n)
        elif declared:
            self.triggers.on_stop(False, len(verdict.failing), len(self.evals.history))
        return verdict

    def stop_attempt(self, deadline: float | None = None,
                     block_cap: int | None = None) -> StopOutcome:
        """The agent tries to stop. Refused unless the goal is met; `max_empty_stops`
        attempts in a row with no work between are a stall, which waits for the engineer's
        question (attached, `wait_for_human`) or ends the campaign; an agent that overrides
        its hook after `block_cap` refusals in a row ends `stalled` on the last one, said so
        in the log instead of silently."""
        self.safe_point(deadline)
        if self.inbox.stop_requested:
            self.end("stopped")
            return StopOutcome("stopped")
        if limit := self.limit_reached():   # past a limit no stop is judged, whatever it cites
            self.end(limit)
            return StopOutcome(limit)
        in_a_row = self.stops.attempt()
        verdict = self.judge()
        if verdict.met:
            return StopOutcome("goal_met", verdict=verdict)
        refusal = verdict.message
        if not verdict.reused:  # the agent has not seen this evaluation's table yet
            refusal += "\n\n" + self.evals.table(verdict.ev)
        if in_a_row >= self.config.max_empty_stops:
            ended = self._stalled(in_a_row, deadline)
            if ended:
                return StopOutcome(ended, verdict=verdict)
        if block_cap is not None and self.blocks + 1 >= block_cap:
            self.end("stalled", stop_attempts=in_a_row, refusals=self.blocks + 1)
            return StopOutcome("stalled", verdict=verdict)
        self.blocks += 1
        return StopOutcome(None, refusal, verdict)

    def _stalled(self, in_a_row: int, deadline: float | None) -> EndReason | None:
        """A stall: the end, or None when the engineer's question broke it."""
        ib = self.inbox
        if not self.config.wait_for_human:
            self.end("stalled", stop_attempts=in_a_row)
            return "stalled"
        self.emit(Control(action="wait", reason=WAIT_REASON))
        got = self.wait(lambda: ib.stop_requested or ib.has_human_question(), deadline)
        extra: dict[str, Any]
        reason: EndReason
        if ib.stop_requested:
            reason, extra = "stopped", {}
        elif self.limit_reached() == "max_minutes":  # the wait counts: no question came
            reason, extra = "max_minutes", {}
        elif not got:
            reason, extra = "stalled", {"stop_attempts": in_a_row}
        else:
            for q in ib.questions:  # they answer the stop attempts
                if q.source == "human" and not q.trigger:
                    q.trigger = "declared_done"
            self.stops.reset()
            return None
        self.end(reason, **extra)
        return reason
