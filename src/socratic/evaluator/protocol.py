"""The evaluator's process protocols as records, checked where they cross a process
boundary (socratic.contracts.Record: a missing or mistyped field is one ContractError line
naming it, never a KeyError).

- The judge's (evaluator.runner -> evaluator.worker): one `WorkerJob` on the worker's
  stdin; `WORKER_MESSAGES` on its private pipe, each line signed with the job's key
  (evaluator.worker says how). A worker is the evaluator's own code, but it is checked
  all the same: a malformed message is the evaluator's bug, reported in one line.
- The comparisons' (evaluator.comparisons -> evaluator.compare_worker): one
  `CompareJob` on stdin, `COMPARE_MESSAGES` as JSON lines on stdout.
- The candidate's process's (evaluator.candidate_process -> evaluator.launcher): one
  `LauncherJob` line, then `PlanRequest` lines; `LAUNCHER_REPLIES` back. The candidate's
  host code runs there, so a reply is untrusted: the judge reads only the reply it waits
  for (its type, and for a plan the request's nonce), and a reply of that kind that does
  not match its declaration fails the call in one line.

Small and stdlib-only on purpose: the worker imports it before its sandbox closes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from socratic.contracts import BanHit, ContractError, GpuInfo, Record, ScenarioResult


@dataclass(kw_only=True)
class Timing(Record):
    """How long the timed pairs of one scenario run (evaluator.worker's `_time`)."""

    min_pairs: int
    max_pairs: int
    target_ms: float
    max_seconds: float


@dataclass(kw_only=True)
class HiddenScenario(Record):
    """A hidden scenario the runner drew for this evaluation only: its id and values."""

    id: str
    values: dict[str, Any]


@dataclass(kw_only=True)
class Job(Record):
    """What an evaluation asks of its workers: the built libraries and how to judge."""

    task_dir: str
    baseline_lib: str
    candidate_lib: str
    reference_lib: str
    seeds: int | None                       # None: the task's
    timing: Timing
    time: bool                              # False: correctness only
    eval_seed: int
    hidden: list[HiddenScenario] = field(default_factory=list)
    warmup_seconds: float | None = None     # GPU spin before calibration (default 0.3 s)


@dataclass(kw_only=True)
class WorkerJob(Record):
    """One worker's stdin: the job, the scenarios still to run, and its private channel."""

    job: Job
    scenarios: list[str]
    channel_fd: int
    key: str                                # hex of the per-worker HMAC key


@dataclass(kw_only=True)
class Message(Record):
    """A message with its `type` (the class's TYPE) written first."""

    TYPE: ClassVar[str] = ""
    _RESERVED: ClassVar[frozenset[str]] = frozenset({"type"})

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, **super().to_dict()}


# --------------------------------------------------------------------------- the judge's


@dataclass(kw_only=True)
class Ready(Message):
    """The device and helper kernels are up."""

    TYPE: ClassVar[str] = "ready"
    gpu: GpuInfo


@dataclass(kw_only=True)
class Isolation(Message):
    """How the candidate's process confined itself (once it is ready)."""

    TYPE: ClassVar[str] = "isolation"
    isolation: dict[str, str]


@dataclass(kw_only=True)
class Start(Message):
    """Before each scenario: the parent's timeout clock starts."""

    TYPE: ClassVar[str] = "start"
    id: str


@dataclass(kw_only=True)
class Row(Message):
    """After each scenario: its row, and the banned libraries found mapped while it ran."""

    TYPE: ClassVar[str] = "row"
    row: ScenarioResult
    runtime_bans: list[BanHit] = field(default_factory=list)


@dataclass(kw_only=True)
class Restart(Message):
    """The candidate's process is gone: a new worker takes the remaining scenarios, unless
    it `hung` (its entry never returned): then the evaluation stops at that first hang."""

    TYPE: ClassVar[str] = "restart"
    hung: bool = False


FATAL_KINDS = ("cuda", "internal", "load")


@dataclass(kw_only=True)
class Fatal(Message):
    """The worker cannot go on (it exits 3): a CUDA fault (the context is gone), the
    evaluator's own error (`where` it happened), or a library that does not load (the
    same for every scenario)."""

    TYPE: ClassVar[str] = "fatal"
    kind: str                               # one of FATAL_KINDS
    id: str | None                          # the scenario it was on, if any
    error: str
    where: str | None = None                # internal: file:line in function

    def message(self) -> str:
        """One clean line: what failed and, for an evaluator error, where."""
        error = " ".join((self.error or "unknown error").split())
        if self.kind == "load":
            return error
        if self.kind == "cuda":
            return f"CUDA error: {error}"
        return f"evaluator error: {error}" + (f" (at {self.where})" if self.where else "")


WorkerMessage = Ready | Isolation | Start | Row | Restart | Fatal
WORKER_MESSAGES: dict[str, type[Message]] = {
    cls.TYPE: cls for cls in (Ready, Isolation, Start, Row, Restart, Fatal)}


# --------------------------------------------------------------------------- the comparisons'


@dataclass(kw_only=True)
class CompareJob(Record):
    """Sent once the candidate's timing is over: the task's adapter, the implementations
    and the timed scenarios."""

    adapter: str
    names: list[str]
    scenarios: list[HiddenScenario]         # id and values, as for hidden scenarios


@dataclass(kw_only=True)
class ComparisonTime(Message):
    """One implementation on one scenario: `ms`, the faster of `passes`."""

    TYPE: ClassVar[str] = "time"
    id: str
    name: str
    ms: float
    passes: list[float]


@dataclass(kw_only=True)
class Unavailable(Message):
    """An implementation that could not run at all (not installed, no GPU for torch)."""

    TYPE: ClassVar[str] = "unavailable"
    name: str
    reason: str


COMPARE_MESSAGES: dict[str, type[Message]] = {cls.TYPE: cls for cls in (ComparisonTime, Unavailable)}


def parse_message(data: Any, kinds: dict[str, type[Message]], where: str) -> Message:
    """The typed message of a parsed JSON line; ContractError (one line naming the field)
    when it is not one of `kinds`."""
    if not isinstance(data, dict):
        raise ContractError(f"{where}: expected a message object, got {type(data).__name__}")
    type_ = data.get("type")
    cls = kinds.get(type_) if isinstance(type_, str) else None
    if cls is None:
        raise ContractError(f"{where}: unknown message type {type_!r} "
                            f"(expected {', '.join(kinds)})")
    return cls.from_dict(data, f"{where} {type_!r}")


# --------------------------------------------------------------------------- the candidate's process's


@dataclass(kw_only=True)
class LauncherJob(Record):
    """The candidate's process's first line: what to load, and the judge's plan library."""

    library: str
    entry: str
    plan_lib: str


@dataclass(kw_only=True)
class PlanRequest(Record):
    """Capture one call: the parameter struct's bytes, and the buffers to mirror."""

    id: str                                 # a nonce: the reply names it
    params: str                             # hex
    mirror: list[list[int]]                 # [[address, bytes], ...]


@dataclass(kw_only=True)
class LauncherReady(Message):
    """Its CUDA context and confinement are up."""

    TYPE: ClassVar[str] = "ready"
    sandbox: dict[str, Any]                 # how it confined itself (sandbox.confine_launcher)


@dataclass(kw_only=True)
class LauncherFatal(Message):
    """The library does not load or lacks its entry, or there is no GPU."""

    TYPE: ClassVar[str] = "fatal"
    error: str


@dataclass(kw_only=True)
class PlanReply(Message):
    """What one call launched (`plan`, hex of evaluator.plan's format), or why it could not
    be captured (`error`); `rc` the entry's return value when it returned."""

    TYPE: ClassVar[str] = "plan"
    id: str
    rc: int | None
    plan: str | None = None
    error: str | None = None


LAUNCHER_REPLIES: dict[str, type[Message]] = {
    cls.TYPE: cls for cls in (LauncherReady, LauncherFatal, PlanReply)}
