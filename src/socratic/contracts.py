"""The contracts between the parts, declared once as dataclasses: the evaluation result
(`socratic.eval/1`, what `socratic eval --json` prints and the harness saves under
evals/) and every event type of events.jsonl.

Writers build records through these types (`EventLog.append` checks every event against
its class; the evaluator builds its result from them), readers parse through them
(`parse_event`, `parse_eval`, `parse_events`, `read_events`).

Rules, the same for every record:
- A field without a default is required; `X | None` without a default may be null but
  must be present. A field defaulting to None is optional: absent, null and missing mean
  the same, and `to_dict` leaves it out when it is None.
- Declared fields are type-checked (an int is accepted where a float is declared, a bool
  never counts as a number). Keys beyond the declaration are kept, unchecked, in `extra`
  and written back by `to_dict`: writers may add fields, readers ignore what they do not
  know.
- An event of an unknown type is not an error (`parse_event` returns None: readers
  ignore it); a known type that does not match its declaration raises ContractError, and
  the list/file readers skip it and count it.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar, Union

SCHEMA = "socratic.eval/1"


class ContractError(ValueError):
    """A record does not match its declaration; the message names the field."""


R = TypeVar("R", bound="Record")  # typing.Self needs Python 3.11
_Check = Callable[[Any, str], Any]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _sub(where: str, name: str) -> str:
    """The place of a field: `eval.end event seq 4: summary.all_correct`."""
    return f"{where}.{name}" if ": " in where else f"{where}: {name}"


def _expect(what: str, value: Any, where: str) -> ContractError:
    return ContractError(f"{where}: expected {what}, got {type(value).__name__} {_short(value)}")


def _number(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _expect("a number", value, where)
    return value


def _integer(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _expect("an integer", value, where)
    return value


def _scalar(kind: type, what: str) -> _Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, kind):
            raise _expect(what, value, where)
        return value
    return check


def _checker(tp: Any) -> _Check:
    """A function that checks a JSON value against the annotation `tp` and returns it (nested
    records become their dataclasses)."""
    if tp is Any:
        return lambda value, where: value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _checker(args[0]) if len(args) == 1 else None
        if inner is None or len(args) == len(typing.get_args(tp)):
            raise TypeError(f"unsupported annotation {tp!r}: only `X | None` unions")
        return lambda value, where: None if value is None else inner(value, where)
    if tp is bool:
        return _scalar(bool, "true or false")
    if tp is int:
        return _integer
    if tp is float:
        return _number
    if tp is str:
        return _scalar(str, "a string")
    if origin is list:
        item = _checker(typing.get_args(tp)[0])

        def check_list(value: Any, where: str) -> list[Any]:
            if not isinstance(value, (list, tuple)):
                raise _expect("a list", value, where)
            return [item(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return check_list
    if origin is dict:
        val = _checker(typing.get_args(tp)[1])

        def check_dict(value: Any, where: str) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise _expect("an object", value, where)
            out = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise _expect("string keys", k, where)
                out[k] = val(v, _sub(where, k))
            return out
        return check_dict
    if isinstance(tp, type) and issubclass(tp, Record):
        record = tp

        def check_record(value: Any, where: str) -> Record:
            if isinstance(value, record):  # built in code: checked like parsed JSON
                value = value.to_dict()
            return record.from_dict(value, where)
        return check_record
    raise TypeError(f"unsupported annotation {tp!r}")


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


@dataclass(kw_only=True)
class Record:
    """Base of every declared record: checked construction from JSON, and back."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # (name, checker, required, optional) per declared field, built once per class
    _SPEC: ClassVar[dict[type, list[tuple[str, _Check, bool, bool]]]] = {}
    _RESERVED: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def _spec(cls) -> list[tuple[str, _Check, bool, bool]]:
        spec = Record._SPEC.get(cls)
        if spec is None:
            hints = typing.get_type_hints(cls)
            spec = []
            for f in fields(cls):
                if f.name == "extra":
                    continue
                required = f.default is MISSING and f.default_factory is MISSING
                spec.append((f.name, _checker(hints[f.name]), required,
                             f.default is None))
            Record._SPEC[cls] = spec
        return spec

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        """Check `data` (a parsed JSON object) against the declaration; ContractError names
        the first field that does not match."""
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise _expect("an object", data, where)
        kwargs: dict[str, Any] = {}
        names = set()
        for name, check, required, _ in cls._spec():
            names.add(name)
            if name in data:
                kwargs[name] = check(data[name], _sub(where, name))
            elif required:
                raise ContractError(f"{_sub(where, name)}: missing")
        extra = {k: v for k, v in data.items() if k not in names and k not in cls._RESERVED}
        return cls(**kwargs, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: declared fields in declaration order (optional ones only when
        set), then the extra keys."""
        out: dict[str, Any] = {}
        for name, _, _, optional in self._spec():
            value = getattr(self, name)
            if value is None and optional:
                continue
            out[name] = _dump(value)
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    def check(self: R) -> R:
        """Re-check a record built in code (writers): the dataclass does not check types."""
        return type(self).from_dict(self.to_dict())


# --------------------------------------------------------------------------- socratic.eval/1


@dataclass(kw_only=True)
class Candidate(Record):
    path: str
    sha256: str


@dataclass(kw_only=True)
class GpuInfo(Record):
    """The device the evaluation ran on (the evaluator's view)."""

    name: str
    cc: str
    sms: int
    driver: int
    l2_bytes: int | None = None
    write_protection: str | None = None   # how the worker was kept from writing files
    isolation: dict[str, str] | None = None   # how the candidate's own process was confined


@dataclass(kw_only=True)
class KernelResources(Record):
    """One kernel's line of `ptxas -v`; shared_bytes is static shared memory."""

    kernel: str
    registers: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int
    stack_bytes: int


@dataclass(kw_only=True)
class Build(Record):
    ok: bool
    cached: bool
    seconds: float
    command: str
    log: str
    resources: list[KernelResources]
    error: str | None = None                # built, but not usable (e.g. no entry point)
    # sha256 of the task's built libraries this evaluation ran ({"baseline", "reference"}):
    # pinned in campaign.start, so a build cache that holds others is noticed
    libraries: dict[str, str] | None = None


@dataclass(kw_only=True)
class BanHit(Record):
    library: str
    layer: str
    where: str
    detail: str


@dataclass(kw_only=True)
class Bans(Record):
    ok: bool
    hits: list[BanHit]


@dataclass(kw_only=True)
class OutputErrors(Record):
    """Error statistics of one output buffer against the fp32 reference, with the
    tolerances of the pass rule."""

    max: float
    mean: float
    baseline_max: float
    baseline_mean: float
    tol_max: float
    tol_mean: float
    vs_baseline_max: float
    checked: int
    nonfinite: int
    inf_mismatch: int
    distribution: str | None = None         # the input distribution these figures come from


@dataclass(kw_only=True)
class Comparison(Record):
    """A comparison implementation's time on one scenario and the candidate's speedup
    against it (that time over the candidate's)."""

    ms: float | None = None                 # the evaluator writes it; eval.end logs speedups only
    speedup: float


@dataclass(kw_only=True)
class ScenarioResult(Record):
    """One scenario's row. The timing fields are there only for correct, timed scenarios."""

    id: str
    params: dict[str, Any]
    correct: bool
    failures: list[str]
    error: str | None                       # the evaluator's own failure (timeout, crash)
    err: float | None                       # max abs error vs fp32, worst output
    err_baseline: float | None
    err_ratio: float | None
    errors: dict[str, OutputErrors]
    baseline_ms: float | None = None
    candidate_ms: float | None = None
    speedup: float | None = None            # median of per-pair baseline/candidate ratios
    spread: float | None = None             # half inter-quartile range of those ratios
    pairs: int | None = None
    order_ratio: float | None = None
    tflops: float | None = None
    tbps: float | None = None
    bound_ms: float | None = None
    bound_fraction: float | None = None
    below_bound: bool | None = None
    copies: int | None = None               # replays back to back in one timed sample
    comparisons: dict[str, Comparison] | None = None

    def speedup_against(self, against: str) -> float | None:
        """The speedup the goal judges: against the baseline or a comparison."""
        if against == "baseline":
            return self.speedup
        comp = (self.comparisons or {}).get(against)
        return comp.speedup if comp else None


@dataclass(kw_only=True)
class ScenarioProgress(ScenarioResult):
    """A `--json` progress line on the evaluator's stderr: the row and its place."""

    event: str                              # "scenario"
    index: int                              # 1-based, in finishing order
    total: int


@dataclass(kw_only=True)
class Summary(Record):
    """Geomean and min cover correct scenarios only."""

    all_correct: bool
    n: int
    n_correct: int
    failing: list[str] | None = None
    geomean_speedup: float | None
    min_speedup: float | None
    worst_scenario: str | None
    geomean_vs: dict[str, float]


@dataclass(kw_only=True)
class HiddenSummary(Record):
    """The hidden scenarios of one evaluation (drawn from the task's [hidden] space, shown
    only once it ended): their pass rate, and their geomeans where they were timed."""

    n: int
    n_correct: int
    failing: list[str]
    geomean_speedup: float | None = None
    geomean_vs: dict[str, float] | None = None


@dataclass(kw_only=True)
class CoverageCell(Record):
    """One value (or bin [lo, hi) of a range) of one hidden field, over a space evaluation's
    draws: ratios are another's time over the candidate's (`baseline` or a comparison), over
    the cell's correct draws that have them."""

    field: str
    label: str
    n: int
    n_correct: int
    geomean: dict[str, float]
    min: dict[str, float]
    worst: str | None = None                # the draw lowest on the goal's ratio


@dataclass(kw_only=True)
class CoverageDraw(Record):
    """One drawn scenario: its hidden fields' values, the cell of each, its ratios."""

    id: str
    values: dict[str, Any]
    bins: dict[str, str]
    correct: bool
    ratios: dict[str, float]


@dataclass(kw_only=True)
class Coverage(Record):
    """A kernel over its task's space (`socratic eval --space N`): per hidden field, per
    value or bin, the geomean and min against the baseline and each comparison."""

    seed: int
    n: int
    n_correct: int
    against: list[str]                      # baseline, then the comparisons timed
    goal: str                               # the ratio `worst` sorts by (the task's goal's)
    fields: list[str]                       # the hidden fields, in the task's order
    axes: list[str]                         # those drawn on a log scale (lengths)
    grid: list[str] | None                  # two fields a picture crosses
    cells: list[CoverageCell]
    worst: list[str]                        # the worst draws' ids, worst first
    draws: list[CoverageDraw]


@dataclass(kw_only=True)
class EvalResult(Record):
    """The evaluator's result document (`socratic eval --json`, evals/NNNN.json)."""

    schema: str
    task: str
    set: str
    candidate: Candidate
    gpu: GpuInfo | None                     # None in --check-only runs
    build: Build
    bans: Bans
    scenarios: list[ScenarioResult]
    summary: Summary
    exit_code: int
    comparisons_unavailable: dict[str, str] | None = None
    gpu_lock: str | None = None             # the GPU's key (UUID, else index-N): see gpulock
    gpu_wait_s: float | None = None         # waited for the GPU's turn; never inside a time
    hidden: list[ScenarioResult] | None = None   # the hidden scenarios' rows (their ids say so)
    hidden_summary: HiddenSummary | None = None
    coverage: Coverage | None = None        # a space evaluation's (set `space:N@SEED`)

    def min_and_geomean(self, against: str) -> tuple[float | None, float | None]:
        """The worst and the geometric mean of the scenarios' speedups against the baseline
        or a comparison (`fa3`...): what a goal against it is judged on. (None, None) when a
        scenario lacks that speedup (not correct, or the comparison did not run on it)."""
        sps = [row.speedup_against(against) for row in self.scenarios]
        vals = [float(sp) for sp in sps if sp is not None and sp > 0]
        if not vals or len(vals) != len(sps):
            return None, None
        return min(vals), math.exp(sum(math.log(v) for v in vals) / len(vals))


def parse_eval(data: Any, where: str = "evaluation result") -> EvalResult:
    """A `socratic.eval/1` document; ContractError (naming the field) when it is not one."""
    if isinstance(data, dict) and data.get("schema") != SCHEMA:
        raise ContractError(f"{where}: schema is {_short(data.get('schema'))}, not {SCHEMA!r}")
    return EvalResult.from_dict(data, where)


def read_eval(path: Path) -> EvalResult:
    """An evaluation file; ContractError naming the file when it cannot be read or parsed."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContractError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ContractError(f"{path}: not JSON ({exc})") from None
    return parse_eval(data, str(path))


def parse_scenario(data: Any, where: str = "scenario row") -> ScenarioResult:
    """One scenario row of a result."""
    return ScenarioResult.from_dict(data, where)


# --------------------------------------------------------------------------- events


@dataclass(kw_only=True)
class Event(Record):
    """Every event: `seq` increasing from 1, `t` seconds since campaign start, `ts` ISO
    wall-clock time, and `type` (the class's TYPE)."""

    TYPE: ClassVar[str] = ""
    _RESERVED: ClassVar[frozenset[str]] = frozenset({"type"})

    seq: int
    t: float
    ts: str

    def to_dict(self) -> dict[str, Any]:
        body = super().to_dict()
        head = {"seq": body.pop("seq"), "t": body.pop("t"), "ts": body.pop("ts"),
                "type": self.TYPE}
        return {**head, **body}


@dataclass(kw_only=True)
class Goal(Record):
    """The goal predicate's terms: every scenario correct and at least `min_speedup`
    against `against`."""

    min_speedup: float
    against: str                            # "baseline" or a comparison name
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


RETRACT_PARTS = ("all", "comparisons")


@dataclass(kw_only=True)
class EvalRetract(Event):
    """Recorded evaluations taken back later (`socratic retract`), nothing rewritten: `all`
    their figures, or only their `comparisons` (speedups against FA3, cuDNN, ...: e.g. the
    comparison timer was found wrong); their correctness and speedup against the baseline
    then stand. Readers apply it through `Retractions`."""

    TYPE: ClassVar[str] = "eval.retract"
    evals: list[int]                        # evaluation numbers n (of recorded eval.end events)
    part: str                               # all | comparisons
    why: str


def retracted_on(part: str | None, against: str) -> bool:
    """Whether an evaluation retracted with `part` (None: not retracted) has lost its figures
    against `against` (`baseline` or a comparison's name)."""
    return part == "all" or (part == "comparisons" and against != "baseline")


@dataclass
class Retractions:
    """What a log's `eval.retract` events took back, by evaluation number: the one rule every
    reader (harness, report, TUI, bank trace) applies."""

    by_n: dict[int, EvalRetract] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Iterable[Any]) -> Retractions:
        out = cls()
        for e in events:
            if isinstance(e, EvalRetract):
                out.add(e)
        return out

    def add(self, e: EvalRetract) -> None:
        if e.part not in RETRACT_PARTS:
            return  # a part this version does not know: ignored, like an unknown event type
        for n in e.evals:
            if self.part(n) != "all":   # `all` outranks `comparisons`, whichever came first
                self.by_n[n] = e

    def part(self, n: int) -> str | None:
        e = self.by_n.get(n)
        return e.part if e is not None else None

    def why(self, n: int) -> str | None:
        e = self.by_n.get(n)
        return e.why if e is not None else None

    def hides(self, n: int, against: str) -> bool:
        """Whether evaluation n's figures against `against` are retracted."""
        return retracted_on(self.part(n), against)

    def copy(self) -> Retractions:
        return Retractions(dict(self.by_n))


def number_runs(ns: Iterable[int]) -> str:
    """Evaluation numbers as messages write them: [1, 2, 3, 5] -> '1-3, 5'."""
    runs: list[list[int]] = []
    for n in sorted(set(ns)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


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
    reason: str
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
    ended: str | None = None                # attached: the end reason it resumed from
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


# --------------------------------------------------------------------------- inbox.jsonl
# What the TUI and `socratic inject` append and the harness reads: one command per line.

CONTROL_ACTIONS = ("pause", "resume", "stop", "evaluate", "auto_on", "auto_off")


@dataclass(kw_only=True)
class AskCommand(Record):
    """`{"type": "question", "text", "bank_id"?, "trigger"?}`: a question for the agent."""

    TYPE: ClassVar[str] = "question"
    text: str
    bank_id: str | None = None
    trigger: str | None = None      # "declared_done": it answers a stall's stop attempts


@dataclass(kw_only=True)
class ControlCommand(Record):
    """`{"type": "control", "action"}`: one of CONTROL_ACTIONS."""

    TYPE: ClassVar[str] = "control"
    action: str


InboxCommand = AskCommand | ControlCommand


def command_line(command: InboxCommand) -> dict[str, Any]:
    """The command as its inbox line."""
    return {"type": command.TYPE, **command.to_dict()}


def parse_command(data: Any) -> InboxCommand | None:
    """One inbox line as the command the harness acts on; None for anything else (a line
    it skips). A question's text is what counts: a bank id or trigger of another type is
    dropped, not the question."""
    if not isinstance(data, dict):
        return None
    if data.get("type") == "question":
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            return None
        bank_id, trigger = data.get("bank_id"), data.get("trigger")
        return AskCommand(text=text, bank_id=bank_id if isinstance(bank_id, str) else None,
                          trigger=trigger if isinstance(trigger, str) else None)
    if data.get("type") == "control" and data.get("action") in CONTROL_ACTIONS:
        return ControlCommand(action=str(data["action"]))
    return None


# --------------------------------------------------------------------------- config.json

@dataclass(kw_only=True)
class SessionSettings(Record):
    """A session's config.json: what it was started with, read again by every resume,
    hook and step. `config` is the harness's Config as a dict; `attach`, an attached
    session's AttachSettings."""

    config: dict[str, Any] = field(default_factory=dict)
    task_source: str | None = None      # the task folder the frozen copy was taken from
    task_hashes: dict[str, str] = field(default_factory=dict)
    attach: dict[str, Any] | None = None
