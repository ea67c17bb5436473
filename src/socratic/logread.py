"""The one reading of a campaign's log (events.jsonl): typed events folded, one at a time,
into a `LogState` that the engine's resume, the TUI, the report, fleet status and watch all
read, so that they agree on the clock, the counts, the evaluations and the bests. The
campaign engine's rule marks (`RuleMarks`: stop attempts in a row, the triggers' marks,
whether the campaign has ended) are kept by the same fold, and so are the goal and limits in
force (`goals`, `goal`, `limits`: the start's, as the engineer's resumes changed them), which
the harness's pins and the report's verdict read.

Only the writers (socratic.eventlog, the harness) and this module look at event types; a
reader asks `LogState` (or, for what only it shows, `isinstance` on the typed event).
Retractions may come after what they retract, so bests are computed when asked, never
kept running.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from socratic.contracts import (
    AgentText,
    CampaignEnd,
    CampaignResume,
    CampaignStart,
    ContractError,
    Control,
    EndReason,
    EvalEnd,
    EvalRetract,
    EvalScenario,
    EvalStart,
    EvalWait,
    Event,
    Goal,
    Question,
    Retractions,
    StopHook,
    Terms,
    ToolCall,
    Trigger,
    Usage,
    parse_event,
)
from socratic.eventlog import read_jsonl_counted

Status = Literal["starting", "running", "paused", "waiting", "stopping", "ended"]

# what ends the agent's explanation of a failed evaluation (its words after it)
_EXPLANATION_ENDS = (ToolCall, EvalStart, EvalEnd, Question, StopHook, CampaignEnd)
# events that show the agent working again after a `wait`
_ACTIVITY = (AgentText, ToolCall, Question, EvalStart)


def finite(v: Any) -> float | None:
    """A finite number as float, else None (bools, NaN and infinities are no figures)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


@dataclass(frozen=True)
class Evaluation:
    """One recorded evaluation (an eval.end) and where the campaign stood when it ended."""

    end: EvalEnd
    t: float                        # the log's clock at its end
    goal_set: bool                  # of the goal's scenario set (or the log names none)
    tool_calls: int                 # tool calls before it ended
    index: int                      # its place among the evaluations (0-based)
    sha: str                        # its candidate (eval.end's, else eval.start's)
    rows: tuple[EvalScenario, ...]  # its eval.scenario rows, as logged

    @property
    def n(self) -> int:
        return self.end.n

    @property
    def correct(self) -> bool:
        return self.end.summary.all_correct

    @property
    def imported(self) -> bool:
        return self.end.source == "import" or self.end.imported is not None

    def figures(self, terms: Terms) -> tuple[float | None, float | None]:
        """(geomean, min) speedup against `terms`, as the log records them (retractions not
        applied: `LogState.figures` does)."""
        s = self.end.summary
        if terms == "baseline":
            return finite(s.geomean_speedup), finite(s.min_speedup)
        vs = [finite(v.get(terms)) for v in (self.end.scenario_vs or {}).values()]
        mins = [v for v in vs if v is not None]
        return finite((s.geomean_vs or {}).get(terms)), (min(mins) if mins else None)


@dataclass(frozen=True)
class Asked:
    """A question and where the campaign stood when it was asked."""

    event: Question
    evaluations: int                # evaluations ended before it (any set)
    tool_calls: int                 # tool calls before it


@dataclass(frozen=True)
class MetStop:
    """A stop hook that found the goal met, and where the campaign stood."""

    event: StopHook
    t: float
    tool_calls: int
    evaluations: int


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def plus(self, u: Usage) -> Tokens:
        return Tokens(self.input + u.input_tokens, self.output + u.output_tokens,
                      self.cache_read + u.cache_read, self.cache_write + u.cache_write)


@dataclass
class Clock:
    """The log's clock, and campaign time with the gaps between sessions (an end, then a
    resume) left out: every view shows these, never a clock of its own."""

    last: float = 0.0               # the latest `t` seen
    sessions: int = 0               # a campaign ended and resumed has several
    active_before: float = 0.0      # the finished sessions' time
    segment_t0: float = 0.0         # t at the current session's start or resume
    segment_open: bool = False

    def open(self, t: float) -> None:
        if not self.segment_open:
            self.sessions += 1
            self.segment_t0, self.segment_open = t, True

    def close(self, t: float) -> None:
        if self.segment_open:
            self.active_before += max(0.0, t - self.segment_t0)
            self.segment_open = False

    def active_at(self, t: float) -> float:
        """Campaign time at the log's time `t`, the gaps between sessions left out."""
        if not self.segment_open:
            return self.active_before
        return self.active_before + max(0.0, t - self.segment_t0)

    @property
    def active_s(self) -> float:
        """Campaign time up to the latest event."""
        return self.active_at(self.last)

    def campaign_time(self, t: float) -> float:
        """What every view shows as the campaign's time at the log's time `t`: the log's
        clock itself for one session (the report's duration, the transcript's stamps),
        the sessions' own time when it was ended and resumed (the gaps left out)."""
        return t if self.sessions <= 1 else self.active_at(t)


@dataclass
class RuleMarks:
    """What the campaign's rules remember between events, as the log leaves them (the
    engine's `Marks` are made from these, plus the inbox's requests, which are not in the
    log). Kept from the typed events only: a malformed campaign.end ends the reading's
    status but not these (as the engine's own fold never saw it)."""

    in_a_row: int = 0          # stop attempts in a row with no tool call between
    calls_since: int = 0       # tool calls since the last stop attempt
    blocks: int = 0            # refused stops in a row with no tool call between them
    recent_text: str = ""      # the agent's latest words (RECENT_TEXT characters of them)
    start_fired: bool = False
    declared_last_at: int | None = None   # evaluations ended when declared_done last fired
    explained_n: int = 0       # the last failing evaluation correctness_failure fired for
    ended: EndReason | None = None   # the campaign.end reason, while ended


RECENT_TEXT = 4000             # how much of the agent's latest words the marks keep


@dataclass
class LogState:
    """A campaign log, read so far. `apply` folds one typed event in (in place)."""

    start: CampaignStart | None = None
    end: CampaignEnd | None = None  # the end in force (None again after a resume)
    end_reasons: list[str] = field(default_factory=list)  # every campaign.end's, in order
    status: Status = "starting"
    seq: int = 0
    events: int = 0
    malformed: int = 0              # events that do not match their declaration
    started_malformed: bool = False  # a campaign.start was logged, if not as declared
    clock: Clock = field(default_factory=Clock)
    tool_calls: int = 0
    turns: int = 0                  # model turns (usage events)
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float = 0.0
    priced: bool = False            # some usage event carried a cost
    evaluations: list[Evaluation] = field(default_factory=list)
    running: int | None = None      # the evaluation in progress (eval.start, no eval.end yet)
    highest_n: int = 0              # the highest evaluation number started (the next is +1)
    gpu_wait: str | None = None     # who has the GPU while the running evaluation waits
    gpu_wait_s: float = 0.0         # the recorded evaluations' waits for the GPU
    retractions: Retractions = field(default_factory=Retractions)
    questions: list[Asked] = field(default_factory=list)
    triggers: dict[str, int] = field(default_factory=dict)
    last_trigger: Trigger | None = None
    met_stops: list[MetStop] = field(default_factory=list)
    auto: bool | None = None        # auto-questions, as started or last switched
    auto_switches: int = 0          # control auto_on / auto_off events seen
    explanations: dict[int, str] = field(default_factory=dict)  # by evaluation index
    marks: RuleMarks = field(default_factory=RuleMarks)   # the campaign engine's rule marks
    # the goals in force, in order: (seq from which it holds, goal): the first start's (when
    # no goal is kept yet), then each campaign.resume's that sets one
    goals: list[tuple[int, Goal]] = field(default_factory=list)
    # what the campaign.resume events changed of the limits, folded in order (any key)
    resumed_limits: dict[str, float | None] = field(default_factory=dict)
    _rows: dict[int, list[EvalScenario]] = field(default_factory=dict)
    _shas: dict[int, str] = field(default_factory=dict)
    _explaining: int | None = None
    _said: list[str] = field(default_factory=list)

    # ----------------------------------------------------------------- what it says

    @property
    def started(self) -> bool:
        """A campaign.start is in the log (one another version wrote counts too: a fleet
        must not start that campaign again)."""
        return self.start is not None or self.started_malformed

    @property
    def goal_set(self) -> str | None:
        return self.start.scenarios.set if self.start else None

    @property
    def terms(self) -> Terms:
        """What the goal's speedups are against (baseline, or a comparison)."""
        return (self.start.goal.against or "baseline") if self.start else "baseline"

    @property
    def goal(self) -> Goal | None:
        """The goal in force: the latest a resume set, else the start's (None before a
        campaign.start, and with only resumes before it: see `goals`)."""
        return self.goals[-1][1] if self.start is not None and self.goals else None

    @property
    def limits(self) -> dict[str, float | None]:
        """The limits in force: the first campaign.start's, updated by each campaign.resume's
        (empty without a campaign.start)."""
        if self.start is None:
            return {}
        return {**(self.start.limits or {}), **self.resumed_limits}

    @property
    def duration_s(self) -> float:
        """The campaign's time on the log's clock: its end's, else the latest event's."""
        t = finite(self.end.t) if self.end is not None else None
        return t or self.clock.last

    @property
    def end_reason(self) -> str | None:
        return self.end.reason if self.end is not None else None

    @property
    def imports(self) -> int:
        return sum(1 for e in self.evaluations if e.imported)

    def rows(self, n: int) -> list[EvalScenario]:
        """Evaluation n's eval.scenario rows (the latest run under that n)."""
        return list(self._rows.get(n, []))

    def figures(self, e: Evaluation, terms: Terms | None = None) -> tuple[float | None, float | None]:
        """(geomean, min) of an evaluation against `terms` (the goal's by default), None
        where a retraction took them back."""
        terms = terms or self.terms
        if self.retractions.hides(e.n, terms):
            return None, None
        return e.figures(terms)

    def best_geomean(self, terms: Terms | None = None) -> float | None:
        """The highest geomean against `terms` over correct goal-set evaluations whose
        figures stand (it may come from another evaluation than `best`)."""
        vals = [g for e in self.evaluations if e.correct and e.goal_set
                for g in (self.figures(e, terms)[0],) if g is not None]
        return max(vals) if vals else None

    def best(self, terms: Terms | None = None) -> Evaluation | None:
        """The best correct goal-set evaluation against `terms` (the goal's by default), by
        min and then geomean (the first of equals), retractions applied."""
        best, key = None, None
        for e in self.evaluations:
            geo, mn = self.figures(e, terms)
            if e.correct and e.goal_set and geo is not None and mn is not None:
                if key is None or (mn, geo) > key:
                    best, key = e, (mn, geo)
        return best

    # ----------------------------------------------------------------- the fold

    def apply(self, ev: Event) -> LogState:
        # hot path (a resume, and a hook without its session server, fold the whole log)
        t = ev.t
        if not (type(t) is float and -math.inf < t < math.inf):  # bools are no times
            ft = finite(t)
            t = ft if ft is not None else self.clock.last
        if t > self.clock.last:
            self.clock.last = t
        self.events += 1
        if ev.seq > self.seq:
            self.seq = ev.seq
        if self._explaining is not None:
            self._explain(ev)
        if self.status == "waiting" and isinstance(ev, _ACTIVITY):
            self.status = "running"
        handler = _HANDLERS.get(type(ev))
        if handler is not None:
            handler(self, ev, t)
        return self

    def apply_malformed(self, raw: Any) -> None:
        """An event that is not an object or does not match its declaration: not applied,
        counted; but the campaign's clock runs on, a start still starts it, an end still
        ends it and an eval.end still ends the running evaluation (no verdict, so no
        evaluation)."""
        self.malformed += 1
        if not isinstance(raw, dict):
            return
        t = finite(raw.get("t"))
        if t is not None:
            self.clock.last = max(self.clock.last, t)
        kind = raw.get("type")
        if kind == CampaignStart.TYPE:
            self.started_malformed = True
        elif kind == EvalEnd.TYPE:
            self.running, self.gpu_wait = None, None
        elif kind == CampaignEnd.TYPE:
            seq, reason = raw.get("seq"), raw.get("reason")
            # kept as written, like any reader's reason (vocab: a newer version's reads)
            self._end(CampaignEnd(seq=seq if isinstance(seq, int) else self.seq, t=self.clock.last,
                                  ts=str(raw.get("ts") or ""),
                                  reason=cast(EndReason, reason) if isinstance(reason, str) and reason
                                  else "ended"),
                      self.clock.last)

    def apply_unknown(self, raw: dict[str, Any]) -> None:
        """An event of a type this version does not know: ignored, but its time counts."""
        t = finite(raw.get("t"))
        if t is not None:
            self.clock.last = max(self.clock.last, t)

    def apply_all(self, events: Iterable[Event]) -> LogState:
        for ev in events:
            self.apply(ev)
        return self

    def copy(self) -> LogState:
        """A checkpoint: containers copied, records shared (they are never mutated)."""
        return replace(self, clock=replace(self.clock), marks=replace(self.marks),
                       evaluations=list(self.evaluations),
                       end_reasons=list(self.end_reasons),
                       retractions=self.retractions.copy(), questions=list(self.questions),
                       triggers=dict(self.triggers), met_stops=list(self.met_stops),
                       explanations=dict(self.explanations), goals=list(self.goals),
                       resumed_limits=dict(self.resumed_limits),
                       _rows={k: list(v) for k, v in self._rows.items()},
                       _shas=dict(self._shas), _said=list(self._said))

    def _explain(self, ev: Event) -> None:
        """A failed evaluation's explanation: the agent's words after it, until it acts."""
        if self._explaining is None:
            return
        if isinstance(ev, AgentText):
            self._said.append(ev.text)
            self.explanations[self._explaining] = "".join(self._said).strip()
            if not self.explanations[self._explaining]:
                del self.explanations[self._explaining]
        elif isinstance(ev, _EXPLANATION_ENDS) and "".join(self._said).strip():
            self._explaining, self._said = None, []
        elif isinstance(ev, EvalEnd):
            self._explaining, self._said = None, []  # no words before the next evaluation

    def _start(self, ev: CampaignStart, t: float) -> None:
        self.clock.open(t)
        if self.start is None:  # a second start (a recovered one) does not move the goal
            self.start = ev
        if not self.goals:
            self.goals.append((ev.seq, ev.goal))
        if ev.auto_questions is not None:
            self.auto = ev.auto_questions
        if self.status in ("starting", "ended"):
            self.status = "running"

    def _resume(self, ev: CampaignResume, t: float) -> None:
        self.clock.open(t)
        self.end = None
        if ev.goal is not None:   # the engineer's `run --resume --goal-...`
            self.goals.append((ev.seq, ev.goal))
        if ev.limits is not None:
            self.resumed_limits.update(ev.limits)
        m = self.marks
        m.ended, m.in_a_row, m.blocks = None, 0, 0
        if self.status in ("ended", "starting", "stopping"):
            self.status = "running"

    def _end(self, ev: CampaignEnd, t: float) -> None:
        self.clock.close(t)
        self.end, self.status = ev, "ended"
        self.end_reasons.append(ev.reason)
        self.running, self.gpu_wait = None, None

    def _campaign_end(self, ev: CampaignEnd, t: float) -> None:
        self._end(ev, t)
        self.marks.ended = ev.reason   # a typed end only (apply_malformed's goes to _end)

    def _tool_call(self, ev: ToolCall, t: float) -> None:
        self.tool_calls += 1
        self.marks.calls_since += 1
        self.marks.blocks = 0

    def _agent_text(self, ev: AgentText, t: float) -> None:
        m = self.marks
        m.recent_text = (m.recent_text + "\n" + ev.text)[-RECENT_TEXT:]

    def _usage(self, ev: Usage, t: float) -> None:
        self.turns += 1
        cost = finite(ev.cost_usd)
        self.cost_usd += cost or 0.0
        self.priced = self.priced or cost is not None
        self.tokens = self.tokens.plus(ev)

    def _eval_start(self, ev: EvalStart, t: float) -> None:
        self._rows[ev.n] = []  # an evaluation cut by a kill runs again under its n
        self._shas[ev.n] = ev.candidate_sha
        self.running, self.gpu_wait = ev.n, None
        self.highest_n = max(self.highest_n, ev.n)

    def _eval_scenario(self, ev: EvalScenario, t: float) -> None:
        self._rows.setdefault(ev.n, []).append(ev)
        self.gpu_wait = None  # its turn came

    def _eval_wait(self, ev: EvalWait, t: float) -> None:
        self.gpu_wait = ev.holder or "another evaluation"

    def _eval_end(self, ev: EvalEnd, t: float) -> None:
        goal_set = self.goal_set
        self.evaluations.append(Evaluation(
            ev, t, goal_set is None or ev.set is None or ev.set == goal_set, self.tool_calls,
            len(self.evaluations), ev.candidate_sha or self._shas.get(ev.n, ""),
            tuple(self._rows.get(ev.n, []))))
        self.running, self.gpu_wait = None, None
        self.gpu_wait_s += finite(ev.gpu_wait_s) or 0.0
        if not ev.summary.all_correct:
            self._explaining, self._said = len(self.evaluations) - 1, []

    def _retract(self, ev: EvalRetract, t: float) -> None:
        self.retractions.add(ev)

    def _question(self, ev: Question, t: float) -> None:
        self.questions.append(Asked(ev, len(self.evaluations), self.tool_calls))

    def _trigger(self, ev: Trigger, t: float) -> None:
        self.triggers[ev.kind] = self.triggers.get(ev.kind, 0) + 1
        self.last_trigger = ev
        m = self.marks
        if ev.kind == "start":
            m.start_fired = True
        elif ev.kind == "declared_done":
            m.declared_last_at = len(self.evaluations)
        elif ev.kind == "correctness_failure" and self.evaluations:
            m.explained_n = self.evaluations[-1].n   # the latest evaluation's

    def _stophook(self, ev: StopHook, t: float) -> None:
        m = self.marks
        m.in_a_row = m.in_a_row + 1 if m.calls_since == 0 and m.in_a_row else 1
        m.calls_since = 0
        m.blocks += 0 if ev.met else 1
        if ev.met:
            self.met_stops.append(MetStop(ev, t, self.tool_calls, len(self.evaluations)))

    def _control(self, ev: Control, t: float) -> None:
        action = ev.action
        after: dict[str, Status] = {"resume": "running", "stop": "stopping", "wait": "waiting"}
        if action == "pause":
            self.status = "paused"
        elif action in after and self.status != "ended":
            self.status = after[action]
        elif action in ("auto_on", "auto_off"):
            self.auto = action == "auto_on"
            self.auto_switches += 1


_HANDLERS: dict[type[Event], Any] = {
    CampaignStart: LogState._start, CampaignResume: LogState._resume,
    CampaignEnd: LogState._campaign_end, ToolCall: LogState._tool_call,
    AgentText: LogState._agent_text, Usage: LogState._usage,
    EvalStart: LogState._eval_start, EvalScenario: LogState._eval_scenario,
    EvalWait: LogState._eval_wait, EvalEnd: LogState._eval_end,
    EvalRetract: LogState._retract, Question: LogState._question,
    Trigger: LogState._trigger, StopHook: LogState._stophook, Control: LogState._control,
}


@dataclass
class LogReader:
    """A session's log read incrementally: each `poll` folds in what was appended since
    the last (a line still being written waits for its newline). A log replaced or cut
    short (a session folder rewritten) is read again from its start."""

    path: Path
    state: LogState = field(default_factory=LogState)
    offset: int = 0
    skipped: int = 0                # lines that did not parse
    ignored: int = 0                # events of types this version does not know
    _inode: int | None = None

    def poll(self) -> list[Event]:
        """The events appended since the last poll, folded into `state`."""
        try:
            st = os.stat(self.path)
            if self._inode is not None and (st.st_ino != self._inode or st.st_size < self.offset):
                self.state, self.offset, self.skipped, self.ignored = LogState(), 0, 0, 0
            self._inode = st.st_ino
            records, self.offset, not_json = read_jsonl_counted(self.path, self.offset)
        except OSError:
            return []
        self.skipped += not_json
        out = []
        for rec in records:
            try:
                ev = parse_event(rec)
            except ContractError:
                self.skipped += 1
                self.state.apply_malformed(rec)
                continue
            if ev is None:
                self.ignored += 1
                self.state.apply_unknown(rec)
            else:
                self.state.apply(ev)
                out.append(ev)
        return out


def read_log(events: Iterable[Event]) -> LogState:
    """The reading of a whole log's typed events."""
    return LogState().apply_all(events)
