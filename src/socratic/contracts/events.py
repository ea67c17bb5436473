"""Every event type of events.jsonl, and the readers that parse a log through them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from socratic.contracts.common import ContractError, Record, _expect
from socratic.contracts.evalresult import Comparison, ScenarioResult
from socratic.contracts.vocab import EndReason, RetractPart, Terms


@dataclass(kw_only=True)
class Event(Record):
    """Every event: `seq` increasing from 1, `t` seconds since campaign start, `ts` ISO
    wall-clock time, and `type` (the class's TYPE).

    A writer's call site builds the event without its stamp (`Control(action="pause")`:
    seq 0, no time); the log stamps it as it appends it (eventlog.EventLog.write). A log
    line must carry all three: parsing one without them fails as before."""

    TYPE: ClassVar[str] = ""
    _RESERVED: ClassVar[frozenset[str]] = frozenset({"type"})
    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"seq", "t", "ts"})
    _STAMP: ClassVar[tuple[str, ...]] = ("seq", "t", "ts")

    seq: int = 0
    t: float = 0.0
    ts: str = ""

    def to_dict(self) -> dict[str, Any]:
        body = super().to_dict()
        head = {"seq": body.pop("seq"), "t": body.pop("t"), "ts": body.pop("ts"),
                "type": self.TYPE}
        return {**head, **body}

    def body(self) -> dict[str, Any]:
        """The event's own fields as JSON, without the stamp and type the writer adds."""
        out = super().to_dict()
        for name in self._STAMP:
            out.pop(name, None)
        return out


@dataclass(kw_only=True)
class Goal(Record):
    """The goal predicate's terms: every scenario correct and at least `min_speedup`
    against `against`."""

    min_speedup: float
    against: Terms                          # "baseline" or a comparison name
    hidden: bool | None = None              # the speed rule holds on hidden draws too

    def describe(self) -> str:
        vs = "the baseline" if self.against == "baseline" else \
            f"`{self.against}` (its time over yours, timed in the same evaluation)"
        where = ("in every scenario, the hidden ones drawn in the evaluation included"
                 if self.hidden else "in every scenario")
        return (f"every scenario correct and, {where}, speedup >= "
                f"{self.min_speedup:g}x against {vs}")


@dataclass(kw_only=True)
class GoalScenarios(Record):
    set: str | None
    ids: list[str]


@dataclass(kw_only=True)
class HostGpu(Record):
    """The campaign host's GPU as nvidia-smi names it."""

    name: str
    driver: str | None = None
    cc: str | None = None
    count: int | None = None


@dataclass(kw_only=True)
class CampaignStart(Event):
    TYPE: ClassVar[str] = "campaign.start"
    task: str
    goal: Goal
    model: str
    scenarios: GoalScenarios
    gpu: HostGpu | None
    host: str
    versions: dict[str, str]
    session: str | None = None
    task_source: str | None = None
    task_hashes: dict[str, str] | None = None
    auto_questions: bool | None = None
    limits: dict[str, float | None] | None = None
    agent: str | None = None                # socratic attach: claude|codex|gemini
    recovered: bool | None = None           # written after the fact (the start was killed)
    # pinned (the verdict depends on them; a config.json that disagrees later is not obeyed)
    session_id: str | None = None           # names the session's chain key (socratic.chain)
    evaluator: list[str] | None = None      # the evaluator's argv prefix
    baseline_sha256: str | None = None      # the task's baseline source
    hooks: dict[str, str] | None = None     # sha256 of SESSION/agent/'s files (harness/attached/hookcheck.py)
    libraries: dict[str, str] | None = None  # the built baseline/reference (build.libraries)


@dataclass(kw_only=True)
class AgentText(Event):
    TYPE: ClassVar[str] = "agent.text"
    text: str


@dataclass(kw_only=True)
class ToolCall(Event):
    TYPE: ClassVar[str] = "tool.call"
    id: str
    name: str
    input: Any                              # what the model sent, as it sent it


@dataclass(kw_only=True)
class ToolResult(Event):
    TYPE: ClassVar[str] = "tool.result"
    id: str
    ok: bool
    output: str                             # truncated; the full text in `blob` when large
    name: str | None = None
    seconds: float | None = None
    blob: str | None = None


@dataclass(kw_only=True)
class EvalStart(Event):
    TYPE: ClassVar[str] = "eval.start"
    n: int
    candidate_sha: str
    set: str | None = None
    source: str | None = None               # agent | stophook | control | import
    total: int | None = None


# the fields of a scenario's row that eval.scenario logs, by the same names (the row's `id`
# is the event's `scenario`); the comparisons are timed after every scenario, so they come
# with eval.end (`scenario_vs`)
SCENARIO_LOGGED = ("correct", "err", "err_baseline", "baseline_ms", "candidate_ms", "speedup",
                   "tflops", "bound_fraction", "error")


@dataclass(kw_only=True)
class EvalScenario(Event):
    """One scenario's row as it finished (`scenario_fields` writes it, `row` reads it)."""

    TYPE: ClassVar[str] = "eval.scenario"
    n: int
    scenario: str
    correct: bool
    err: float | None = None
    err_baseline: float | None = None
    baseline_ms: float | None = None
    candidate_ms: float | None = None
    speedup: float | None = None
    tflops: float | None = None
    bound_fraction: float | None = None
    index: int | None = None
    total: int | None = None
    error: str | None = None
    comparisons: dict[str, Comparison] | None = None   # not written (see SCENARIO_LOGGED)

    def row(self) -> ScenarioResult:
        """The row this event logged, as the evaluator's record; what it does not log
        (params, failures, per-output errors) is left empty."""
        return ScenarioResult(id=self.scenario, params={}, failures=[], errors={}, err_ratio=None,
                              comparisons=self.comparisons,
                              **{name: getattr(self, name) for name in SCENARIO_LOGGED})


def scenario_fields(row: ScenarioResult) -> dict[str, Any]:
    """eval.scenario's fields for a row (the writer adds n, index and total)."""
    return {"scenario": row.id, **{name: getattr(row, name) for name in SCENARIO_LOGGED}}


def scenario_vs(rows: Iterable[ScenarioResult]) -> dict[str, dict[str, float]]:
    """Each row's speedup against each comparison timed with it: eval.end's `scenario_vs`."""
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        vs = {name: float(comp.speedup) for name, comp in (row.comparisons or {}).items()}
        if vs:
            out[row.id] = vs
    return out


def with_scenario_vs(row: ScenarioResult, vs: dict[str, float]) -> ScenarioResult:
    """The row with the comparisons eval.end's `scenario_vs` logged for it (speedups only)."""
    return replace(row, comparisons={name: Comparison(speedup=v) for name, v in vs.items()})


@dataclass(kw_only=True)
class EvalSummary(Record):
    """eval.end's summary: the evaluator's summary (when it produced a result) plus the
    harness's verdict on it."""

    all_correct: bool
    n: int | None = None
    n_correct: int | None = None
    failing: list[str] | None = None
    geomean_speedup: float | None = None
    min_speedup: float | None = None
    worst_scenario: str | None = None
    geomean_vs: dict[str, float] | None = None
    build_ok: bool | None = None
    bans_ok: bool | None = None
    exit_code: int | None = None
    error: str | None = None                # the evaluator produced no result: why


@dataclass(kw_only=True)
class Imported(Record):
    """Where an imported evaluation came from: `socratic eval --json` run elsewhere (the GPU
    node) and recorded with `socratic hook evaluate --import`."""

    file: str                               # the result file as given (absolute path)
    sha256: str                             # of its bytes: the same file is imported once
    host: str                               # the machine that imported it


@dataclass(kw_only=True)
class EvalEnd(Event):
    TYPE: ClassVar[str] = "eval.end"
    n: int
    summary: EvalSummary
    result: str                             # the saved result, relative to the session
    candidate_sha: str | None = None
    set: str | None = None
    source: str | None = None               # agent | stophook | control | import
    seconds: float | None = None
    gpu_wait_s: float | None = None         # of those seconds, waiting for the GPU's turn
    imported: Imported | None = None        # source "import": the result file it came from
    # per scenario, its speedup against each comparison timed ({id: {"fa3": 0.87, ...}}):
    # the comparisons are timed after the candidate, so eval.scenario rows lack them
    scenario_vs: dict[str, dict[str, float]] | None = None
    result_sha256: str | None = None        # of evals/NNNN.json's bytes as saved (checked on reuse)



@dataclass(kw_only=True)
class EvalRetract(Event):
    """Recorded evaluations taken back later (`socratic retract`), nothing rewritten: `all`
    their figures, or only their `comparisons` (speedups against FA3, cuDNN, ...: e.g. the
    comparison timer was found wrong); their correctness and speedup against the baseline
    then stand. Readers apply it through `Retractions`."""

    TYPE: ClassVar[str] = "eval.retract"
    evals: list[int]                        # evaluation numbers n (of recorded eval.end events)
    part: RetractPart                       # all | comparisons
    why: str


@dataclass(kw_only=True)
class EvalWait(Event):
    """The running evaluation waits for its GPU turn: another evaluation has the GPU."""

    TYPE: ClassVar[str] = "eval.wait"
    n: int
    gpu: str                                # the GPU's key
    holder: str                             # who has it (what, pid, host, since)


@dataclass(kw_only=True)
class Trigger(Event):
    TYPE: ClassVar[str] = "trigger"
    kind: str                               # start|plateau|declared_done|suspicious_gain|correctness_failure
    reason: str
    suggestions: list[str]                  # bank ids, best first


@dataclass(kw_only=True)
class Question(Event):
    TYPE: ClassVar[str] = "question"
    text: str
    source: str                             # human | auto
    bank_id: str | None = None
    trigger: str | None = None


@dataclass(kw_only=True)
class Failing(Record):
    scenario: str
    correct: bool
    speedup: float | None
    goal: float
    detail: str | None = None


@dataclass(kw_only=True)
class StopHook(Event):
    TYPE: ClassVar[str] = "stophook"
    met: bool
    failing: list[Failing]
    n: int | None = None
    reused: bool | None = None
    goal: Goal | None = None
    record: str | None = None               # the log's chain is broken: where, in one line


@dataclass(kw_only=True)
class Usage(Event):
    TYPE: ClassVar[str] = "usage"
    input_tokens: int
    output_tokens: int
    cache_read: int
    cache_write: int
    cost_usd: float
    model: str | None = None
    context_tokens: int | None = None


@dataclass(kw_only=True)
class Control(Event):
    TYPE: ClassVar[str] = "control"
    action: str                             # pause|resume|stop|evaluate|auto_on|auto_off|wait
    reason: str | None = None


@dataclass(kw_only=True)
class BestEvaluation(Record):
    n: int
    sha: str
    set: str | None
    path: str
    exit_code: int
    summary: EvalSummary


@dataclass(kw_only=True)
class CampaignEnd(Event):
    TYPE: ClassVar[str] = "campaign.end"
    reason: EndReason
    evaluations: int | None = None
    tool_calls: int | None = None
    turns: int | None = None
    cost_usd: float | None = None
    best: BestEvaluation | None = None
    n: int | None = None                    # goal_met: the evaluation that met it
    error: str | None = None                # api_error: what the API said; error: the file that failed
    stop_attempts: int | None = None        # stalled
    refusals: int | None = None             # attached: stalled before the agent's refusal cap
    gave_up: str | None = None              # by hand (stalled): the engineer's reason
    # headless (`attach --headless`): hooks_silent's evidence, agent_exited's exit code
    tools_reported: int | None = None       # the tools the agent's own output shows it ran
    tools_logged: int | None = None         # ... and those its hooks reported
    stop_consulted: int | None = None       # the stop hook's verdicts in that run
    exit_code: int | None = None


@dataclass(kw_only=True)
class CampaignResume(Event):
    TYPE: ClassVar[str] = "campaign.resume"
    evaluations: int
    tool_calls: int
    turns: int
    ctx: int
    messages: int
    skipped: int | None = None              # events of the log that did not parse
    reason: str | None = None               # attached: what resumed it (a prompt, ./evaluate)
    ended: EndReason | None = None          # attached: the end reason it resumed from
    # `run --resume` given a new goal or limits by the engineer: the pins from here on
    goal: Goal | None = None
    limits: dict[str, float | None] | None = None


@dataclass(kw_only=True)
class ApiRetry(Event):
    TYPE: ClassVar[str] = "api.retry"
    attempt: int
    error: str
    wait_s: float


@dataclass(kw_only=True)
class AgentLaunch(Event):
    """An outside agent started for an attached campaign: by socratic (`attach --launch`,
    `--headless`, `socratic agent`), in a Landlock domain or not (`how` says which, or why
    not); or found running outside socratic by its first hook (`mode` "outside", never
    confined)."""

    TYPE: ClassVar[str] = "agent.launch"
    agent: str
    confined: bool
    how: str                                # "landlock ABI 7", or why it is not confined
    mode: str                               # launch | headless | wrapper | outside
    agent_session: str | None = None        # the agent's own session id (outside)


@dataclass(kw_only=True)
class Problem(Event):
    """Something that went wrong without ending the campaign and is not the API's."""

    TYPE: ClassVar[str] = "problem"
    where: str                              # e.g. "bank.suggest"
    error: str


@dataclass(kw_only=True)
class ContextHandoff(Event):
    TYPE: ClassVar[str] = "context.handoff"
    ctx: int
    reason: str
    tokens: int


@dataclass(kw_only=True)
class TaskModified(Event):
    TYPE: ClassVar[str] = "task.modified"
    notes: list[str]


EVENT_CLASSES: dict[str, type[Event]] = {cls.TYPE: cls for cls in (
    CampaignStart, AgentText, ToolCall, ToolResult, EvalStart, EvalScenario, EvalEnd, EvalWait,
    EvalRetract, Trigger,
    Question, StopHook, Usage, Control, CampaignEnd, CampaignResume, ApiRetry, Problem,
    ContextHandoff, TaskModified, AgentLaunch)}


def parse_event(data: Any) -> Event | None:
    """The typed event, or None for an event type this version does not declare (readers
    ignore those). ContractError when it is not an object with a `type` string, or the
    type is known and the event does not match."""
    if not isinstance(data, dict):
        raise _expect("an event object", data, "event")
    type_ = data.get("type")
    if not isinstance(type_, str):
        raise _expect("a `type` string", type_, "event")
    cls = EVENT_CLASSES.get(type_)
    if cls is None:
        return None
    seq = data.get("seq")
    return cls.from_dict(data, f"{cls.TYPE} event" + (f" seq {seq}" if isinstance(seq, int)
                                                       and not isinstance(seq, bool) else ""))


def build_event(type_: str, **fields_: Any) -> Event:
    """A writer's event, checked: ContractError for an undeclared type or a field that
    does not match (a bug in the writer, caught by its tests)."""
    cls = EVENT_CLASSES.get(type_)
    if cls is None:
        raise ContractError(f"undeclared event type {type_!r}: declare it in socratic.contracts")
    return cls.from_dict(fields_, f"{type_} event")


@dataclass
class Parsed:
    """What a reader got from a list or file of events."""

    events: list[Event]
    skipped: int = 0        # malformed: not JSON, not an object, or a known type that does not match
    ignored: int = 0        # well-formed events of types this version does not know
    not_json: int = 0       # of the skipped: lines that are not JSON (e.g. torn by a crash)
    errors: list[str] = field(default_factory=list)  # the first few reasons for skipping


def parse_events(records: Iterable[Any], into: Parsed | None = None) -> Parsed:
    """Typed events of `records` (parsed JSON objects), in order; what does not parse is
    skipped and counted."""
    out = into if into is not None else Parsed([])
    for rec in records:
        try:
            ev = parse_event(rec)
        except ContractError as exc:
            out.skipped += 1
            if len(out.errors) < 10:
                out.errors.append(str(exc))
            continue
        if ev is None:
            out.ignored += 1
        else:
            out.events.append(ev)
    return out


def read_events(path: Path, offset: int = 0) -> tuple[Parsed, int]:
    """Typed events of an events.jsonl from byte `offset`, and the offset to continue from.
    Lines that are not JSON objects count as skipped; a last line without its newline is
    left for the next call (the writer has not finished it)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    out, used = parse_event_lines(data, str(path))
    return out, offset + used


def parse_event_lines(data: bytes, where: str) -> tuple[Parsed, int]:
    """`read_events` over the bytes of a log (a packed session's): the typed events of its
    complete lines, and how many bytes those lines take."""
    out = Parsed([])
    end = data.rfind(b"\n")
    if end < 0:
        return out, 0
    records = []
    for raw in data[: end + 1].splitlines():
        if not raw.strip():
            continue
        try:
            records.append(json.loads(raw))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            out.skipped += 1
            out.not_json += 1
            if len(out.errors) < 10:
                out.errors.append(f"{where}: not JSON: {exc}")
    parse_events(records, out)
    return out, end + 1
