"""The evaluator's result document, `socratic.eval/1`: what `socratic eval --json` prints
and the harness saves under evals/."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socratic.contracts.common import ContractError, Record, _short
from socratic.contracts.vocab import Terms

SCHEMA = "socratic.eval/1"


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
    speedup: float | None = None            # baseline/candidate, each role's sample against the other's in the same place of its pair (evaluator/timing.py)
    spread: float | None = None             # half inter-quartile range of those ratios
    pairs: int | None = None
    order_ratio: float | None = None        # the two per-order medians of the per-pair ratios, higher over lower
    tflops: float | None = None
    tbps: float | None = None
    bound_ms: float | None = None
    bound_fraction: float | None = None
    below_bound: bool | None = None
    copies: int | None = None               # replays back to back in one timed sample
    copy_first: float | None = None         # copies > 1: the first copy's speedup over the others', - 1
    copy_spread: float | None = None        # ... the farthest later copy's, - 1 (evaluator.timing.copy_profile)
    marks_excess_us: float | None = None    # ... what the marks between copies cost the candidate a call beyond the baseline (timing.marks_agree)
    seconds: float | None = None            # the judge's wall time on this scenario, its start to its row
    comparisons: dict[str, Comparison] | None = None

    def speedup_against(self, against: Terms) -> float | None:
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
class Seconds(Record):
    """Where an evaluation's wall time went: what a judgement costs, measured where it is
    paid. The parts do not add up to the total: loading the task and drawing scenarios are
    in no part; the wait for the GPU's turn (`gpu_wait_s`) is in none, the total included."""

    total: float
    build: float           # the task's and the candidate's builds (near 0 when cached)
    judge: float           # the workers: correctness and timing of every scenario
    comparisons: float     # the comparisons' timing after the judge's (FA3...; 0 without)


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
    seconds: Seconds | None = None          # where the wall time went (absent before session 25)

    def min_and_geomean(self, against: Terms) -> tuple[float | None, float | None]:
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
