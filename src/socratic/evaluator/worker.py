"""The GPU half of an evaluation, run in a child process (`python -m socratic.evaluator.worker`):
the judge. It never loads the candidate's library: the candidate's host code runs in its
own sandboxed process (evaluator.launcher, driven through evaluator.candidate_process),
which sends back what one call launched; the judge replays that plan from the candidate's
device code in its own context, and checks and times the replay (evaluator.plan). The
baseline is captured and replayed the same way.

Protocol (the records of evaluator.protocol): one `WorkerJob` (JSON) on stdin; JSON lines
on a private pipe (fd `channel_fd` of the job), each signed with the job's key, so that a
candidate printing to stdout, or writing to the pipe without the key, cannot forge a
verdict: `ready` once the device and helper kernels are up, `isolation` once the
candidate's process has confined itself, `start` before each scenario (the parent's
timeout clock), `row` after each (the contract's ScenarioResult and the run-time ban
hits), `restart` when the candidate's process is gone, `fatal` when the worker cannot go
on (a CUDA fault: the context is gone; it exits 3).
The parent (evaluator.runner) kills the worker when a scenario outlives its timeout and
starts a new one for the remaining scenarios.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import hmac
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from cuda.bindings import driver

from socratic.contracts import BanHit, ContractError, GpuInfo, OutputErrors, ScenarioResult
from socratic.evaluator import bans
from socratic.evaluator.apart import Apart, farthest, host_values, position
from socratic.evaluator.build import cache_root
from socratic.evaluator.candidate_context import CandidateContext, DevBuf
from socratic.evaluator.candidate_process import CandidateHang, CandidateProcess, CandidateProcessError
from socratic.evaluator.gpu import HASHES_PER_LAUNCH, Gpu, GpuError, check
from socratic.evaluator.limits import bound_ms
from socratic.evaluator.plan import PlanError, PlanLib, fatbin_images, library_path
from socratic.evaluator.plan import check as check_plan
from socratic.evaluator.plan import parse as parse_plan
from socratic.evaluator.protocol import Fatal, Isolation, Job, Message, Ready, Restart, Row, Start, WorkerJob
from socratic.evaluator.sandbox import WRITABLE, hide_memory, protect_files
from socratic.evaluator.timing import (
    CHUNK,
    OWN_MEMORY_LIMIT,
    WARMUP_PAIRS,
    copy_profile,
    marked_pairs,
    marks_agree,
    pairs_needed,
    settled,
    speed_verdict,
)
from socratic.expr import evaluate
from socratic.taskfile import BufferSpec, Distribution, Scenario, Task, load_task

if TYPE_CHECKING:   # cuda.core ships no stubs: to mypy these are Any, named for the reader
    from _ctypes import CFuncPtr

    from cuda.core import Buffer, Event

CTYPES = {"ptr": ctypes.c_void_p, "i32": ctypes.c_int32, "u32": ctypes.c_uint32,
          "i64": ctypes.c_int64, "u64": ctypes.c_uint64, "f32": ctypes.c_float}
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4, "u8": 1}
FOREIGN_WORK_S = 0.002        # device still busy this long after our stream is done: side work
AUDITED_PAIRS = 2             # timed pairs per scenario re-checked against the fp32 reference
SAMPLE_MS = 0.2               # a timed sample runs the plan back to back until it lasts this long
# Not yet the default (research/launch_order, variant flush): an L2 flush between the copies of
# a sample, outside their events, the sample's time the sum of its copies' (no copy can warm the
# next one's inputs, as one call never finds them warm); what it changes is to be measured first.
FLUSH_BETWEEN_COPIES = False
# Off (research/launch_order, variant swap): every other two timed pairs the kernels run on
# each other's buffers (the baseline on the candidate's allocations, the candidate on the
# judge's), so where a buffer lies favours neither side. Measured on an H100 (s20): it does
# not bring the microsecond rows within 1% (each role reads the same on either placement).
SWAP_PLACES = False
# Before each timed sample's lead-in, every page of the sample's buffers read once in the
# sample's own context, so that both roles start with their address translations cached
# whatever ran before (built, off until measured: research/launch_order, variant `warm`). The
# suspect of the microsecond rows' error (s20, H100): the baseline reads ~0.3 us a call faster
# right after the judge's own kernels have read its buffers (second in a pair) than after the
# other context's work (first), and the candidate, whose buffers nothing of its context reads
# before it, reads like a first baseline in both places.
WARM_PAGES = False
# Where the candidate's copy of a pair's inputs is made. "candidate": at the head of the
# candidate's sample, on its own stream, once the first digests are read back (the judge's
# stream done; no wait more): its inputs written in its own context just before it reads them,
# as the baseline's are in the judge's. "judge": on the judge's stream right after their fill
# (the candidate's context runs nothing but its sample). H100 (s28, "judge"): RMSNorm's r1k-c4k
# read 0.988-0.989 against itself in three runs, the candidate ~0.1 us a call slower in both
# orders, where it read 0.992-0.994 while the copies were the candidate context's own (s25-s26,
# with waits around them); "candidate" brings that back without the waits (to be confirmed by
# research/launch_order/probe.py, variants v0 and judgecopy). With SWAP_PLACES a mirror's
# baseline reads the candidate's copies, so they stay the judge's.
INPUTS_COPIED_IN = "candidate"
# What stands between the copies of a timed sample, so that each copy is timed on its own (the
# copy profile): an event record node, on an H100 ~2.5 us a copy (s23: r1-c4k read 6.4 us a
# call with them, 3.9 without). A one-thread kernel writing the global timer into a buffer at a
# random address instead was tried (s24): the driver never honoured a random hint, so its
# buffer lay where a candidate could predict it, and it went.
# Which timed samples carry marks: the copy profile needs them, but on an H100 (s23-s24,
# RMSNorm's baseline against itself) they move the roles apart: with event nodes between the
# copies the candidate read +0.25 to +0.47 us a call against the baseline, without them within
# +-0.02 us (0 of 14 rows outside [0.99, 1.01] in both runs, with the judge's buffers from
# cuMemAlloc). So the marked samples are blocks of pairs of their own, chosen at random, a
# quarter of all, added to the unmarked ones: the copy profile reads the marked, the speed
# verdict the unmarked, and the two must agree (timing.marks_agree: a kernel that works ahead
# only where its copies are not timed apart reads faster there than the baseline does).
MARKED_SHARE = 0.25
MIN_MARKED_BLOCKS = 2         # ... at least this many blocks (of two pairs, four with mirrors)
MAX_COPIES = 64               # ... but at most this many times
CAPTURE_TIMEOUT_S = 30.0      # one call of the candidate's entry, in its own process
QUIET_RATIO = 1.5             # the work probe this much slower than alone: the GPU is shared
QUIET_WAIT_S = 3.0            # ... for this long: the candidate's process left work running
# statistics that must not change once the stream is done (not the sums: their atomic
# order varies from run to run)
STABLE_STATS = ("checked", "c_bad", "b_bad", "inf_mismatch", "c_max", "b_max", "cb_max")


_channel: Any = None   # the HMAC'd record channel, opened in main()
_key = b""


def emit(message: Message) -> None:
    body = json.dumps(message.to_dict(), separators=(",", ":"))
    mac = hmac.new(_key, body.encode(), hashlib.sha256).hexdigest()
    _channel.write(json.dumps({"body": body, "mac": mac}) + "\n")
    _channel.flush()


def params_type(task: Task) -> type[ctypes.Structure]:
    return type("Params", (ctypes.Structure,), {"_fields_": [(f.name, CTYPES[f.type]) for f in task.fields]})


class BaselinePlanError(GpuError):
    """The baseline's call cannot be captured and replayed: the task's problem, fatal."""


class LoadError(Exception):
    """A library that does not load or lacks its entry point: the same for every scenario."""


def load_entry(path: str, name: str, reference: bool = False, what: str = "candidate") -> CFuncPtr:
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    except OSError as exc:   # "<path>: undefined symbol: X": the path is the build cache's, not news
        raise LoadError(f"the {what} library does not load: {str(exc).replace(path + ': ', '')}") from None
    try:
        fn: CFuncPtr = getattr(lib, name)
    except AttributeError:
        raise LoadError(f"the {what} library does not export {name}") from None
    fn.restype = ctypes.c_int
    fn.argtypes = ([ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p] if reference
                   else [ctypes.c_void_p, ctypes.c_void_p])
    return fn


@dataclass
class ErrorStats:
    """Comparison statistics of one output, accumulated over the seeds (the row's
    OutputErrors are made of them)."""
    c_max: float = 0.0
    b_max: float = 0.0
    cb_max: float = 0.0
    c_sum: float = 0.0
    b_sum: float = 0.0
    checked: int = 0
    c_bad: int = 0
    b_bad: int = 0
    inf_mismatch: int = 0
    expected: int = 0

    def add(self, s: np.void, expected: int) -> None:
        self.c_max, self.b_max = max(self.c_max, float(s["c_max"])), max(self.b_max, float(s["b_max"]))
        self.cb_max = max(self.cb_max, float(s["cb_max"]))
        self.c_sum += float(s["c_sum"])
        self.b_sum += float(s["b_sum"])
        self.checked += int(s["checked"])
        self.c_bad += int(s["c_bad"])
        self.b_bad += int(s["b_bad"])
        self.inf_mismatch += int(s["inf_mismatch"])
        self.expected += expected


def spot_tolerance(e: ErrorStats, floor: float) -> float:
    """How far a timed copy's output may lie from the baseline's same copy: twice the pass rule's
    bound plus the baseline's own error (both kernels within the rule of the reference)."""
    return 2 * (max(2 * e.b_max, floor) + e.b_max)


def _baseline_bound(same_inputs: ErrorStats, correctness: ErrorStats) -> ErrorStats:
    """The baseline errors an audited output is held to: the baseline's on the audit's own
    inputs, and never less than on the correctness calls' inputs (a fresh input set can
    round one ulp worse for both kernels alike)."""
    def mean(e: ErrorStats) -> float:
        return e.b_sum / max(1, e.checked - e.inf_mismatch)
    n = max(1, same_inputs.checked - same_inputs.inf_mismatch)
    return ErrorStats(b_max=max(same_inputs.b_max, correctness.b_max),
                        b_sum=max(mean(same_inputs), mean(correctness)) * n, checked=n)


def timed_sets(set_dists: list[str]) -> list[int]:
    """The input sets timed runs use: those of the task's first distribution (its inputs as
    the buffers declare them), so that times mean what comparisons timed on such inputs
    mean; the other distributions are for correctness (data-dependent speed is real: a
    kernel that skips rescaling runs faster on large logits)."""
    return [s for s, d in enumerate(set_dists) if d == set_dists[0]]


def lasting_lag(measure: Callable[[], float], again: Callable[[], None]) -> float:
    """The device's lag once our stream is done, as `measure` reads it (host time around a
    device-wide sync), counted only when it is seen twice: one lag alone may be the host's
    (a GC pause, the scheduler; session 9 saw 3.7 ms on a kernel whose twin passed twice),
    so the same work is run `again` and measured again. Work left outside the stream lags
    every time."""
    lag = measure()
    if lag <= FOREIGN_WORK_S:
        return lag
    again()
    return min(lag, measure())


def timing_slots(set_dists: list[str], copies: int) -> list[int]:
    """The correctness sets a timed sample's `copies` reuse (those of the first distribution,
    in order); the copies past them get input sets of their own. Every copy of a sample has
    its own inputs, outputs and workspace, so that no copy can profit from what another
    left: each is a full call, checked on its own."""
    return timed_sets(set_dists)[:copies]


@dataclass
class Slot:
    """One input set with each kernel's buffers for it: the inputs and the baseline's
    outputs and workspace in the judge's context; the candidate's copy of the inputs, its
    outputs and workspace in its own context (evaluator.candidate_context); `view` holds
    the candidate's outputs copied back for the judge to read. A mirror (SWAP_PLACES) is
    another slot's buffers with the two kernels' places swapped."""
    dist: Distribution
    inputs: dict[str, Any]
    base_out: dict[str, Any]
    base_ws: dict[str, Any]
    cand_in: dict[str, DevBuf]
    cand_out: dict[str, DevBuf]
    cand_ws: dict[str, DevBuf]
    view: dict[str, Any]
    base_params: ctypes.Structure | None = None
    cand_params: ctypes.Structure | None = None
    ref_params: ctypes.Structure | None = None
    graphs: dict[str, int] = field(default_factory=dict)   # "base" / "cand" -> captured replay
    rcs: dict[str, int] = field(default_factory=dict)      # the entry's return value
    mirrored: bool = False   # another slot's buffers, the kernels' places swapped (SWAP_PLACES)


@dataclass
class ReferenceCheck:
    """What it takes to check the candidate's outputs against the fp32 reference again,
    on any slot's inputs: used for correctness calls and for audited timed copies."""
    selected: Any                    # device array of the unit indices checked: filled only for a run
    indices: np.ndarray              # ... which the judge keeps here (the candidate must not learn them)
    outputs: dict[str, Any]          # fp32 reference outputs
    per_unit: dict[str, int]

    @property
    def n_selected(self) -> int:
        return len(self.indices)

    def run(self, fn: CFuncPtr, slot: Slot, gpu: Gpu, stream: ctypes.c_void_p) -> None:
        for buf in self.outputs.values():
            gpu.poison(buf, "f32")
        self._scrub(slot, gpu)   # what the candidate may have left there is gone
        assert slot.ref_params is not None
        gpu.from_host(self.selected, self.indices)
        rc = fn(ctypes.byref(slot.ref_params), ctypes.c_void_p(int(self.selected.handle)), self.n_selected, stream)
        gpu.poison(self.selected, "f32")   # in stream order, after the reference's kernels
        if rc != 0:
            raise GpuError(f"the fp32 reference returned {rc}")

    def forget(self, slot: Slot, gpu: Gpu) -> None:
        """Once its results are compared: the reference's outputs (finite exactly at the
        checked units) and the workspace it used, gone before the candidate runs again."""
        for buf in self.outputs.values():
            gpu.poison(buf, "f32")
        self._scrub(slot, gpu)

    @staticmethod
    def _scrub(slot: Slot, gpu: Gpu) -> None:
        """The workspace the reference runs in (the baseline's), scrambled."""
        for buf in slot.base_ws.values():
            gpu.scramble(buf, 0x5EED)


@dataclass
class _Sample:
    """One scenario's timed sample and what its pairs accumulate: `slots` are its copies
    (each its own inputs, outputs, workspace), the stats buffers are the judge's."""
    slots: list[Slot]
    v: dict[str, Any]
    ref: ReferenceCheck
    spot: dict[str, Buffer]        # every copy against the baseline's same copy
    complete: dict[str, Buffer]    # every copy written when its stream reached the end event
    audit: dict[str, Buffer]       # the audited copies against the fp32 reference
    audit_pairs: dict[int, int] = field(default_factory=dict)   # pair -> the copy audited
    audited: int = 0
    written: list[str] = field(default_factory=list)   # the judge's buffers a candidate's sample wrote
    copy_ms: dict[str, dict[int, list[float]]] = field(   # role -> pair -> each copy's time
        default_factory=lambda: {"base": {}, "cand": {}})
    mirrors: list[Slot] = field(default_factory=list)   # `slots` with the kernels' places swapped
    tolerance: dict[str, float] = field(default_factory=dict)   # output -> the spot check's bound
    apart: dict[str, Apart] = field(default_factory=dict)   # output -> where it first passed it
    warmup: bool = True   # the pairs so far are warm-up ones (numbered from 0 again after)
    marked: set[int] = field(default_factory=set)   # timed pairs with marks between their copies
    all_marked: bool = False   # every pair, warm-up ones too (FLUSH_BETWEEN_COPIES: its flushes need them)

    def marks(self, i: int) -> bool:
        return self.all_marked or i in self.marked

    def placed(self, i: int) -> list[Slot]:
        """The slots pair `i` runs on: the mirrors every other two pairs (both orders meet
        both placements), when there are any."""
        return self.mirrors if self.mirrors and (i // 2) % 2 else self.slots


class WorkerRun:
    def __init__(self, job: Job):
        self.job = job
        self.task = load_task(job.task_dir)
        self.gpu = Gpu()
        self.Params = params_type(self.task)
        self.base_fn = load_entry(job.baseline_lib, self.task.entry, what="baseline")
        self.ref_fn = load_entry(job.reference_lib, self.task.reference.entry, reference=True, what="reference")
        self.plan = PlanLib(library_path())   # built before the sandbox closes the cache
        self.plan.init(0)
        self.base_entry = int(ctypes.cast(self.base_fn, ctypes.c_void_p).value or 0)
        self.base_modules = [self.plan.load_image(img) for img in fatbin_images(Path(job.baseline_lib))]
        self.cand_modules: list[int] | None = None   # the candidate's device code, loaded here
        self.restart = False   # the candidate's process is gone: a new worker takes the rest
        self.hung = False      # ... because its entry hung: the evaluation stops there
        self.quiet_ms = 0.0    # the work probe alone (calibrate)
        self.rng = np.random.default_rng(job.eval_seed)
        self.events: list[Event] = []
        self.settings = self.gpu.settings()   # what the candidate must leave as it found it
        # the candidate's replays run in a CUDA context of their own: its kernels cannot
        # reach the baseline's, the reference's or the judge's memory (candidate_context)
        self.cctx = CandidateContext(int(check(driver.cuCtxGetCurrent())), l2_bytes=self.gpu.info.l2_bytes)
        self.device_isolation = "own CUDA context"
        self.slots_in_use: list[Slot] = []
        self.scenario_slots: list[Slot] = []
        self.chains: dict[tuple[str, tuple[int, ...], bool], int] = {}
        # event nodes around each copy of a timed sample, per role, in its context (_time)
        self.copy_events: dict[str, list[driver.CUevent]] = {}
        self._called_again = False   # the correctness call of the slot in hand ran twice
        # the candidate's process starts now: CUDA does not initialise under the judge's
        # file sandbox, which children inherit; it confines itself once its context is up
        self.cand: CandidateProcess | None = CandidateProcess(
            Path(job.candidate_lib), self.task.entry, library_path())
        # from here on this process writes nowhere but /dev and temp dirs: nothing that
        # runs in it can poison the build cache or the helper kernels for later evaluations
        cache = str(cache_root().parent.resolve())
        self.sandbox = protect_files(tuple(d for d in WRITABLE if not cache.startswith(d.rstrip("/") + "/")))
        hide_memory()   # the candidate's process, same user, cannot read the judge's memory
        self.own_memory = 0           # bytes of device memory the candidate took for itself

    # setup ---------------------------------------------------------------------
    def _bytes(self, b: BufferSpec, v: dict[str, Any]) -> int:
        if b.role == "workspace":
            return int(evaluate(b.bytes, v))
        return self._count(b, v) * ELEMENT_BYTES[b.dtype]

    @staticmethod
    def _count(b: BufferSpec, v: dict[str, Any]) -> int:
        return math.prod(int(evaluate(s, v)) for s in b.shape) if b.shape else 0

    def _params(self, v: dict[str, Any], inputs: Mapping[str, Buffer | DevBuf], outputs: Mapping[str, Buffer | DevBuf],
                workspace: Mapping[str, Buffer | DevBuf]) -> ctypes.Structure:
        p = self.Params()
        for f in self.task.fields:
            if f.type == "ptr":
                # a ptr field's `buffer` is set (str | None for all fields: the loader checks ptr ones)
                buf = inputs.get(f.buffer) or outputs.get(f.buffer) or workspace.get(f.buffer)  # type: ignore[arg-type]
                assert buf is not None  # the task loader checked that every ptr names a buffer
                setattr(p, f.name, int(buf.handle))
            else:
                value = evaluate(f.value, v)
                setattr(p, f.name, float(value) if f.type == "f32" else int(value))
        return p

    # one scenario ---------------------------------------------------------------
    def _slot(self, v: dict[str, Any], dist: Distribution, ref_out: dict[str, Buffer]) -> Slot:
        """Fresh buffers for one input set: the judge's and, in its own context, the candidate's."""
        gpu, cctx, task = self.gpu, self.cctx, self.task
        ws_specs = [b for b in task.buffers if b.role == "workspace"]
        slot = Slot(
            dist=dist,
            inputs={b.name: gpu.alloc(self._bytes(b, v)) for b in task.inputs},
            base_out={b.name: gpu.alloc(self._bytes(b, v)) for b in task.outputs},
            base_ws={b.name: gpu.alloc(self._bytes(b, v)) for b in ws_specs},
            cand_in={b.name: cctx.alloc(self._bytes(b, v)) for b in task.inputs},
            cand_out={b.name: cctx.alloc(self._bytes(b, v)) for b in task.outputs},
            cand_ws={b.name: cctx.alloc(self._bytes(b, v)) for b in ws_specs},
            view={b.name: gpu.alloc(self._bytes(b, v)) for b in task.outputs})
        self.scenario_slots.append(slot)
        slot.base_params = self._params(v, slot.inputs, slot.base_out, slot.base_ws)
        slot.cand_params = self._params(v, slot.cand_in, slot.cand_out, slot.cand_ws)
        slot.ref_params = self._params(v, slot.inputs, ref_out, slot.base_ws)
        return slot

    def _mirror(self, slot: Slot, v: dict[str, Any], ref_out: dict[str, Buffer]) -> Slot:
        """`slot`'s buffers with the kernels' places swapped (SWAP_PLACES): the baseline's
        inputs, outputs and workspace are the candidate's allocations, the candidate's the
        judge's; the same input values (both copies are filled alike every pair), the
        judge's view of the candidate's outputs its own."""
        gpu = self.gpu

        def judge(d: DevBuf) -> Buffer:
            return gpu.foreign(d.handle, d.nbytes)

        def cand(b: Buffer) -> DevBuf:
            return DevBuf(int(b.handle), int(b.size))

        m = Slot(dist=slot.dist,
                 inputs={n: judge(d) for n, d in slot.cand_in.items()},
                 base_out={n: judge(d) for n, d in slot.cand_out.items()},
                 base_ws={n: judge(d) for n, d in slot.cand_ws.items()},
                 cand_in={n: cand(b) for n, b in slot.inputs.items()},
                 cand_out={n: cand(b) for n, b in slot.base_out.items()},
                 cand_ws={n: cand(b) for n, b in slot.base_ws.items()},
                 view=slot.view, mirrored=True)
        self.scenario_slots.append(m)   # its replays released with the scenario's
        m.base_params = self._params(v, m.inputs, m.base_out, m.base_ws)
        m.cand_params = self._params(v, m.cand_in, m.cand_out, m.cand_ws)
        m.ref_params = self._params(v, m.inputs, ref_out, m.base_ws)
        return m

    def _mirrors(self, slots: list[Slot], v: dict[str, Any], ref: ReferenceCheck) -> list[Slot]:
        """Mirrors of `slots`, both kernels captured on them; none where either capture
        fails there (the scenario is then timed without the swap, as it was before)."""
        mirrors = [self._mirror(slot, v, ref.outputs) for slot in slots]
        try:
            failures = self._prepare(mirrors, v)
        except BaselinePlanError as exc:   # the baseline's plan on the other context's memory
            failures = [str(exc)]
        return [] if failures else mirrors

    def run(self, sc: Scenario) -> Row:
        task, gpu, v = self.task, self.gpu, sc.values
        # one input set per seed, and at least one per declared input distribution
        n_sets = max(1, int(self.job.seeds or task.seeds), len(task.distributions))
        self.set_dists = [task.distributions[s % len(task.distributions)] for s in range(n_sets)]
        ref_out = {b.name: gpu.alloc(self._count(b, v) * 4) for b in task.outputs}
        self.echo = {b.name: gpu.alloc(self._bytes(b, v)) for b in task.inputs}   # the candidate's inputs, read back
        self.chains = {}   # (who, its slots, marked) -> exec
        self.scenario_slots = []
        slots = [self._slot(v, d, ref_out) for d in self.set_dists]
        self.slots_in_use = slots

        units = int(evaluate(task.reference.units, v))
        unit_flops = max(1.0, float(evaluate(task.reference.unit_flops, v)))
        n_sel = min(units, max(1, int(task.reference.max_flops // unit_flops)))
        selected = np.sort(self.rng.choice(units, size=n_sel, replace=False)).astype(np.int32)
        sel_buf = gpu.alloc(selected.nbytes)
        gpu.poison(sel_buf, "f32")
        per_unit = {b.name: int(evaluate(b.per_unit, v)) for b in task.outputs}

        ref = ReferenceCheck(sel_buf, selected, ref_out, per_unit)
        try:
            return self._run(sc, slots, ref)
        finally:
            self._release()

    def _run(self, sc: Scenario, slots: list[Slot], ref: ReferenceCheck) -> Row:
        task, gpu, v = self.task, self.gpu, sc.values
        n_sel, per_unit = ref.n_selected, ref.per_unit
        row = ScenarioResult(
            id=sc.id, params={k: v[k] for k in v if isinstance(v[k], (int, float, str))}, correct=False,
            failures=[], error=None, err=None, err_baseline=None, err_ratio=None, errors={})
        found: list[BanHit] = []   # banned libraries mapped while it ran
        failures = self._prepare(slots, v)
        if failures:   # nothing to replay: the scenario fails on the plan's rule
            failures += self._runtime_bans(found)
            row.failures = sorted(set(failures), key=failures.index)
            return Row(row=row, runtime_bans=found)
        errors = {d.name: {b.name: ErrorStats() for b in task.outputs} for d in task.distributions}

        for s, slot in enumerate(slots):
            self._fill_inputs(slot.inputs, v, slot.dist)
            before = {name: gpu.hash(buf, self._bytes(self._spec(name), v)) for name, buf in slot.inputs.items()}
            self._copy_inputs([slot], v)
            rc = self._correctness_call(s, slot, ref, v, failures)
            if rc != 0:
                failures.append(f"candidate returned error code {rc}")
            # statistics as soon as the candidate's stream is done, then again once the whole device is
            first = self._stats_now(slot, ref, v)
            judged = self._judge_state([slot], ref, v)   # the baseline's and reference's results now there
            held = gpu.hashes([(buf, n) for _, buf, n in judged])
            self._called_again = False
            lag = lasting_lag(self._device_lag, partial(self._call_again, s, slot, ref, v, first, failures))
            if lag > FOREIGN_WORK_S:
                failures.append(f"the device stayed busy {lag * 1e3:.1f} ms after the given stream finished: "
                                "work outside the stream")
            later = self._stats_now(slot, ref, v)
            if not self._called_again:   # (a call again computed them anew: other digests)
                failures += self._untouched(judged, held)   # work left outside its stream, too
            ref.forget(slot, gpu)
            for name in first:
                if any(first[name][k] != later[name][k] for k in STABLE_STATS):
                    failures.append(f"{name} changed after the given stream finished: work outside the stream")
                errors[slot.dist.name][name].add(first[name], n_sel * per_unit[name])
            changed = {k_: v_ for k_, v_ in gpu.settings().items() if self.settings.get(k_) != v_}
            if changed:
                failures.append("candidate changed device settings: " + ", ".join(f"{k_}={v_}" for k_, v_ in changed.items()))
            for name, buf in slot.cand_in.items():   # the candidate's copy of the inputs, read back
                nbytes = self._bytes(self._spec(name), v)
                with self.cctx.current():
                    self.cctx.copy_out(int(self.echo[name].handle), buf, nbytes)
                    self.cctx.sync()
                if gpu.hash(self.echo[name], nbytes) != before[name]:
                    failures.append(f"input {name} was modified")

        failures += self._judge(errors, row)
        failures += self._runtime_bans(found)
        if not failures and self.job.time:
            failures += self._quiet()
        if not failures and self.job.time:
            failures += self._time(sc, slots, errors, ref, row)
            failures += self._runtime_bans(found)   # libraries loaded during timed calls too
        row.correct = not failures
        row.failures = sorted(set(failures), key=failures.index)
        return Row(row=row, runtime_bans=found)

    # plans ----------------------------------------------------------------------
    def _sizes(self, v: dict[str, Any]) -> dict[str, int]:
        return {b.name: self._bytes(b, v) for b in self.task.buffers}

    def _candidate(self) -> CandidateProcess:
        """The candidate's process, and its device code loaded in its own context (module
        memory counted as the candidate's own)."""
        if self.cand is None or not self.cand.alive():
            self.restart = True
            raise CandidateProcessError("the candidate's process is gone (it died or was killed in an earlier call)")
        if self.cand.sandbox is None:
            sandbox = self.cand.wait_ready()
            emit(Isolation(isolation={**{k: str(v) for k, v in sandbox.items()}, "device": self.device_isolation}))
        if self.cand_modules is None:
            self.gpu.sync()
            free_before = self.gpu.free_memory()
            self.cand_modules, why = [], ""
            with self.cctx.current():
                try:
                    for image in fatbin_images(Path(self.job.candidate_lib)):
                        try:   # static cudart's own image, say, need not load: the kernels' must
                            self.cand_modules.append(self.plan.load_image(image))
                        except PlanError as exc:
                            why = str(exc)
                except PlanError as exc:
                    why = str(exc)
            if not self.cand_modules:
                raise LoadError(f"the candidate's device code does not load: {why}")
            self.own_memory += max(0, free_before - self.gpu.free_memory())
        return self.cand

    def _prepare(self, slots: list[Slot], v: dict[str, Any]) -> list[str]:
        """Capture each kernel's call on each slot and build its replay (the baseline's in
        the judge's context, the candidate's in its own); the lines of the rules the
        candidate's plans break (none when every replay is ready)."""
        sizes = self._sizes(v)
        for slot in slots:
            writable = [(int(b.handle), sizes[n]) for n, b in {**slot.base_out, **slot.base_ws}.items()]
            readable = writable + [(int(b.handle), sizes[n]) for n, b in slot.inputs.items()]
            try:
                assert slot.base_params is not None
                rc, data = self.plan.capture(self.base_entry, bytes(slot.base_params))
                plan = parse_plan(data)
                check_plan(plan, writable, readable)
                slot.graphs["base"] = self.plan.build(plan, self.base_modules)
                slot.rcs["base"] = rc
            except PlanError as exc:
                raise BaselinePlanError(f"the baseline cannot be captured and replayed (task problem): {exc}") from None

            writable = [(b.handle, sizes[n]) for n, b in {**slot.cand_out, **slot.cand_ws}.items()]
            readable = writable + [(b.handle, sizes[n]) for n, b in slot.cand_in.items()]
            try:
                cand = self._candidate()
                free_before = self.gpu.free_memory()
                assert slot.cand_params is not None
                cap = cand.capture(bytes(slot.cand_params), readable, CAPTURE_TIMEOUT_S)
                self.own_memory += max(0, free_before - self.gpu.free_memory())
            except CandidateProcessError as exc:
                if "does not load" in str(exc) or "does not export" in str(exc):
                    raise LoadError(str(exc)) from None
                self.restart = self.restart or not (self.cand and self.cand.alive())
                self.hung = self.hung or isinstance(exc, CandidateHang)
                return [str(exc)]
            if cap.plan is None:
                return [cap.error or "the candidate's call could not be captured"]
            rc = cap.rc if cap.rc is not None else -1
            if not cap.plan.kernels:
                return [f"candidate returned error code {rc}" if rc else
                        "the entry launched no kernel into the given stream (work on other streams, "
                        "the legacy default stream included, is not captured)"]
            try:
                check_plan(cap.plan, writable, readable)
                with self.cctx.current():
                    slot.graphs["cand"] = self.plan.build(cap.plan, self.cand_modules or [])
            except PlanError as exc:
                return [str(exc)]
            slot.rcs["cand"] = rc
        if self.own_memory > OWN_MEMORY_LIMIT:   # every scenario while it holds it
            return [f"candidate holds {self.own_memory / 2**20:.0f} MiB of device memory of its own "
                    f"(limit {OWN_MEMORY_LIMIT >> 20} MiB): the evaluator owns every allocation"]
        return []

    def _chain(self, who: str, slots: list[Slot], ids: tuple[int, ...], marked: bool = False) -> int:
        """The replay of `who`'s calls on these slots, back to back (in `who`'s context);
        `marked`, with several, each timed on its own (`_make_copy_marks`, done while a
        scenario is timed)."""
        key = (who, tuple(id(slots[i]) for i in ids), marked)
        if key not in self.chains:
            graphs = [slots[i].graphs[who] for i in ids]
            flush = FLUSH_BETWEEN_COPIES and len(ids) > 1 and marked
            marks = self.plan.marks(len(ids), flush) if len(ids) > 1 and marked else 0
            events = [int(e) for e in self.copy_events.get(who, [])[:marks]]
            region = (self.cctx if who == "cand" else self.gpu).flush_region if flush and events else (0, 0)
            with self.cctx.current() if who == "cand" else contextlib.nullcontext():
                self.chains[key] = self.plan.chain(graphs, events, region)
        return self.chains[key]

    def _make_copy_marks(self) -> None:
        """The event marks around each copy of a timed sample, each role's in its context
        (made once, enough for either layout of plan.chain)."""
        if self.copy_events:
            return
        n = 2 * MAX_COPIES   # each copy's start and end (with a flush between them), else n + 1
        self.copy_events["base"] = [check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT))
                                    for _ in range(n)]
        with self.cctx.current():
            self.copy_events["cand"] = [check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT))
                                        for _ in range(n)]

    def _copy_times(self, who: str, copies: int) -> list[float]:
        """Each copy's time (ms) in `who`'s last timed sample, its stream synchronised."""
        pairs = [(2 * k, 2 * k + 1) if FLUSH_BETWEEN_COPIES else (k, k + 1) for k in range(copies)]
        ev = self.copy_events[who]
        with self.cctx.current() if who == "cand" else contextlib.nullcontext():
            return [float(check(driver.cuEventElapsedTime(ev[a], ev[b]))) for a, b in pairs]

    def _release(self) -> None:
        self.gpu.sync_all()
        self.cctx.sync_all()
        for (who, *_), exec_ in self.chains.items():
            if who == "cand":
                with self.cctx.current():
                    self.plan.destroy_exec(exec_)
            else:
                self.plan.destroy_exec(exec_)
        self.chains.clear()
        for slot in self.scenario_slots:
            for graph in slot.graphs.values():
                self.plan.destroy_graph(graph)
            slot.graphs.clear()
        self.cctx.free_all()
        self.slots_in_use, self.scenario_slots = [], []

    def _runtime_bans(self, found: list[BanHit]) -> list[str]:
        """Banned libraries mapped into the candidate's process (its host code runs only
        there) or into this one; new ones are added to `found`."""
        loaded = bans.runtime_libraries()
        if self.cand is not None and self.cand.alive():
            theirs = bans.process_libraries(self.cand.pid)
            if theirs is None:
                return ["the candidate's process hid its memory map from the ban check"]
            loaded += theirs
        hits = bans.check_runtime(loaded)
        known = {h.where for h in found}
        found += [h for h in hits if h.where not in known]
        return ["banned library loaded at run time: " + ", ".join(h.where for h in hits)] if hits else []

    def _device_lag(self) -> float:
        """Seconds the whole device needs to go idle once our streams are done (0 when no
        work was left elsewhere): both contexts."""
        t0 = time.perf_counter()
        self.gpu.sync_all()
        self.cctx.sync_all()
        return time.perf_counter() - t0

    def _judge_state(self, slots: list[Slot], ref: ReferenceCheck, v: dict[str, Any],
                     more: Sequence[Any] = ()) -> list[tuple[str, Any, int]]:
        """What the judge holds while the candidate runs: the inputs and the baseline's outputs
        of `slots`, the reference's outputs and the units it checks, and `more` (statistics
        accumulated so far). A kernel of the candidate's context can write the judge's memory
        (one address space: research/ctx_probe), so these are fingerprinted around its runs."""
        held = [(f"input {n}", buf, self._bytes(self._spec(n), v)) for slot in slots for n, buf in slot.inputs.items()]
        held += [(f"the baseline's {b.name}", slot.base_out[b.name], self._bytes(b, v))
                 for slot in slots for b in self.task.outputs]
        held += [(f"the reference's {n}", buf, int(buf.size)) for n, buf in ref.outputs.items()]
        held += [("the reference's checked units", ref.selected, int(ref.selected.size))]
        held += [("the judge's statistics", buf, int(buf.size)) for buf in more]
        return held

    def _untouched(self, held: list[tuple[str, Any, int]], digests: list[int],
                   then: Callable[[], None] | None = None) -> list[str]:
        """A failure for every judge buffer whose digest changed while the candidate ran
        (its whole context done first). `then`: the judge's own work, enqueued behind the
        digests and before their read-back."""
        self.cctx.sync_all()
        bufs = [(buf, n) for _, buf, n in held]
        if not 0 < len(bufs) <= HASHES_PER_LAUNCH:
            written = self._written(held, digests, self.gpu.hashes(bufs))
            if then is not None:
                then()
            return written
        ticket = self.gpu.hash_later(bufs)
        try:
            if then is not None:
                then()
        except Exception as exc:   # the judge's own work failed: a write of the candidate's is the cause
            try:
                written = self._written(held, digests, self.gpu.hash_results(ticket))
            except GpuError:
                raise exc from None
            if written:
                raise GpuError(f"{written[0]} (then: {exc})") from exc
            raise
        return self._written(held, digests, self.gpu.hash_results(ticket))

    @staticmethod
    def _written(held: list[tuple[str, Any, int]], before: list[int], after: list[int]) -> list[str]:
        hit = sorted({what for (what, _, _), a, b in zip(held, before, after, strict=True) if a != b})
        return [f"the candidate wrote the judge's memory: {w}" for w in hit]

    def _spec(self, name: str) -> BufferSpec:
        return next(b for b in self.task.buffers if b.name == name)

    def _fill_inputs(self, inputs: dict[str, Buffer], v: dict[str, Any], dist: Distribution) -> None:
        """Fresh random inputs of one of the task's distributions."""
        for b in self.task.inputs:
            seed = int(self.rng.integers(1, 2**63 - 1))
            count = self._count(b, v)
            self.gpu.fill(inputs[b.name], b.dtype, count, seed, b.init, b.mean, b.std)
            t = dist.inputs.get(b.name)
            if t is not None:
                self.gpu.transform(inputs[b.name], b.dtype, count, t.scale, int(evaluate(t.period, v)), t.count,
                                   t.factor, int(evaluate(t.row_length, v)), t.spread, seed ^ 0x5DEECE66D)

    def _copy_inputs(self, slots: list[Slot], v: dict[str, Any], own_stream: bool = False) -> None:
        """The judge's inputs into the candidate's context, no wait. On the judge's stream:
        in its order after their fill, before the digests every candidate run starts with,
        whose read-back waits for it. `own_stream`: on the candidate's stream, at the head of
        its sample, once that read-back has found the judge's stream done (INPUTS_COPIED_IN).
        Never in the candidate's context while the judge may run: a copy still running there
        when the baseline's sample starts is time-sliced into it (on an H100, microsecond
        RMSNorm read 1.16x baseline-first against 1.00x candidate-first, the baseline against
        itself)."""
        stream = None if own_stream else self.gpu.stream_handle
        for slot in slots:
            for name, buf in slot.inputs.items():
                self.cctx.copy_in(slot.cand_in[name], int(buf.handle), self._bytes(self._spec(name), v), stream)

    def _read_back(self, slots: list[Slot], v: dict[str, Any]) -> None:
        """Enqueue, on the candidate's stream, the copy of its outputs into the judge's views."""
        for slot in slots:
            for b in self.task.outputs:
                if slot.mirrored:   # its outputs are the judge's allocation
                    self.cctx.copy(int(slot.view[b.name].handle), slot.cand_out[b.name].handle, self._bytes(b, v))
                else:
                    self.cctx.copy_out(int(slot.view[b.name].handle), slot.cand_out[b.name], self._bytes(b, v))

    def _stats_now(self, slot: Slot, ref: ReferenceCheck, v: dict[str, Any]) -> dict[str, np.void]:
        """The candidate's outputs against the baseline's and the reference, read as soon as
        its stream is done."""
        with self.cctx.current():
            self._read_back([slot], v)
            self.cctx.sync()
        stats = {b.name: self.gpu.new_stats() for b in self.task.outputs}
        for b in self.task.outputs:
            self.gpu.compare(b.dtype, slot.view[b.name], slot.base_out[b.name],
                             ref.outputs[b.name], self._count(b, v), stats[b.name])
        return {n: self.gpu.read_stats(st) for n, st in stats.items()}   # syncs the stream

    def _correctness_call(self, s: int, slot: Slot, ref: ReferenceCheck, v: dict[str, Any],
                          failures: list[str]) -> int:
        """The candidate's correctness call on slot `s`, then the fp32 reference's and the
        baseline's on the same inputs: the candidate runs first, while their results for
        these inputs exist nowhere it could read them (its kernels can read the judge's
        memory: one address space); what the judge holds is fingerprinted around its run,
        a change added to `failures`. Its return value."""
        gpu = self.gpu
        for b in self.task.outputs:   # what an earlier call on this slot left, gone
            gpu.poison(slot.base_out[b.name], b.dtype)
        ref.forget(slot, gpu)
        judged = self._judge_state([slot], ref, v)
        held = gpu.hashes([(buf, n) for _, buf, n in judged])
        rc = self._call("cand", [s], salt=s + 7)
        failures += self._untouched(judged, held)
        ref.run(self.ref_fn, slot, gpu, ctypes.c_void_p(gpu.stream_handle))
        self._call("base", [s], salt=s)
        return rc

    def _call_again(self, s: int, slot: Slot, ref: ReferenceCheck, v: dict[str, Any],
                    first: dict[str, np.void], failures: list[str]) -> None:
        """The candidate's correctness call on slot `s` once more (the reference's and the
        baseline's after it again), its first statistics anew."""
        self._correctness_call(s, slot, ref, v, failures)
        self._called_again = True
        first.update(self._stats_now(slot, ref, v))

    def _call(self, role: str, ids: list[int], salt: int) -> int:
        """Poison outputs, scramble the workspace, then call the baseline or candidate
        (untimed: a correctness call) on each of this scenario's slots `ids`, back to back;
        the first non-zero return value of the entry, else 0."""
        slots = self.slots_in_use
        self._enqueue(role, slots, ids, salt, None)
        return next((slots[i].rcs[role] for i in ids if slots[i].rcs[role] != 0), 0)

    def _enqueue(self, role: str, slots: list[Slot], ids: list[int], salt: int, events: tuple[int, int] | None,
                 marked: bool = False) -> None:
        """One call of `role` on the slots `ids` back to back, after the same lead-in as
        every call (fresh poison and workspace, a busy stream, a cold L2); between `events`
        (indices in that role's context) when timed; `marked`, each copy timed on its own."""
        task = self.task
        if role == "base":
            gpu = self.gpu
            for i in ids:
                for b in task.outputs:
                    gpu.poison(slots[i].base_out[b.name], b.dtype)
                for buf in slots[i].base_ws.values():
                    gpu.scramble(buf, salt)
            if WARM_PAGES and events:
                for i in ids:
                    for buf in (*slots[i].inputs.values(), *slots[i].base_out.values(), *slots[i].base_ws.values()):
                        gpu.touch(buf)
            gpu.delay()
            gpu.flush_l2()
            if events:
                gpu.record(self._event(events[0]))
            self.plan.launch(self._chain("base", slots, tuple(ids), marked), gpu.stream_handle)
            if events:
                gpu.record(self._event(events[1]))
            return
        cctx = self.cctx
        with cctx.current():
            for i in ids:
                for b in task.outputs:
                    cctx.poison(slots[i].cand_out[b.name], b.dtype)
                for cbuf in slots[i].cand_ws.values():
                    cctx.scramble(cbuf, salt)
            if WARM_PAGES and events:
                for i in ids:
                    for cbuf in (*slots[i].cand_in.values(), *slots[i].cand_out.values(), *slots[i].cand_ws.values()):
                        cctx.touch(cbuf)
            cctx.delay()
            cctx.flush_l2()
            if events:
                cctx.record(events[0])
            self.plan.launch(self._chain("cand", slots, tuple(ids), marked), cctx.stream_handle)
            if events:
                cctx.record(events[1])

    @staticmethod
    def _check_output(b: BufferSpec, e: ErrorStats, base: ErrorStats) -> list[str]:
        """The pass rule for one output: statistics `e`, tolerances from the baseline's
        errors in the correctness calls (`base`)."""
        finite, base_finite = max(1, e.checked - e.inf_mismatch), max(1, base.checked - base.inf_mismatch)
        c_mean, b_mean = e.c_sum / finite, base.b_sum / base_finite
        tol_max, tol_mean = max(2 * base.b_max, b.floor), max(2 * b_mean, b.floor / 10)
        failures = []
        if e.checked != e.expected:
            failures.append(f"{b.name}: the fp32 reference wrote {e.checked} of {e.expected} checked elements")
        if e.b_bad:
            failures.append(f"{b.name}: the baseline produced {e.b_bad} non-finite elements (task problem)")
        if e.c_bad:
            failures.append(f"{b.name}: {e.c_bad} elements NaN/Inf or never written")
        if e.inf_mismatch:
            failures.append(f"{b.name}: {e.inf_mismatch} elements differ where the reference is infinite")
        if e.c_max > tol_max:
            failures.append(f"{b.name}: max error {e.c_max:.3g} > tolerance {tol_max:.3g} (baseline {base.b_max:.3g})")
        if c_mean > tol_mean:
            failures.append(f"{b.name}: mean error {c_mean:.3g} > tolerance {tol_mean:.3g} (baseline {b_mean:.3g})")
        if e.cb_max > 2 * (tol_max + base.b_max):
            failures.append(f"{b.name}: differs from the baseline by {e.cb_max:.3g} beyond one rounding step outside the checked rows")
        return failures

    def _judge(self, errors: dict[str, dict[str, ErrorStats]], row: ScenarioResult) -> list[str]:
        """The pass rule on each input distribution, each held to the baseline's error on
        the same inputs; the detail shows each output's worst distribution."""
        failures = []
        detail: dict[str, tuple[float, OutputErrors]] = {}   # output -> (error / tolerance, its figures)
        worst = (-1.0, 0.0, 0.0)   # (error / tolerance, error, baseline error) of the worst output
        several = len(errors) > 1
        for dist, per_output in errors.items():
            for b in self.task.outputs:
                e = per_output[b.name]
                finite = max(1, e.checked - e.inf_mismatch)
                c_mean, b_mean = e.c_sum / finite, e.b_sum / finite
                tol_max = max(2 * e.b_max, b.floor)
                tol_mean = max(2 * b_mean, b.floor / 10)
                ratio = e.c_max / tol_max if e.c_bad == 0 else math.inf
                if b.name not in detail or ratio > detail[b.name][0]:
                    detail[b.name] = (ratio, OutputErrors(
                        max=e.c_max, mean=c_mean, baseline_max=e.b_max, baseline_mean=b_mean,
                        tol_max=tol_max, tol_mean=tol_mean, vs_baseline_max=e.cb_max,
                        checked=e.checked, nonfinite=e.c_bad, inf_mismatch=e.inf_mismatch,
                        distribution=dist))
                worst = max(worst, (e.c_max / tol_max, e.c_max, e.b_max))
                failures += [f"{dist}: {f}" if several else f for f in self._check_output(b, e, e)]
        row.errors = {name: figures for name, (_, figures) in detail.items()}
        row.err, row.err_baseline = worst[1], worst[2]
        row.err_ratio = worst[1] / worst[2] if worst[2] > 0 else None
        return failures

    def _time(self, sc: Scenario, slots: list[Slot], by_dist: dict[str, dict[str, ErrorStats]],
              ref: ReferenceCheck, row: ScenarioResult) -> list[str]:
        """Interleaved baseline/candidate pairs of replays on fresh inputs, L2 flushed before
        each sample.

        A sample is one graph launch between two events: `copies` calls back to back (1 for
        kernels of 0.2 ms and more; up to 64 for microsecond kernels, so that launch and
        event granularity vanish from the ratio), each on its own input set of the task's
        first distribution, its own outputs and its own workspace, all fresh for every
        sample: no copy can find what another left. Every copy's outputs are read back
        right after the sample's end event, checked for completeness and against the
        baseline's same copy; a few pairs, chosen at random, have one copy, chosen at
        random, audited against the fp32 reference with the full pass rule, held to the
        baseline's error on the same inputs. With copies > 1, a quarter of the pairs (blocks
        at random, added) time each copy on its own for the copy profile; the speed verdict
        reads the others, whose copies run back to back (MARKED_SHARE)."""
        gpu, task, v, opts = self.gpu, self.task, sc.values, self.job.timing
        errors = by_dist[self.set_dists[0].name]   # timed runs use that distribution's inputs
        timed = [slots[i] for i in timing_slots([d.name for d in self.set_dists], MAX_COPIES)]
        copies = self._copies(timed[0], v)
        row.copies = copies
        if copies > 1:
            self._make_copy_marks()
        st = _Sample(
            slots=timed[:copies] + [self._slot(v, self.set_dists[0], ref.outputs) for _ in range(copies - len(timed))],
            v=v, ref=ref, spot={b.name: gpu.new_stats() for b in task.outputs},
            complete={b.name: gpu.new_stats() for b in task.outputs},
            audit={b.name: gpu.new_stats() for b in task.outputs},
            tolerance={b.name: spot_tolerance(errors[b.name], b.floor) for b in task.outputs})
        failures = self._prepare(st.slots[len(timed):], v)   # the new slots' captures
        if not failures and SWAP_PLACES:
            st.mirrors = self._mirrors(st.slots, v, ref)
        if not failures and (len(st.slots) > len(timed) or st.mirrors):
            # the candidate's process ran again for those captures, after the quiet probe
            # before timing: what it left running there would share the GPU with the pairs
            failures = self._quiet()
        if failures:
            return failures
        pair = partial(self._pair, st)
        written = st.written
        st.all_marked = (FLUSH_BETWEEN_COPIES or MARKED_SHARE >= 1) and copies > 1   # (1: as before s24)

        def sample_ms(i: int, role: str) -> float:
            if FLUSH_BETWEEN_COPIES and copies > 1:   # the flushes between the copies are not theirs
                return sum(st.copy_ms[role][i]) / copies
            k = 4 * i + (0 if role == "base" else 2)
            ms = (self._event(k + 1) - self._event(k)) if role == "base" else self.cctx.elapsed_ms(k, k + 1)
            return ms / copies

        # warm-up: until the clocks settle (two consecutive pair times within 2%) or 30 pairs
        t_start = time.monotonic()
        last_pair: float | None = None
        per_pair = 0.0
        for w in range(WARMUP_PAIRS):
            pair(w, True)
            gpu.sync()
            per_pair = (sample_ms(w, "base") + sample_ms(w, "cand")) * copies
            if settled(w, per_pair, last_pair):
                break
            last_pair = per_pair
        if written:
            return sorted(set(written))
        for per_copy in st.copy_ms.values():   # the profile is of the timed pairs only
            per_copy.clear()
        st.warmup = False
        block = 4 if st.mirrors else 2   # both orders (and with mirrors, both placements)
        n = -(-pairs_needed(per_pair, opts) // block) * block
        if copies > 1 and not st.all_marked:   # the marked blocks on top, anywhere among the others
            n, st.marked = marked_pairs(n, block, MARKED_SHARE, MIN_MARKED_BLOCKS, self.rng)
        if st.marked:
            self._warm_marked(st, n)
        deadline = t_start + opts.max_seconds
        # the warm-up pairs' outputs stay in the spot and completeness statistics: they are
        # timed calls too, and nothing else judges them (a candidate that counts its calls
        # knows which pairs are warm-up)
        for p in self.rng.choice(n, size=min(n, AUDITED_PAIRS), replace=False):
            st.audit_pairs[int(p)] = int(self.rng.integers(copies))
        gpu.sync()
        free_before = gpu.free_memory()
        base_ms, cand_ms = [], []                 # the unmarked pairs': the speed verdict's
        marked_ms: dict[str, list[float]] = {"base": [], "cand": []}

        def run_pairs(start: int, stop: int) -> None:   # a chunk run again replaces its samples
            for i in range(start, stop):
                pair(i, True)
            gpu.sync()

        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            run_pairs(start, stop)
            lag = lasting_lag(self._device_lag, partial(run_pairs, start, stop))
            if lag > FOREIGN_WORK_S:
                return [f"the device stayed busy {lag * 1e3:.1f} ms after timed runs: work outside the stream"]
            if written:
                return sorted(set(written))
            for i in range(start, stop):
                if i in st.marked:
                    marked_ms["base"].append(sample_ms(i, "base"))
                    marked_ms["cand"].append(sample_ms(i, "cand"))
                else:
                    base_ms.append(sample_ms(i, "base"))
                    cand_ms.append(sample_ms(i, "cand"))
            if (time.monotonic() > deadline and len(base_ms) >= opts.min_pairs and max(st.audit_pairs) < stop
                    and len(marked_ms["base"]) >= min(len(st.marked), MIN_MARKED_BLOCKS * block)):
                break
        flops, nbytes = task.metric("flops", sc), task.metric("bytes", sc)
        verdict = speed_verdict(base_ms, cand_ms, copies=copies, took_bytes=free_before - gpu.free_memory(),
                                flops=flops, nbytes=nbytes, bound=bound_ms(gpu.info.name, flops, nbytes),
                                placements=2 if st.mirrors else 1)
        row.baseline_ms, row.candidate_ms, row.speedup = verdict.baseline_ms, verdict.candidate_ms, verdict.speedup
        row.spread, row.pairs, row.order_ratio = verdict.spread, verdict.pairs, verdict.order_ratio
        row.tflops, row.tbps = verdict.tflops, verdict.tbps
        row.bound_ms, row.bound_fraction, row.below_bound = verdict.bound_ms, verdict.bound_fraction, verdict.below_bound
        failures = verdict.failures
        if marked_ms["base"]:
            agree = marks_agree(base_ms, cand_ms, marked_ms["base"], marked_ms["cand"])
            row.marks_excess_us = agree.excess_ms * 1e3
            failures = failures + agree.failures
        timed_pairs = sorted(set(st.copy_ms["base"]) & set(st.copy_ms["cand"]))
        if copies > 1 and timed_pairs:
            profile = copy_profile(np.array([st.copy_ms["base"][i] for i in timed_pairs]),
                                   np.array([st.copy_ms["cand"][i] for i in timed_pairs]))
            row.copy_first, row.copy_spread = profile.first, profile.spread
            failures = failures + profile.failures
        return failures + self._timed_output_failures(errors, st)

    def _warm_marked(self, st: _Sample, salt: int) -> None:
        """Each marked chain made and run once, untimed, before the timed pairs (as the warm-up
        did the unmarked ones): no timed sample pays for its instantiation or first upload."""
        ids = list(range(len(st.slots)))
        for placed in [st.slots, st.mirrors] if st.mirrors else [st.slots]:
            self._enqueue("base", placed, ids, salt, None, True)
            self.gpu.sync()
            self._candidate_sample(st, placed, ids, salt, None, True)

    def _pair(self, st: _Sample, i: int, timed: bool) -> None:
        """Timed pair `i`: fresh inputs for every copy, then the baseline's sample and the
        candidate's (the baseline first in even pairs), the judge's memory fingerprinted
        around the candidate's; every copy's outputs checked against the baseline's same
        copy, and one copy audited against the reference in the pairs chosen for it. The
        two contexts never run at once: the candidate's sample starts after the digests'
        read-back (which waits for the judge's stream), and the judge's work after it is
        enqueued once the candidate's whole context is done."""
        gpu, task, v, ids = self.gpu, self.task, st.v, list(range(len(st.slots)))
        for slot in st.slots:
            self._fill_inputs(slot.inputs, v, slot.dist)
        copy_late = INPUTS_COPIED_IN == "candidate" and not SWAP_PLACES
        if not copy_late:
            self._copy_inputs(st.slots, v)   # (a mirror's two input copies are these two)
        placed, marked = st.placed(i), st.marks(i) and timed

        def events(role: str) -> tuple[int, int] | None:
            k = 4 * i + (0 if role == "base" else 2)
            return (k, k + 1) if timed else None

        def baseline() -> None:
            self._enqueue("base", placed, ids, i, events("base"), marked)
            if marked and len(ids) > 1:   # its copies' events read now
                gpu.sync()
                if times := self._copy_times("base", len(ids)):
                    st.copy_ms["base"][i] = times

        def checks() -> None:   # both samples' outputs there: enqueued behind the digests
            for slot in placed:
                for b in task.outputs:
                    n = self._count(b, v)
                    gpu.compare(b.dtype, slot.view[b.name], None, None, n, st.complete[b.name])
                    gpu.compare(b.dtype, slot.view[b.name], slot.base_out[b.name], None, n, st.spot[b.name])
            if i in st.audit_pairs:
                slot = placed[st.audit_pairs[i]]
                st.ref.run(self.ref_fn, slot, gpu, ctypes.c_void_p(gpu.stream_handle))
                for b in task.outputs:
                    gpu.compare(b.dtype, slot.view[b.name], slot.base_out[b.name], st.ref.outputs[b.name],
                                self._count(b, v), st.audit[b.name])
                st.ref.forget(slot, gpu)
                st.audited += 1

        def baseline_then_checks() -> None:
            baseline()
            checks()

        if i % 2 == 0:
            baseline()
            self._candidate_sample(st, placed, ids, i, events("cand"), marked, then=checks, copy_in=copy_late)
        else:
            self._candidate_sample(st, placed, ids, i, events("cand"), marked, then=baseline_then_checks,
                                   copy_in=copy_late)
        if marked and len(ids) > 1 and (times := self._copy_times("cand", len(ids))):
            st.copy_ms["cand"][i] = times
        if len(st.apart) < len(st.tolerance):   # after the audit: it judges the timed outputs
            self._watch(st, i, placed)

    def _candidate_sample(self, st: _Sample, placed: list[Slot], ids: list[int], salt: int,
                          events: tuple[int, int] | None, marked: bool = False,
                          then: Callable[[], None] | None = None, copy_in: bool = False) -> None:
        """The candidate's run of `ids`, the judge's memory fingerprinted before it and checked
        after; its outputs read back as they are when its stream reaches the end event.
        `then`: the judge's own work to enqueue behind the second digests (one wait for both).
        `copy_in`: its inputs copied in first, on its own stream (INPUTS_COPIED_IN)."""
        judged = self._judge_state(placed, st.ref, st.v, [*st.spot.values(), *st.complete.values(), *st.audit.values()])
        held = self.gpu.hashes([(buf, n) for _, buf, n in judged])
        if copy_in:
            with self.cctx.current():
                self._copy_inputs(st.slots, st.v, own_stream=True)
        self._enqueue("cand", placed, ids, salt, events, marked)
        with self.cctx.current():
            self._read_back([placed[i] for i in ids], st.v)
        st.written.extend(self._untouched(judged, held, then))   # (it waits for the whole context)

    def _watch(self, st: _Sample, i: int, placed: list[Slot]) -> None:
        """After pair `i`'s spot checks: an output that has just passed its bound is looked at
        while that pair's outputs are still there (the failure line says where, and whose)."""
        watched = [b for b in self.task.outputs if b.name not in st.apart]
        for b, stats in zip(watched, self.gpu.read_stats_many([st.spot[b.name] for b in watched]), strict=True):
            if float(stats["cb_max"]) > st.tolerance[b.name]:
                try:
                    st.apart[b.name] = self._where_apart(st, i, placed, b)
                except (PlanError, ValueError, IndexError, KeyError, TypeError) as exc:   # the account, not the verdict
                    st.apart[b.name] = Apart(pair=i, copy=0, copies=len(placed), where=f"not found: {exc}"[:120],
                                             cand=math.nan, base=math.nan, warmup=st.warmup)

    def _where_apart(self, st: _Sample, i: int, placed: list[Slot], b: BufferSpec) -> Apart:
        """The copy and element where the candidate's output of pair `i` lies farthest from the
        baseline's, and what each kernel gives there when run again, untimed, on the same
        inputs (the judge's memory fingerprinted around the candidate's run, as in a pair)."""
        gpu, v = self.gpu, st.v
        nbytes = self._bytes(b, v)

        def values(buf: Any) -> np.ndarray:
            return host_values(gpu.to_host(buf, nbytes, np.empty(nbytes, dtype=np.uint8)), b.dtype)
        k, at, far, cand, base = 0, 0, -1.0, 0.0, 0.0
        for copy, slot in enumerate(placed):
            c, o = values(slot.view[b.name]), values(slot.base_out[b.name])
            where, dist = farthest(c, o, b.dtype)
            if dist > far:
                k, at, far, cand, base = copy, where, dist, float(c[where]), float(o[where])
        slot = placed[k]
        apart = Apart(pair=i, copy=k, copies=len(placed), cand=cand, base=base, warmup=st.warmup,
                      where=position(at, [int(evaluate(d, v)) for d in b.shape], b.shape))
        self._copy_inputs([st.slots[k]], v)   # the candidate's copy of the inputs, as its timed run found it
        self._enqueue("base", placed, [k], i, None)
        gpu.sync()
        self._candidate_sample(st, placed, [k], i, None)
        apart.cand_again = float(values(slot.view[b.name])[at])
        apart.base_again = float(values(slot.base_out[b.name])[at])
        return apart

    def _timed_output_failures(self, errors: dict[str, ErrorStats], st: _Sample) -> list[str]:
        """The timed runs' outputs: written, close to the baseline's same copy, and the audited
        copies within the pass rule against the fp32 reference."""
        gpu = self.gpu
        failures: list[str] = []
        for b in self.task.outputs:
            spot = gpu.read_stats(st.spot[b.name])
            e = errors[b.name]
            if int(spot["c_bad"]):
                failures.append(f"{b.name}: {int(spot['c_bad'])} NaN/unwritten elements in timed runs")
            if float(spot["cb_max"]) > spot_tolerance(e, b.floor):
                where = f" ({st.apart[b.name].clause()})" if b.name in st.apart else ""
                failures.append(f"{b.name}: timed runs differ from the baseline by {float(spot['cb_max']):.3g} beyond one rounding step{where}")
            if int(gpu.read_stats(st.complete[b.name])["c_bad"]):
                failures.append(f"{b.name}: timed output incomplete when the candidate's stream reached its end event")
            audit_errors = ErrorStats()
            audit_errors.add(gpu.read_stats(st.audit[b.name]), st.audited * st.ref.n_selected * st.ref.per_unit[b.name])
            failures += [f"audited timed run: {f}" for f in
                         self._check_output(b, audit_errors, _baseline_bound(audit_errors, e))]
        return failures

    def calibrate(self) -> None:
        """The work probe's time with this GPU to ourselves (clocks warm, before the
        candidate's library has loaded)."""
        self.quiet_ms = min(self.gpu.work_ms() for _ in range(3))

    def _quiet(self) -> list[str]:
        """Nothing but the judge on the GPU before timing: the candidate's process is
        frozen, but work it queued in its own context (a side stream, a kernel left
        spinning) still runs, sharing the GPU with whatever is timed."""
        deadline = time.monotonic() + QUIET_WAIT_S
        while True:
            took = min(self.gpu.work_ms() for _ in range(2))
            if took <= QUIET_RATIO * self.quiet_ms:
                return []
            if time.monotonic() > deadline:
                if self.cand is not None:
                    self.cand.kill()   # its context goes, and its work with it
                    self.restart = True
                return [f"the GPU stayed busy with work outside the judge ({took / self.quiet_ms:.1f}x slower "
                        f"for {QUIET_WAIT_S:g} s): the candidate's process left work running on the GPU"]
            time.sleep(0.02)

    def _copies(self, slot: Slot, v: dict[str, Any]) -> int:
        """How many back-to-back calls make one timed sample: enough for SAMPLE_MS, read
        from the baseline's single replay (median of three, cold L2)."""
        times = []
        for _ in range(3):
            self.gpu.delay()
            self.gpu.flush_l2()
            self.gpu.record(self._event(0))
            self.plan.launch(self._chain("base", [slot], (0,)), self.gpu.stream_handle)
            self.gpu.record(self._event(1))
            self.gpu.sync()
            times.append(self._event(1) - self._event(0))
        one = max(float(np.median(times)), 1e-4)
        return int(min(MAX_COPIES, max(1, math.ceil(SAMPLE_MS / one)))) if one < SAMPLE_MS else 1

    def _event(self, i: int) -> Event:
        while len(self.events) <= i:
            self.events.append(self.gpu.event())
        return self.events[i]


def read_job(text: str) -> WorkerJob:
    """The worker's stdin; ContractError (one line naming the field) when it is not a job."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContractError(f"the worker's job: not JSON ({exc})") from None
    job = WorkerJob.from_dict(data, "the worker's job")
    try:
        bytes.fromhex(job.key)
    except ValueError:
        raise ContractError("the worker's job: key: not hex") from None
    return job


def main() -> int:
    global _channel, _key
    try:
        worker_job = read_job(sys.stdin.read())
    except ContractError as exc:   # nothing to sign with: the parent reads stderr
        print(f"socratic.evaluator.worker: {exc}", file=sys.stderr)
        return 2
    _key = bytes.fromhex(worker_job.key)
    _channel = os.fdopen(worker_job.channel_fd, "w")
    job = worker_job.job
    current = None
    ev: WorkerRun | None = None
    try:
        ev = WorkerRun(job)
        ev.gpu.spin(job.warmup_seconds if job.warmup_seconds is not None else 0.3)
        ev.calibrate()
        emit(Ready(gpu=GpuInfo(**vars(ev.gpu.info), write_protection=ev.sandbox)))
        scenarios = ev.task.all_scenarios()
        for extra in job.hidden:   # drawn by the runner for this evaluation only
            scenarios[extra.id] = ev.task.scenario(extra.values, extra.id, hidden=True)
        for sid in worker_job.scenarios:
            current = sid
            emit(Start(id=sid))
            emit(ev.run(scenarios[sid]))
            if ev.restart:   # the rest in a new worker, with a new candidate process
                emit(Restart(hung=ev.hung))
                return 0
    except GpuError as exc:
        emit(Fatal(kind="cuda", id=current, error=str(exc)))
        return 3
    except PlanError as exc:   # the evaluator's own device code or plan library
        emit(Fatal(kind="internal", id=current, error=f"PlanError: {exc}"))
        return 3
    except LoadError as exc:   # the parent fails every remaining scenario with this line
        emit(Fatal(kind="load", id=current, error=str(exc)))
        return 3
    except Exception as exc:  # the parent turns this into the scenario's failure
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        emit(Fatal(kind="internal", id=current, error=f"{type(exc).__name__}: {exc}",
                   where=f"{os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"))
        return 3
    finally:
        if ev is not None and ev.cand is not None:
            ev.cand.kill()
        if ev is not None:
            ev.cctx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
