"""The campaign state model: a pure reducer over the event log, with no widgets in it.

`CampaignState.apply(event)` folds one event into the state; the screen is a function of
the state, so "the screen at any point is the state the events up to that point produce"
is checked in tests without a screen.

Discipline that makes cheap checkpoints possible: the reducer never mutates an object
that a container already holds (blocks, rows, eval points are replaced, not edited), so
`copy()` only copies the containers. `Timeline` keeps such copies every
`CHECKPOINT_EVERY` events and seeks by replaying at most that many events.

Events are parsed through their declarations (socratic.contracts): unknown event types
are ignored (`n_ignored`), events of a known type that do not match their declaration are
skipped and counted (`n_malformed`), never half-applied.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, cast

from socratic import contracts as c
from socratic.contracts import ContractError, Event, Retractions, ScenarioResult, parse_event, retracted_on
from socratic.endreasons import end_detail
from socratic.logread import LogState
from socratic.tui.tool_summary import summarize_output

CHECKPOINT_EVERY = 256
# the transcript keeps at most this many characters of a tool's input/output
MAX_TOOL_TEXT = 4000


def num(value: Any) -> float | None:
    """A finite float, or None for anything else (missing, str, NaN, bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def _str(value: Any, default: str = "") -> str:
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def _clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Block:
    """One transcript block. `kind` is one of: start, text, tool, eval, trigger, question,
    stophook, control, problem, retract, end (`contracts.BlockKind`). Fields not used by a
    kind stay at their defaults."""

    kind: c.BlockKind
    seq: int = 0          # seq of the event that opened the block
    t: float = 0.0        # campaign time of that event
    text: str = ""        # agent text, question text, trigger reason, end reason...
    title: str = ""       # tool name, trigger kind, control action
    detail: str = ""      # tool input (short), question source, ...
    output: str = ""      # tool output
    ok: bool | None = None    # tool result ok, eval all_correct, stophook met
    done: bool = False        # tool has its result, eval has ended
    duration: float | None = None
    data: tuple = ()      # kind-specific extras (frozen): (key, value) pairs

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.data:
            if k == key:
                return v
        return default


def tool_input_summary(name: str, tool_input: Any) -> str:
    """One short line for a tool call's input: the command, the path, the edit."""
    if isinstance(tool_input, dict):
        for key in ("command", "cmd", "path", "file", "file_path", "scenarios", "text"):
            if key in tool_input and tool_input[key] not in (None, ""):
                val = tool_input[key]
                s = val if isinstance(val, str) else str(val)
                return s.strip().splitlines()[0][:200] if s.strip() else ""
        if not tool_input:
            return ""
        import json

        return json.dumps(tool_input, ensure_ascii=False)[:200]
    if tool_input is None:
        return ""
    return _str(tool_input).strip().splitlines()[0][:200] if _str(tool_input).strip() else ""


def tool_input_full(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        parts = []
        for k, v in tool_input.items():
            s = v if isinstance(v, str) else repr(v)
            parts.append(f"{k}: {s}")
        return _clip("\n".join(parts))
    return _clip(_str(tool_input))


# --------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class ScenarioRow:
    """One scenario of the table: its latest result, the evaluator's own record
    (`contracts.ScenarioResult`, read back from eval.scenario, with the comparisons of
    eval.end's `scenario_vs`), plus the best speedup seen so far."""

    id: str
    order: int
    n: int | None = None           # evaluation that produced the row
    result: ScenarioResult | None = None   # None before the first evaluation
    best: float | None = None      # best correct speedup over all evaluations
    retracted: c.RetractPart | None = None   # its evaluation's eval.retract part (all | comparisons)

    @property
    def correct(self) -> bool | None:
        return self.result.correct if self.result is not None else None

    @property
    def speedup(self) -> float | None:
        return num(self.result.speedup) if self.result is not None else None

    @property
    def error(self) -> str | None:
        return (self.result.error or None) if self.result is not None else None

    def figure(self, name: str) -> float | None:
        """One of the result's numbers (`candidate_ms`, `tflops`...): finite, or None."""
        return num(getattr(self.result, name)) if self.result is not None else None

    def goal_speedup(self, against: str = "baseline") -> float | None:
        """The speedup the goal is judged on: against the baseline or a comparison (None
        when its evaluation was retracted on those terms)."""
        if self.taken_back(against) or self.result is None:
            return None
        return num(self.result.speedup_against(against or "baseline"))

    def taken_back(self, against: str = "baseline") -> bool:
        """Its evaluation's figures against `against` were retracted (`socratic retract`)."""
        return retracted_on(self.retracted, against or "baseline")

    @property
    def err_ratio(self) -> float | None:
        err, base = self.figure("err"), self.figure("err_baseline")
        if err is None or base is None:
            return None
        if base == 0:
            return 1.0 if err == 0 else math.inf
        return err / base

    def meets(self, goal: float | None, against: str = "baseline") -> bool | None:
        """True/False once the row has a result; None before the first evaluation."""
        if self.correct is None and self.speedup is None:
            return None
        if self.correct is False:
            return False
        if self.taken_back(against):
            return None     # no figure to judge: retracted
        speedup = self.goal_speedup(against)
        if goal is None or speedup is None:
            return bool(self.correct)
        return speedup >= goal


@dataclass(frozen=True)
class EvalPoint:
    n: int
    geomean: float | None
    min: float | None
    all_correct: bool | None
    worst: str | None = None
    comparisons: tuple = ()  # (name, geomean speedup vs that implementation)
    t: float = 0.0
    seq: int = 0
    set: str = ""
    retracted: c.RetractPart | None = None  # eval.retract's part (all | comparisons)
    comparisons_min: tuple = ()  # (name, the lowest scenario speedup vs that implementation)

    def shows(self, against: str = "baseline") -> bool:
        """Its figures against `against` (baseline, or a comparison) stand: not retracted."""
        return not retracted_on(self.retracted, against)

    def on(self, against: str = "baseline") -> tuple[float | None, float | None]:
        """(geomean, min) on the goal's terms: against the baseline or a comparison."""
        if against in ("", "baseline"):
            return self.geomean, self.min
        return dict(self.comparisons).get(against), dict(self.comparisons_min).get(against)


@dataclass(frozen=True)
class Trigger:
    kind: str
    reason: str
    suggestions: tuple[str, ...]
    seq: int
    t: float


@dataclass(frozen=True)
class Retry:
    """The API call that failed last and is being retried (`api.retry`)."""

    attempt: int
    error: str
    wait_s: float | None  # back-off before the next try
    t: float              # campaign time of the failure


@dataclass(frozen=True)
class Question:
    text: str
    bank_id: str | None
    trigger: str | None
    source: str
    seq: int
    t: float


# --------------------------------------------------------------------------- state

@dataclass
class CampaignState:
    # campaign.start
    task: str = ""
    model: str = ""
    goal: float | None = None
    goal_against: str = "baseline"
    gpu: str = ""
    started: bool = False
    agent: str = ""           # an attached campaign's agent (no process holds its session)
    confined: bool | None = None  # its agent's launches: all in a Landlock domain (agent.launch)
    confined_how: str = ""
    # the one reading of the log (socratic.logread): status, clock, counters, evaluations,
    # retractions, questions, triggers; what follows is what the screens show of it
    log: LogState = field(default_factory=LogState)
    n_events: int = 0
    n_ignored: int = 0      # events not applied: unknown or not shown types, and malformed
    # evaluations
    eval_n: int | None = None          # current (or last) evaluation number
    eval_done: int = 0                 # scenarios finished in the running evaluation
    eval_total: int | None = None
    evals: list[EvalPoint] = field(default_factory=list)
    rows: dict[str, ScenarioRow] = field(default_factory=dict)  # the shown set's rows
    # rows per scenario set: evaluations of another set (e.g. `full`) get their own rows;
    # the table shows the set of the latest evaluation; `sets[table_set] is rows`
    sets: dict[str, dict] = field(default_factory=dict)
    goal_set: str = ""
    table_set: str = ""
    retry: Retry | None = None         # set while the API is being retried
    # transcript
    blocks: list[Block] = field(default_factory=list)
    tool_index: dict[str, int] = field(default_factory=dict)  # tool id -> block index
    eval_index: dict[int, int] = field(default_factory=dict)  # eval n -> block index
    _text_open: bool = False

    # ----------------------------------------------------------------- copying

    def copy(self) -> CampaignState:
        """A checkpoint: containers copied, contents shared (they are never mutated)."""
        sets = {k: dict(v) for k, v in self.sets.items()}
        rows = sets[self.table_set] if self.table_set in sets else dict(self.rows)
        return replace(
            self,
            evals=list(self.evals),
            rows=rows,
            sets=sets,
            blocks=list(self.blocks),
            tool_index=dict(self.tool_index),
            eval_index=dict(self.eval_index),
            log=self.log.copy(),
        )

    # ----------------------------------------------------------------- the reading's

    @property
    def status(self) -> str:
        """starting|running|paused|waiting|stopping|ended"""
        return self.log.status

    @property
    def end_reason(self) -> str:
        return self.log.end_reasons[-1] if self.log.end_reasons else ""

    @property
    def seq(self) -> int:
        return self.log.seq

    @property
    def t(self) -> float:
        """The log's clock: the latest event's time."""
        return self.log.clock.last

    @property
    def auto(self) -> bool | None:
        return self.log.auto

    @property
    def n_malformed(self) -> int:
        """Events that are not objects or do not match their declaration."""
        return self.log.malformed

    @property
    def tool_calls(self) -> int:
        return self.log.tool_calls

    @property
    def input_tokens(self) -> int:
        return self.log.tokens.input

    @property
    def output_tokens(self) -> int:
        return self.log.tokens.output

    @property
    def cache_read(self) -> int:
        return self.log.tokens.cache_read

    @property
    def cache_write(self) -> int:
        return self.log.tokens.cache_write

    @property
    def cost_usd(self) -> float:
        return self.log.cost_usd

    @property
    def eval_running(self) -> bool:
        return self.log.running is not None

    @property
    def gpu_wait(self) -> str | None:
        return self.log.gpu_wait

    @property
    def retractions(self) -> Retractions:
        return self.log.retractions

    @property
    def sessions(self) -> int:
        return self.log.clock.sessions

    @property
    def triggers(self) -> int:
        return sum(self.log.triggers.values())

    @property
    def last_trigger(self) -> Trigger | None:
        ev = self.log.last_trigger
        if ev is None:
            return None
        return Trigger(kind=ev.kind or "trigger", reason=ev.reason,
                       suggestions=tuple(ev.suggestions), seq=ev.seq,
                       t=_event_time(ev, self.log.clock.last))

    @property
    def questions(self) -> list[Question]:
        return [_question(q.event) for q in self.log.questions]

    @property
    def asked(self) -> set[str]:
        """The bank ids asked so far."""
        return {q.event.bank_id for q in self.log.questions if q.event.bank_id}

    def active_at(self, t: float) -> float:
        """The campaign's time at the log's time `t`, as every view shows it."""
        return self.log.clock.campaign_time(t)

    # ----------------------------------------------------------------- derived

    @property
    def best_geomean(self) -> float | None:
        """The best correct goal-set geomean on the goal's terms: against the baseline, or
        against the comparison the goal names (FA3's time over the candidate's)."""
        return self.log.best_geomean()

    def goal_evals(self) -> list[EvalPoint]:
        """Evaluations of the goal set (what the plot shows)."""
        if not self.goal_set:
            return self.evals
        return [e for e in self.evals if e.set in ("", self.goal_set)]

    @property
    def last_eval(self) -> EvalPoint | None:
        """The last finished evaluation of the set the table shows."""
        for e in reversed(self.evals):
            if not self.table_set or e.set in ("", self.table_set):
                return e
        return None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def is_stale(self, row: ScenarioRow) -> bool:
        """The row is from an earlier evaluation than the one running now."""
        return self.eval_running and row.n is not None and row.n != self.eval_n

    def rows_in_order(self) -> list[ScenarioRow]:
        return sorted(self.rows.values(), key=lambda r: r.order)

    def missing_goal(self) -> list[str]:
        return [r.id for r in self.rows_in_order()
                if r.meets(self.goal, self.goal_against) is False]

    # ----------------------------------------------------------------- reducer

    def apply(self, ev: Event | Any) -> CampaignState:
        """Fold one event (typed, or a parsed JSON object) in, in place, and return self."""
        if not isinstance(ev, Event):
            try:
                parsed = parse_event(ev)
            except ContractError:
                self._malformed(ev)
                return self
            if parsed is None:  # a type this reader does not know: not an error
                self.n_ignored += 1
                if isinstance(ev, dict):  # campaign time runs on with every event
                    self.log.apply_unknown(ev)
                return self
            ev = parsed
        self.log.apply(ev)
        t = num(ev.t)
        handler = _HANDLERS.get(type(ev))
        if handler is None:
            self.n_ignored += 1
            return self
        self.n_events += 1
        if not isinstance(ev, c.AgentText):
            self._text_open = False
        if self.retry is not None and isinstance(ev, _API_ANSWERED):
            self.retry = None
        handler(self, ev, ev.seq, t if t is not None else self.t)
        return self

    def apply_all(self, events: Iterable[Event | Any]) -> CampaignState:
        for ev in events:
            self.apply(ev)
        return self

    def _malformed(self, ev: Any) -> None:
        """An event that is not an object or does not match its declaration: not applied,
        counted. A malformed eval.end still ends the running evaluation (no verdict, so no
        evaluation: no plot bar)."""
        self.n_ignored += 1
        was_running = self.eval_running
        self.log.apply_malformed(ev)
        if was_running and not self.eval_running:
            idx = self.eval_index.get(self.eval_n) if self.eval_n is not None else None
            if idx is not None and idx < len(self.blocks) and not self.blocks[idx].done:
                old = self.blocks[idx]
                why = "malformed eval.end in the log (skipped)"
                self.blocks[idx] = replace(old, done=True, duration=max(0.0, self.t - old.t),
                                           data=(*old.data, ("error", why)))

    # ----------------------------------------------------------------- handlers

    def _start(self, ev: c.CampaignStart, seq: int, t: float) -> None:
        self.started = True
        self.task = ev.task
        self.model = ev.model
        self.goal = num(ev.goal.min_speedup)
        self.goal_against = ev.goal.against or "baseline"
        self.gpu = ev.gpu.name if ev.gpu else ""
        self.agent = ev.agent or ""
        self.goal_set = ev.scenarios.set or ""
        self._show_set(self.goal_set)
        for sid in ev.scenarios.ids:
            if sid and sid not in self.rows:
                self.rows[sid] = ScenarioRow(id=sid, order=len(self.rows))
        self.eval_total = len(self.rows) or None
        detail = " · ".join(x for x in (self.task, self.model, self.gpu) if x)
        self.blocks.append(Block("start", seq, t, text=detail,
                                 data=(("goal", self.goal), ("against", self.goal_against))))

    def _text(self, ev: c.AgentText, seq: int, t: float) -> None:
        chunk = ev.text
        if not chunk:
            return
        if self._text_open and self.blocks and self.blocks[-1].kind == "text":
            last = self.blocks[-1]  # (direct construction: replace() is slow on hot paths)
            # socratic's own loop logs a message in streamed pieces; an outside agent's
            # hooks (and a person's `hook say`) log whole messages: those are paragraphs
            glue = "\n\n" if self.agent else ""
            self.blocks[-1] = Block("text", last.seq, last.t, text=last.text + glue + chunk)
        else:
            self.blocks.append(Block("text", seq, t, text=chunk))
        self._text_open = True

    def _tool_call(self, ev: c.ToolCall, seq: int, t: float) -> None:
        block = Block("tool", seq, t, title=ev.name or "tool",
                      detail=tool_input_summary(ev.name, ev.input), text=tool_input_full(ev.input))
        if ev.id:
            self.tool_index[ev.id] = len(self.blocks)
        self.blocks.append(block)

    def _tool_result(self, ev: c.ToolResult, seq: int, t: float) -> None:
        idx = self.tool_index.pop(ev.id, None) if ev.id else None
        # summarized before clipping: the exit code is on the output's last line
        data = (("summary", summarize_output(ev.output)),) + (
            (("blob", ev.blob),) if ev.blob else ())
        if idx is None or idx >= len(self.blocks):
            self.blocks.append(Block("tool", seq, t, title=ev.name or "tool",
                                     output=_clip(ev.output), ok=ev.ok, done=True, data=data))
            return
        old = self.blocks[idx]
        secs = num(ev.seconds)
        self.blocks[idx] = replace(old, output=_clip(ev.output), ok=ev.ok, done=True,
                                   duration=secs if secs is not None else max(0.0, t - old.t),
                                   data=data)

    def _show_set(self, name: str) -> None:
        """Make `name` the shown set (its rows become `self.rows`)."""
        if name not in self.sets:
            if not self.sets and not self.table_set:
                self.sets[name] = self.rows  # rows seen before any set name: keep them
            else:
                self.sets[name] = {}
        self.table_set = name
        self.rows = self.sets[name]

    def _eval_start(self, ev: c.EvalStart, seq: int, t: float) -> None:
        set_name = ev.set or self.goal_set
        if set_name and not self.goal_set and "" in self.sets and self.table_set == "":
            # campaign.start named no set: its scenarios are the first evaluated set's
            self.sets[set_name] = self.sets.pop("")
            self.goal_set = self.table_set = set_name
        if set_name != self.table_set or self.table_set not in self.sets:
            self._show_set(set_name)
        self.eval_n = ev.n
        self.eval_done = 0
        if ev.total is not None:
            self.eval_total = ev.total
        self.eval_index[ev.n] = len(self.blocks)
        self.blocks.append(Block("eval", seq, t, title=f"#{ev.n}", detail=ev.candidate_sha[:12],
                                 data=(("n", ev.n),)))

    def _eval_scenario(self, ev: c.EvalScenario, seq: int, t: float) -> None:
        sid = ev.scenario
        old = self.rows.get(sid) or ScenarioRow(
            id=sid, order=ev.index if ev.index is not None else len(self.rows))
        row = ScenarioRow(id=sid, order=old.order, n=ev.n, result=ev.row(), best=old.best)
        if row.correct and row.speedup is not None and (row.best is None or row.speedup > row.best):
            row = replace(row, best=row.speedup)
        self.rows[sid] = row
        if self.eval_running:
            self.eval_done += 1
        if ev.total is not None:
            self.eval_total = ev.total

    def _eval_end(self, ev: c.EvalEnd, seq: int, t: float) -> None:
        summary = ev.summary
        comparisons = tuple((name, v) for name, v in (summary.geomean_vs or {}).items()
                            if num(v) is not None)
        lowest: dict[str, float] = {}
        for vs in (ev.scenario_vs or {}).values():
            for name, v in vs.items():
                if num(v) is not None:
                    lowest[name] = min(lowest.get(name, math.inf), float(v))
        point = EvalPoint(
            n=ev.n, geomean=num(summary.geomean_speedup), min=num(summary.min_speedup),
            all_correct=summary.all_correct, worst=summary.worst_scenario or None,
            comparisons=comparisons, t=t, seq=seq, set=ev.set or self.table_set,
            retracted=self.retractions.part(ev.n), comparisons_min=tuple(lowest.items()),
        )
        self.evals.append(point)
        rows = self.sets.get(ev.set or self.table_set, self.rows)
        for sid, vs in (ev.scenario_vs or {}).items():
            row = rows.get(sid)
            if row is not None and row.n == ev.n and row.result is not None:   # this evaluation's rows
                rows[sid] = replace(row, result=c.with_scenario_vs(row.result, vs))
        self.eval_n = ev.n
        shown = ev.set or self.table_set
        if (self.goal_set and shown != self.goal_set and self.goal_set in self.sets
                and not any(r.speedup is not None for r in rows.values() if r.n == ev.n)):
            # a correctness-only run of another set (rows of `-`): back to the goal's table
            self._show_set(self.goal_set)
        idx = self.eval_index.get(ev.n)
        error = summary.error
        if not error and summary.build_ok is False:
            error = "build failed"
        elif not error and summary.bans_ok is False:
            error = "banned library use"
        data = (("n", ev.n), ("point", point), ("error", error or None),
                ("set", ev.set or None), ("source", ev.source or None),
                ("gpu_wait_s", num(ev.gpu_wait_s)))
        if idx is not None and idx < len(self.blocks) and self.blocks[idx].kind == "eval":
            old = self.blocks[idx]
            self.blocks[idx] = replace(old, ok=point.all_correct, done=True,
                                       duration=max(0.0, t - old.t), data=data)
        else:
            self.eval_index[ev.n] = len(self.blocks)
            self.blocks.append(Block("eval", seq, t, title=f"#{ev.n}", ok=point.all_correct,
                                     done=True, data=data))

    def _retract(self, ev: c.EvalRetract, seq: int, t: float) -> None:
        """Evaluations taken back later (`socratic retract`): their points (and transcript
        blocks) are marked, and what they were retracted on stops counting."""
        for rows in (*self.sets.values(), self.rows):   # rows is one of the sets' (or alone)
            for sid, row in rows.items():
                part = self.retractions.part(row.n) if row.n is not None else None
                if part != row.retracted:
                    rows[sid] = replace(row, retracted=part)
        for i, p in enumerate(self.evals):
            part = self.retractions.part(p.n)
            if part == p.retracted:
                continue
            self.evals[i] = point = replace(p, retracted=part)
            idx = self.eval_index.get(p.n)
            if idx is not None and idx < len(self.blocks) and self.blocks[idx].kind == "eval":
                b = self.blocks[idx]
                self.blocks[idx] = replace(b, data=tuple(
                    (k, point if k == "point" else v) for k, v in b.data))
        self.blocks.append(Block("retract", seq, t, title=ev.part, text=ev.why,
                                 data=(("evals", tuple(ev.evals)),)))

    def _trigger(self, ev: c.Trigger, seq: int, t: float) -> None:
        trig = cast(Trigger, self.last_trigger)   # the reading's, as the screens show it
        self.blocks.append(Block("trigger", seq, t, title=trig.kind, text=trig.reason,
                                 data=(("suggestions", trig.suggestions),)))

    def _question(self, ev: c.Question, seq: int, t: float) -> None:
        q = _question(ev)
        self.blocks.append(Block("question", seq, t, text=q.text, title=q.source,
                                 detail=q.trigger or "",
                                 data=(("bank_id", q.bank_id),)))

    def _agent_launch(self, ev: c.AgentLaunch, seq: int, t: float) -> None:
        """An outside agent started: once one ran unconfined, the campaign is unconfined."""
        if self.confined is not False:
            self.confined = ev.confined
            self.confined_how = ev.how

    def _ignore(self, ev: Event, seq: int, t: float) -> None:
        """Shown through the reading only (the status line's counters, GPU wait)."""

    def _problem(self, ev: c.Problem, seq: int, t: float) -> None:
        """Something went wrong without ending the campaign (a bank lookup, say): shown in
        the transcript, so a trigger without suggestions has its reason beside it."""
        self.blocks.append(Block("problem", seq, t, title=ev.where, text=ev.error))

    def _stophook(self, ev: c.StopHook, seq: int, t: float) -> None:
        rows = tuple((f.scenario, f.correct, num(f.speedup), num(f.goal)) for f in ev.failing)
        self.blocks.append(Block("stophook", seq, t, ok=ev.met, data=(("failing", rows),)))

    def _control(self, ev: c.Control, seq: int, t: float) -> None:
        self.blocks.append(Block("control", seq, t, title=ev.action or "control",
                                 text=ev.reason or ""))

    def _resume(self, ev: c.CampaignResume, seq: int, t: float) -> None:
        self.blocks.append(Block("control", seq, t, title="campaign resumed"))

    def _api_retry(self, ev: c.ApiRetry, seq: int, t: float) -> None:
        if ev.attempt < 1:  # older harnesses logged a failed bank lookup as attempt 0
            return
        self.retry = Retry(attempt=ev.attempt, error=ev.error, wait_s=num(ev.wait_s), t=t)

    def _end(self, ev: c.CampaignEnd, seq: int, t: float) -> None:
        # hooks_silent, agent_exited: why the end is no result, in words
        detail = end_detail(ev.reason, {**ev.extra, **vars(ev)})
        self.blocks.append(Block("end", seq, t, text=ev.reason, detail=detail))


_HANDLERS: dict[type, Any] = {
    c.CampaignStart: CampaignState._start,
    c.AgentText: CampaignState._text,
    c.ToolCall: CampaignState._tool_call,
    c.ToolResult: CampaignState._tool_result,
    c.EvalStart: CampaignState._eval_start,
    c.EvalScenario: CampaignState._eval_scenario,
    c.EvalEnd: CampaignState._eval_end,
    c.EvalWait: CampaignState._ignore,
    c.EvalRetract: CampaignState._retract,
    c.Trigger: CampaignState._trigger,
    c.Question: CampaignState._question,
    c.StopHook: CampaignState._stophook,
    c.Usage: CampaignState._ignore,
    c.Control: CampaignState._control,
    c.CampaignEnd: CampaignState._end,
    c.CampaignResume: CampaignState._resume,
    c.ApiRetry: CampaignState._api_retry,
    c.Problem: CampaignState._problem,
    c.AgentLaunch: CampaignState._agent_launch,
}

# events that show an API call succeeded (or the campaign moved on): retrying is over
_API_ANSWERED = (c.AgentText, c.ToolCall, c.Usage, c.CampaignStart, c.CampaignResume,
                 c.CampaignEnd)


def _event_time(ev: Event, fallback: float) -> float:
    t = num(ev.t)
    return t if t is not None else fallback


def _question(ev: c.Question) -> Question:
    """A logged question as the screens show it."""
    return Question(text=ev.text, bank_id=ev.bank_id or None, trigger=ev.trigger or None,
                    source=ev.source or "human", seq=ev.seq, t=_event_time(ev, 0.0))


def fold(events: Iterable[Event | Any]) -> CampaignState:
    return CampaignState().apply_all(events)


# --------------------------------------------------------------------------- timeline


class Timeline:
    """All events of a session with checkpoints, for replay: `state_at(i)` is the state
    after the first `i` events, built from the nearest checkpoint at or before `i`. Events
    are parsed once, here; what does not parse is kept as it came (the reducer counts it)."""

    def __init__(self, events: Iterable[Event | Any], every: int = CHECKPOINT_EVERY) -> None:
        self.events: list[Event | Any] = []
        self.every = every
        self._checkpoints: list[CampaignState] = [CampaignState()]  # [k] = state after k*every
        self._tail = CampaignState()   # state after all events so far
        self.times: list[float] = []
        self.extend(events)

    def __len__(self) -> int:
        return len(self.events)

    def extend(self, events: Iterable[Event | Any]) -> None:
        tail = self._tail
        last_t = self.times[-1] if self.times else 0.0
        for raw in events:
            try:
                ev = raw if isinstance(raw, Event) else (parse_event(raw) or raw)
            except ContractError:
                ev = raw
            self.events.append(ev)
            tail.apply(ev)
            t = num(ev.t) if isinstance(ev, Event) else None
            last_t = max(last_t, t) if t is not None else last_t
            self.times.append(last_t)
            if len(self.events) % self.every == 0:
                self._checkpoints.append(tail.copy())

    @property
    def final(self) -> CampaignState:
        """The state after every event (shared: copy before applying more)."""
        return self._tail

    def state_at(self, i: int) -> CampaignState:
        i = max(0, min(i, len(self.events)))
        if i == len(self.events):
            return self._tail.copy()
        k = i // self.every
        state = self._checkpoints[k].copy()
        for ev in self.events[k * self.every:i]:
            state.apply(ev)
        return state

    # positions of interest, for [ ] { } seeking: index *after* the event
    def positions(self, kind: str) -> list[int]:
        cache = getattr(self, "_pos_cache", None)
        if cache is None or cache[0] != len(self.events):
            ends, questions = [], []
            for i, ev in enumerate(self.events):
                if isinstance(ev, c.EvalEnd):
                    ends.append(i + 1)
                elif isinstance(ev, c.Question):
                    questions.append(i + 1)
            cache = (len(self.events), {"eval": ends, "question": questions})
            self._pos_cache = cache
        return cache[1][kind]

    def next_position(self, kind: str, i: int) -> int | None:
        for p in self.positions(kind):
            if p > i:
                return p
        return None

    def prev_position(self, kind: str, i: int) -> int | None:
        for p in reversed(self.positions(kind)):
            if p < i:
                return p
        return None
