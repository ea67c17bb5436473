"""One evaluation, end to end: build, static ban checks, then the GPU work in child
processes with a per-scenario timeout, then comparison implementations and the summary.

A worker that faults or hangs costs only the scenario it was on: the runner records that
scenario's failure, starts a fresh worker and goes on with the rest.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import queue
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from socratic.contracts import (
    SCHEMA,
    BanHit,
    Bans,
    Build,
    Candidate,
    ContractError,
    EvalResult,
    GpuInfo,
    HiddenSummary,
    ScenarioResult,
    Seconds,
    Summary,
)
from socratic.errors import InputError
from socratic.evaluator import bans
from socratic.evaluator.build import BuildResult, CommandNotFound, build, build_task_sources
from socratic.evaluator.entry import missing_entry
from socratic.evaluator.protocol import (
    WORKER_MESSAGES,
    Fatal,
    HiddenScenario,
    Isolation,
    Job,
    Message,
    Ready,
    Restart,
    Row,
    Start,
    Timing,
    WorkerJob,
    parse_message,
)
from socratic.gpuinfo import gpu_present
from socratic.gpulock import Holder, gpu_turn
from socratic.pyproc import clean_env, isolated_python, private_cwd
from socratic.taskfile import Scenario, Task, load_task

STARTUP_TIMEOUT_S = 180
TIMING = Timing(min_pairs=10, max_pairs=400, target_ms=150.0, max_seconds=1.5)

Progress = Callable[[ScenarioResult, int, int], None]
Waiting = Callable[[str, "Holder | None"], None]   # (GPU key, its holder): this evaluation waits


@dataclass
class EvalOptions:
    task_dir: Path
    candidate: Path | None = None
    scenarios: str | None = None
    check_only: bool = False
    seeds: int | None = None
    timeout_s: float = 60.0
    compare: bool = True
    time: bool = True
    hidden: int | None = None    # hidden scenarios to draw (None: the task's [hidden] count)
    arch: str | None = None      # nvcc arch (--arch); None: the GPU's, else the task's first


def gpu_key() -> str:
    """The key of the GPU the worker will use (CUDA device 0 as this process sees it): its
    UUID, so that one physical GPU has one key whatever CUDA_VISIBLE_DEVICES says."""
    from socratic.gpulock import format_uuid, visible_gpu_key

    try:
        from cuda.bindings import driver
        driver.cuInit(0)
        err, dev = driver.cuDeviceGet(0)
        get_uuid = getattr(driver, "cuDeviceGetUuid_v2", None) or driver.cuDeviceGetUuid
        err2, uuid = get_uuid(dev)
        if err == err2 == driver.CUresult.CUDA_SUCCESS:
            return format_uuid(bytes(uuid.bytes)[:16])
    except Exception:
        pass
    return visible_gpu_key()


def _command_line(task: Task) -> int | None:
    from socratic.taskfile import KeyLines

    try:
        return KeyLines(task.path.read_text(encoding="utf-8")).line("build.command")
    except OSError:
        return None


def _refuse_empty(candidate: Path) -> None:
    """An empty (or blank) source, said before building: its build "failed" as a library
    that exports no function, which sent the user looking for a missing entry point."""
    try:
        blank = not candidate.read_bytes().strip()
    except OSError:
        return   # the build names an unreadable file
    if blank:
        raise InputError(f"{candidate}: the candidate file is empty: nothing to build")


def evaluate(opts: EvalOptions, progress: Progress | None = None,
             waiting: Waiting | None = None) -> EvalResult:
    """One evaluation, built through the `socratic.eval/1` types (socratic.contracts)."""
    t_start = time.monotonic()
    task = load_task(opts.task_dir)
    candidate = Path(opts.candidate) if opts.candidate else task.baseline
    if candidate.is_dir():
        raise InputError(f"{candidate}: is a folder, not a candidate file (give the .cu file)")
    if not candidate.is_file():
        raise InputError(f"{candidate}: not a regular file (a device, a pipe or a socket), not a candidate"
                         if candidate.exists() else f"{candidate}: no such candidate file")
    _refuse_empty(candidate)
    label, scenarios = task.select(opts.scenarios)
    command = task.command_for(task.select_arch(opts.arch))   # a GPU the task cannot use: one line
    # the task's own sources first, --check-only too: a broken reference is the task's fault
    t_build = time.monotonic()
    try:
        base_build, ref_build = build_task_sources(task, command)
    except CommandNotFound as exc:   # the file (and line) that names the command
        raise InputError(f"{task.path}:{_command_line(task)}: {exc}") from None

    cand_build = build(candidate, command)
    seconds = Seconds(total=0.0, build=time.monotonic() - t_build, judge=0.0, comparisons=0.0)
    hits = bans.static_checks(cand_build, candidate.name) if cand_build.ok else \
        bans.check_source(candidate, candidate.name)
    result = EvalResult(
        schema=SCHEMA, task=task.name, set=label,
        candidate=Candidate(path=str(candidate), sha256=cand_build.sha256),
        gpu=None, build=_build_record(cand_build),
        bans=Bans(ok=not hits, hits=hits),
        scenarios=[], summary=summarize([], 0), exit_code=1, seconds=seconds,
    )
    result.build.libraries = {"baseline": _sha256(base_build.library),
                              "reference": _sha256(ref_build.library)}
    # a library that cannot be called is no build at all, with or without a GPU
    error = missing_entry(cand_build.library, task.entry) if cand_build.ok else None
    if error:
        result.build.ok, result.build.error = False, error
    if opts.check_only or not result.build.ok:
        result.exit_code = 0 if result.build.ok and result.bans.ok else 1
        return _finish(result, t_start)

    why = gpu_present()
    if why:
        raise InputError(f"a full evaluation needs an NVIDIA GPU: {why} (use --check-only for build and ban checks)")

    # hidden scenarios: drawn here, for this evaluation only, and kept in memory (the
    # worker gets them on its stdin); they are shown once the evaluation ends
    n_hidden = opts.hidden if opts.hidden is not None else (task.hidden.count if task.hidden else 0)
    hidden = task.draw_hidden(n_hidden, secrets.randbits(62))
    job = Job(
        task_dir=str(task.dir.resolve()), baseline_lib=str(base_build.library),
        candidate_lib=str(cand_build.library), reference_lib=str(ref_build.library),
        seeds=opts.seeds, timing=TIMING, time=opts.time, eval_seed=secrets.randbits(62),
        # a space evaluation's drawn scenarios travel as the hidden ones do (the worker's
        # task file does not list them)
        hidden=[HiddenScenario(id=h.id, values=h.values) for h in [*(s for s in scenarios if s.hidden), *hidden]],
    )
    comparisons = None
    if opts.compare and opts.time and task.comparisons:
        from socratic.evaluator.comparisons import ComparisonRun
        comparisons = ComparisonRun(task)
    runtime_hits: list[BanHit] = []
    # the GPU part takes its turn on this GPU (socratic.gpulock): nothing is timed while
    # another evaluation's work runs there, and the wait is reported, outside any time
    with gpu_turn(gpu_key(), f"socratic eval {task.name} (pid {os.getpid()})", waiting) as turn:
        try:
            t_judge = time.monotonic()
            rows, gpu = run_workers(job, scenarios + hidden, opts.timeout_s, progress, runtime_hits)
            t_compare = time.monotonic()
            seconds.judge = t_compare - t_judge
            if comparisons:
                result.comparisons_unavailable = comparisons.finish(scenarios + hidden, rows, opts.timeout_s)
                seconds.comparisons = time.monotonic() - t_compare
        finally:
            if comparisons:
                comparisons.cancel()
    result.gpu = gpu
    result.gpu_lock = turn.key
    result.gpu_wait_s = round(turn.wait_s, 3)
    hidden_ids = {h.id for h in hidden}
    result.scenarios = [r for r in rows if r.id not in hidden_ids]
    if hidden:
        result.hidden = [r for r in rows if r.id in hidden_ids]
        result.hidden_summary = summarize_hidden(result.hidden, len(hidden))
    if runtime_hits:
        seen = {(h.library, h.where) for h in result.bans.hits}
        for h in runtime_hits:
            if (h.library, h.where) not in seen:
                seen.add((h.library, h.where))
                result.bans.hits.append(h)
        result.bans.ok = False
    result.summary = summarize(result.scenarios, len(scenarios))
    hidden_ok = result.hidden_summary is None or result.hidden_summary.n_correct == result.hidden_summary.n
    result.exit_code = 0 if result.summary.all_correct and hidden_ok and result.bans.ok else 1
    return _finish(result, t_start)


def _finish(result: EvalResult, t_start: float) -> EvalResult:
    """The result checked, its seconds rounded and totalled (the GPU turn's wait is in none)."""
    if s := result.seconds:
        s.total = time.monotonic() - t_start - (result.gpu_wait_s or 0.0)
        s.total, s.build, s.judge, s.comparisons = (round(x, 3) for x in (s.total, s.build, s.judge, s.comparisons))
    return result.check()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build_record(b: BuildResult) -> Build:
    return Build(ok=b.ok, cached=b.cached, seconds=b.seconds, command=b.command, log=b.log[-20000:],
                 resources=list(b.resources))


def failed_row(sc: Scenario, message: str) -> ScenarioResult:
    return ScenarioResult(
        id=sc.id, params={k: v for k, v in sc.values.items() if isinstance(v, (int, float, str))},
        correct=False, failures=[message], error=message, err=None, err_baseline=None,
        err_ratio=None, errors={})


@dataclass
class Malformed:
    """A signed line of the worker's that is not one of its messages (the evaluator's bug)."""

    why: str                    # one line naming the field
    type: str | None = None     # the message's type, when it had one


@dataclass
class _Gone:
    """The worker's pipe closed: it exited or was killed."""


def run_workers(job: Job, scenarios: list[Scenario], timeout_s: float, progress: Progress | None,
                runtime_hits: list[BanHit]) -> tuple[list[ScenarioResult], GpuInfo | None]:
    rows: dict[str, ScenarioResult] = {}
    pending = list(scenarios)
    gpu: GpuInfo | None = None
    total = len(scenarios)

    started: tuple[str, float] | None = None   # the scenario the worker last started, and when

    def done(row: ScenarioResult) -> None:
        if started and started[0] == row.id:   # rows of scenarios never started have no seconds
            row.seconds = round(time.monotonic() - started[1], 3)
        rows[row.id] = row
        if progress:
            progress(row, len(rows), total)

    hung: str | None = None      # the scenario where the candidate hung: the rest is not run
    last_id: str | None = None
    while pending and not hung:
        worker = _Worker(job, [s.id for s in pending])
        try:
            current: Scenario | None = None
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while pending:
                msg = worker.next(deadline)
                if msg is None:       # timed out
                    if current is None:
                        raise InputError(f"the evaluation worker did not start within {STARTUP_TIMEOUT_S} s: {worker.stderr_tail()}")
                    done(failed_row(current, f"timed out after {timeout_s:g} s (hang or far too slow); worker killed"))
                    pending.remove(current)
                    hung = current.id
                    break
                if isinstance(msg, _Gone):
                    text = worker.stderr_tail() or f"exit code {worker.returncode()}"
                    if current is None:
                        raise InputError(f"the evaluation worker failed before its first scenario: {text}")
                    done(failed_row(current, f"evaluation process died: {text}"))
                    pending.remove(current)
                    break
                if isinstance(msg, Malformed):
                    if current is None:
                        raise InputError(f"the evaluation worker failed: evaluator error: {msg.why}")
                    done(failed_row(current, f"evaluator error: {msg.why}"))
                    pending.remove(current)
                    if msg.type == "row":   # one row the worker got wrong: it goes on
                        current = None
                        continue
                    break
                if isinstance(msg, Ready):
                    gpu = msg.gpu
                elif isinstance(msg, Isolation) and gpu is not None:
                    gpu.isolation = msg.isolation
                elif isinstance(msg, Restart):   # its candidate process is gone: a new worker goes on
                    hung = msg.hung and last_id or None
                    break
                elif isinstance(msg, Start):
                    current = next((s for s in pending if s.id == msg.id), None)
                    if current is None:
                        raise InputError(f"the evaluation worker failed: evaluator error: it started "
                                         f"{msg.id!r}, which is not one of its pending scenarios")
                    started = (current.id, time.monotonic())
                    deadline = started[1] + timeout_s
                elif isinstance(msg, Row):
                    if current is None or msg.row.id != current.id:
                        raise InputError(f"the evaluation worker failed: evaluator error: a row for "
                                         f"{msg.row.id!r} while running {current.id if current else 'none'!r}")
                    runtime_hits += msg.runtime_bans
                    last_id = msg.row.id
                    done(msg.row)
                    pending.remove(current)
                    current = None
                elif isinstance(msg, Fatal):
                    if current is None:
                        raise InputError(f"the evaluation worker failed: {msg.message()}")
                    # a library that does not load fails every scenario alike: no new worker
                    for sc in (list(pending) if msg.kind == "load" else [current]):
                        done(failed_row(sc, msg.message()))
                        pending.remove(sc)
                    break
        finally:
            worker.kill()
    # a hang costs a timeout and a new worker; an entry or kernel that hangs in one scenario
    # mostly hangs in all: the evaluation ends here, in one line, not after hours
    for sc in list(pending) if hung else []:
        done(failed_row(sc, f"not run: the candidate hung in scenario {hung} (an evaluation stops at its first hang)"))
    return [rows[s.id] for s in scenarios if s.id in rows], gpu


class _Worker:
    """A `python -m socratic.evaluator.worker` child in its own process group. Its verdicts come on
    a private pipe, each line signed with a per-worker key (see evaluator.worker)."""

    def __init__(self, job: Job, scenarios: list[str]):
        self.stderr = tempfile.TemporaryFile()
        self.key = secrets.token_bytes(32)
        read_fd, write_fd = os.pipe()
        # isolated (socratic.pyproc): nothing where the evaluation was started is imported
        env = {k: v for k, v in clean_env().items() if not k.startswith(("ANTHROPIC", "OPENAI", "GEMINI", "GOOGLE"))}
        self.proc = subprocess.Popen(
            isolated_python("-m", "socratic.evaluator.worker"), stdin=subprocess.PIPE, stdout=self.stderr,
            stderr=self.stderr, start_new_session=True, env=env, pass_fds=(write_fd,), cwd=private_cwd(),
        )
        os.close(write_fd)
        self.channel = os.fdopen(read_fd, "rb")
        self.lines: queue.Queue[Message | Malformed | _Gone] = queue.Queue()
        assert self.proc.stdin is not None  # a PIPE
        stdin = WorkerJob(job=job, scenarios=scenarios, channel_fd=write_fd, key=self.key.hex())
        self.proc.stdin.write(json.dumps(stdin.to_dict()).encode())
        self.proc.stdin.close()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.channel:
            try:
                outer = json.loads(raw)
                body = outer["body"].encode()
                if not hmac.compare_digest(outer["mac"], hmac.new(self.key, body, hashlib.sha256).hexdigest()):
                    continue
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue  # unsigned or malformed lines are not the worker's
            self.lines.put(read_message(body))
        self.proc.wait()
        self.lines.put(_Gone())

    def next(self, deadline: float) -> Message | Malformed | _Gone | None:
        try:
            return self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def returncode(self) -> int | None:
        return self.proc.poll()

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace").strip()
        return " | ".join(text.splitlines()[-3:])[-400:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()


def read_message(body: bytes) -> Message | Malformed:
    """A signed line's body as the worker's message; Malformed (its text one line naming the
    field, and the message's type when it had one) when it is not one."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return Malformed(f"the worker's message is not JSON ({exc})")
    try:
        return parse_message(data, WORKER_MESSAGES, "the worker's message")
    except ContractError as exc:
        type_ = data.get("type") if isinstance(data, dict) else None
        return Malformed(str(exc), type_ if isinstance(type_, str) else None)


def summarize(rows: list[ScenarioResult], expected: int) -> Summary:
    timed = [r for r in rows if r.speedup and r.correct]   # a failed row's speedup means nothing
    speedups = [r.speedup for r in timed if r.speedup]
    failing = [r.id for r in rows if not r.correct]
    worst = failing[0] if failing else (min(timed, key=lambda r: r.speedup or 0.0).id if timed else None)
    geomean_vs: dict[str, float] = {}
    names = {n for r in rows for n in (r.comparisons or {})}
    for name in sorted(names):
        vals = [c.speedup for r in rows if (c := (r.comparisons or {}).get(name)) and c.speedup]
        if vals:
            geomean_vs[name] = _geomean(vals)
    return Summary(
        all_correct=bool(rows) and len(rows) == expected and not failing,
        n=expected, n_correct=sum(1 for r in rows if r.correct), failing=failing,
        geomean_speedup=_geomean(speedups) if speedups else None,
        min_speedup=min(speedups) if speedups else None,
        worst_scenario=worst, geomean_vs=geomean_vs,
    )


def summarize_hidden(rows: list[ScenarioResult], expected: int) -> HiddenSummary:
    s = summarize(rows, expected)
    return HiddenSummary(n=expected, n_correct=s.n_correct, failing=s.failing or [],
                         geomean_speedup=s.geomean_speedup, geomean_vs=s.geomean_vs or None)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))
