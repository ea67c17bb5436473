"""Fleets on a multi-GPU node: one campaign per GPU, each evaluating on its own GPU at the
same time, with the figures the candidate has alone; and two campaigns sharing one GPU,
taking turns, with clean timings. Run by hand on a GPU node (one GPU or several), from the
repository root, with the harness's packages importable (anthropic: the campaigns' client):

    python benchmarks/fleet_gpus_check.py --out /tmp/fleet_gpus
    python benchmarks/fleet_gpus_check.py --candidate tests/candidates/fa3_h200_best.cu \\
        --out benchmarks/results/fleet_gpus_h200

1. solo: for each visible GPU in turn (nothing else running), one `socratic eval TASK
   --json` of the candidate with CUDA_VISIBLE_DEVICES=<that GPU>, comparisons on: the
   reference figures and the GPU's UUID (the result's `gpu_lock`).
2. one per GPU: `socratic fleet run` of as many campaigns as GPUs (gpus = "all",
   max_parallel = N); a scripted agent behind the local fake Anthropic API writes the
   candidate into its workspace (write_file candidate.cu) and calls `evaluate` --evals
   times. Checks: every evaluation correct and carrying a GPU UUID, one UUID per campaign,
   the campaigns' UUIDs pairwise distinct and each the solo run's on the GPU the fleet gave
   it, all N campaigns evaluating at one moment (eval.start..eval.end windows), and each
   evaluation's figures within --tol of the solo run on its GPU.
3. sharing (unless --skip-sharing): two campaigns on the first GPU (gpus = [it],
   max_parallel = 2): they took turns (eval.wait events, some gpu_wait_s > 0) and every
   evaluation is correct, on that GPU, with its figures within --tol of the solo run.

Figures of one evaluation, over the listed scenarios (never the hidden ones, which each
evaluation draws anew): per scenario the speedup against the original and, for each
comparison timed in it (fa3, cudnn, fa2...), the candidate's speedup against that one. The
check is on each figure's geomean over the scenarios (within --tol, default 1%); the worst
per-scenario deviation is printed beside it, not checked (one scenario's noise on a GPU is
~0.5-1%). Every evaluator JSON is copied to --out (PHASE-CAMPAIGN-gpuG-eN.json, and each
campaign's events as PHASE-CAMPAIGN-events.jsonl) with summary.json (the table, the
checks). Exit 0 when every check holds, 1 when one fails, 2 (one line) for bad input.

The GPU node has no network: carry anthropic and its requirements as wheels and put them
on PYTHONPATH before running (`pip install --no-index --no-deps --target DIR WHEELS`).
SOCRATIC_EVALUATOR, when set, names the evaluator for every phase (the CPU tests use the
fake one).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))   # fleetbench, when imported by tests
from fleetbench import CampaignRun, fleet_toml, run_fleet, scripted_agent

SCHEMA = "socratic.fleet_gpus_check/1"
UUID_PREFIXES = ("GPU-", "MIG-")
PHASES = ("solo", "one_per_gpu", "sharing")
# what the campaigns' harness and the evaluator import: missing, nothing can run
NEEDED = (("anthropic", "anthropic"), ("numpy", "numpy"), ("cuda.bindings", "cuda-bindings"))
SOLO_TIMEOUT_S = 1800.0


class BadInput(Exception):
    """Bad input: the script says it in one line and exits 2."""


# --------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figures:
    """What one evaluation says about the candidate, to compare evaluations by."""

    uuid: str | None                    # the result's gpu_lock: the GPU's UUID (else index-N)
    sha256: str | None                  # the candidate's
    correct: bool                       # built, no ban, every scenario (hidden too) correct
    speedup: dict[str, float]           # scenario id -> speedup against the original
    vs: dict[str, dict[str, float]]     # comparison -> scenario id -> speedup against it
    gpu_wait_s: float = 0.0
    unavailable: dict[str, str] = field(default_factory=dict)   # comparisons that did not run
    problem: str | None = None          # not an evaluation result at all

    def metrics(self) -> dict[str, dict[str, float]]:
        """Every figure by name: `speedup`, then `vs NAME` for each comparison."""
        return {"speedup": self.speedup, **{f"vs {n}": v for n, v in sorted(self.vs.items())}}


def failed_figures(problem: str) -> Figures:
    return Figures(None, None, False, {}, {}, problem=problem)


def figures(doc: Any) -> Figures:
    """The figures of an evaluator result document (`socratic.eval/1`); one that is not
    one (the harness's record of an evaluator failure, say) has `problem` set."""
    from socratic.contracts import ContractError, parse_eval

    if isinstance(doc, dict) and "schema" not in doc and doc.get("error"):
        return failed_figures(f"no result: {str(doc['error'])[:200]}")
    try:
        result = parse_eval(doc)
    except ContractError as exc:
        return failed_figures(str(exc)[:300])
    speedup: dict[str, float] = {}
    vs: dict[str, dict[str, float]] = {}
    for row in result.scenarios:   # the listed set: hidden rows differ between evaluations
        if not row.correct:
            continue
        if row.speedup and row.speedup > 0:
            speedup[row.id] = float(row.speedup)
        for name, comp in (row.comparisons or {}).items():
            if comp.speedup and comp.speedup > 0:
                vs.setdefault(name, {})[row.id] = float(comp.speedup)
    return Figures(
        uuid=result.gpu_lock, sha256=result.candidate.sha256,
        correct=result.exit_code == 0 and result.summary.all_correct,
        speedup=speedup, vs=vs, gpu_wait_s=float(result.gpu_wait_s or 0.0),
        unavailable=dict(result.comparisons_unavailable or {}))


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


@dataclass(frozen=True)
class Deviation:
    """One figure of an evaluation against the same figure of the reference (solo) run."""

    metric: str                         # speedup | vs fa3 | ...
    geomean: float | None
    ref: float | None
    dev: float | None                   # geomean / ref - 1: what is checked
    worst_scenario: str | None          # the scenario furthest from the reference's
    worst_dev: float | None             # ... its value / reference's - 1 (printed only)
    problem: str | None = None

    def ok(self, tol: float) -> bool:
        return self.problem is None and self.dev is not None and abs(self.dev) <= tol


def deviations(fig: Figures, ref: Figures) -> list[Deviation]:
    """Each of the reference's figures in `fig`: geomean deviation and worst scenario.
    A figure the reference has and `fig` lacks, or over other scenarios, is a problem."""
    out: list[Deviation] = []
    mine = fig.metrics()
    for metric, ref_vals in ref.metrics().items():
        vals = mine.get(metric) or {}
        ref_gm = geomean(ref_vals.values())
        if not ref_vals:
            out.append(Deviation(metric, geomean(vals.values()), None, None, None, None,
                                 "the reference has no timed scenario"))
            continue
        if not vals:
            out.append(Deviation(metric, None, ref_gm, None, None, None,
                                 f"missing (the reference has it on {len(ref_vals)} scenarios)"))
            continue
        common = sorted(set(vals) & set(ref_vals))
        problem = None
        if set(vals) != set(ref_vals):
            only_ref, only_mine = sorted(set(ref_vals) - set(vals)), sorted(set(vals) - set(ref_vals))
            problem = (f"other scenarios than the reference (missing {only_ref[:3]}, "
                       f"extra {only_mine[:3]})")
        gm = geomean(vals[s] for s in common)
        rgm = geomean(ref_vals[s] for s in common)
        per = {s: vals[s] / ref_vals[s] - 1 for s in common}
        worst = max(per, key=lambda s: abs(per[s])) if per else None
        out.append(Deviation(metric, gm, rgm, gm / rgm - 1 if gm and rgm else None, worst,
                             per[worst] if worst else None, problem))
    return out


def worst(devs: Iterable[Deviation], attr: str = "dev") -> float | None:
    """The deviation furthest from 0 (signed), over figures and evaluations."""
    vals = [v for d in devs if (v := getattr(d, attr)) is not None]
    return max(vals, key=abs) if vals else None


# --------------------------------------------------------------------------- GPUs, time


def is_uuid(key: str | None) -> bool:
    """A GPU's UUID as the evaluator records it (gpu_lock), not its `index-N` fallback."""
    return bool(key) and str(key).upper().startswith(UUID_PREFIXES)


def duplicate_uuids(by_campaign: Mapping[str, str | None]) -> dict[str, list[str]]:
    """{uuid: campaigns} for every UUID more than one campaign evaluated on."""
    seen: dict[str, list[str]] = {}
    for name, uuid in by_campaign.items():
        if uuid is not None:
            seen.setdefault(uuid, []).append(name)
    return {u: names for u, names in seen.items() if len(names) > 1}


def one_uuid(figs: Sequence[Figures]) -> tuple[str | None, str | None]:
    """(the UUID all of a campaign's evaluations ran on, else None; what is wrong, if any)."""
    keys = [f.uuid for f in figs]
    if not keys:
        return None, "no evaluation"
    bad = [k for k in keys if not is_uuid(k)]
    if bad:
        return None, f"evaluation without a GPU UUID (gpu_lock {bad[0]!r})"
    if len(set(keys)) > 1:
        return None, f"evaluations on different GPUs: {', '.join(sorted(set(map(str, keys))))}"
    return keys[0], None


@dataclass(frozen=True)
class Window:
    """An evaluation's wall-clock span (epoch seconds: eval.start to eval.end)."""

    campaign: str
    start: float
    end: float


def overlap(windows: Sequence[Window]) -> tuple[int, float]:
    """(the most campaigns evaluating at one moment, seconds during which every campaign
    was evaluating). Spans that only touch do not overlap."""
    campaigns = {w.campaign for w in windows}
    # at equal times the ends come first: [a, b] and [b, c] share no moment
    spans = [w for w in windows if w.end > w.start]
    points = sorted([(w.start, 1, w.campaign) for w in spans] + [(w.end, -1, w.campaign) for w in spans],
                    key=lambda p: (p[0], p[1]))
    active: Counter[str] = Counter()
    peak, together, last = 0, 0.0, None
    for t, step, name in points:
        if last is not None and len(active) == len(campaigns):
            together += t - last
        active[name] += step
        if active[name] <= 0:
            del active[name]
        peak = max(peak, len(active))
        last = t
    return peak, together


# --------------------------------------------------------------------------- the table


@dataclass
class Row:
    """One line of the table: a solo evaluation or a campaign."""

    phase: str
    campaign: str
    gpu: str | None
    uuid: str | None
    evals: int
    speedup: float | None               # geomean over scenarios (geomean over its evaluations)
    vs: float | None                    # ... against the headline comparison (fa3)
    dev: float | None                   # the worst geomean deviation from solo (None: solo)
    worst_scenario_dev: float | None    # the worst scenario's deviation (printed only)
    wait_s: float
    ok: bool
    problems: list[str] = field(default_factory=list)


@dataclass
class Check:
    phase: str
    what: str
    ok: bool
    detail: str = ""


def headline(figs: Iterable[Figures]) -> str | None:
    """The comparison the table shows: fa3 where timed, else the first timed one."""
    names = sorted({n for f in figs for n in f.vs})
    return "fa3" if "fa3" in names else (names[0] if names else None)


def _num(x: float | None, fmt: str = "{:.4f}") -> str:
    return fmt.format(x) if x is not None else "-"


def _pct(x: float | None) -> str:
    return f"{x * 100:+.2f}%" if x is not None else "-"


def short_uuid(uuid: str | None) -> str:
    return uuid[:12] if uuid else "-"


def format_table(rows: Sequence[Row], vs_name: str | None) -> str:
    head = ["phase", "campaign", "gpu", "uuid", "evals", "speedup", f"vs {vs_name or '-'}",
            "dev", "worst scen", "wait s", "result"]
    body = [[r.phase, r.campaign, (short_uuid(r.gpu) if is_uuid(r.gpu) else r.gpu) or "-",
             short_uuid(r.uuid), str(r.evals),
             _num(r.speedup), _num(r.vs), _pct(r.dev), _pct(r.worst_scenario_dev),
             f"{r.wait_s:.1f}", "PASS" if r.ok else "FAIL"] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, body)])


# --------------------------------------------------------------------------- the run


@dataclass
class Setup:
    task_dir: Path
    task: str
    set_label: str
    scenarios: str | None
    candidate: Path
    text: str
    evals: int
    tol: float
    out: Path
    gpus: list[str]
    evaluator: list[str]


@dataclass
class Evaluation:
    """One evaluation as recorded in summary.json."""

    phase: str
    campaign: str
    gpu: str | None
    n: int
    file: str | None
    uuid: str | None
    correct: bool
    gpu_wait_s: float
    start: float | None = None
    end: float | None = None
    problem: str | None = None
    deviations: list[dict[str, Any]] = field(default_factory=list)


def tag(gpu: str | None) -> str:
    """A GPU as written (index or UUID), fit for a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", gpu or "none")


def evaluator_argv() -> list[str]:
    """The evaluator every phase runs: the campaigns' ($SOCRATIC_EVALUATOR, else socratic's)."""
    env = os.environ.get("SOCRATIC_EVALUATOR")
    if env:
        try:
            return shlex.split(env)
        except ValueError as exc:
            raise BadInput(f"$SOCRATIC_EVALUATOR {env!r}: not shell words ({exc})") from None
    return [sys.executable, "-m", "socratic.evaluator"]


def solo_eval(s: Setup, gpu: str) -> tuple[Figures, str, float]:
    """One evaluation of the candidate on `gpu` alone: (figures, the JSON text, seconds)."""
    argv = [*s.evaluator, str(s.task_dir), "--candidate", str(s.candidate), "--json"]
    if s.scenarios:
        argv += ["--scenarios", s.scenarios]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=SOLO_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return failed_figures(f"the evaluation outlasted {SOLO_TIMEOUT_S:.0f} s"), "", SOLO_TIMEOUT_S
    took = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        lines = [ln for ln in p.stderr.splitlines() if ln.strip() and '"event"' not in ln]
        why = lines[-1][:300] if lines else "no output"
        return failed_figures(f"the evaluator failed (exit {p.returncode}): {why}"), p.stdout, took
    return figures(doc), p.stdout, took


def describe(fig: Figures, vs_name: str | None) -> str:
    if fig.problem:
        return fig.problem
    vs = geomean((fig.vs.get(vs_name) or {}).values()) if vs_name else None
    extra = f", vs {vs_name} {vs:.4f}" if vs is not None else ""
    gone = f", unavailable: {', '.join(sorted(fig.unavailable))}" if fig.unavailable else ""
    return (f"{fig.uuid}, {'correct' if fig.correct else 'NOT correct'}, speedup "
            f"{_num(geomean(fig.speedup.values()))}{extra}{gone}")


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    overlap: dict[str, Any] = field(default_factory=dict)
    vs_name: str | None = None          # the comparison the table shows (the solo runs')

    def check(self, phase: str, what: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(phase, what, bool(ok), detail))
        print(f"  {'ok  ' if ok else 'FAIL'} {phase}: {what}" + (f" ({detail})" if detail else ""),
              flush=True)
        return bool(ok)


def solo_phase(s: Setup, rep: Report) -> dict[str, Figures]:
    print(f"solo: the candidate alone on each of {len(s.gpus)} GPU(s), one after another",
          flush=True)
    solo: dict[str, Figures] = {}
    for gpu in s.gpus:
        fig, text, took = solo_eval(s, gpu)
        name = f"solo-gpu{tag(gpu)}-e1.json"
        if text.strip():
            (s.out / name).write_text(text, encoding="utf-8")
        solo[gpu] = fig
        print(f"solo: GPU {gpu}: {describe(fig, headline([fig]))} ({took:.0f} s)", flush=True)
        problems = [p for p in (fig.problem, None if fig.correct else "not correct",
                                None if is_uuid(fig.uuid) else f"no GPU UUID ({fig.uuid!r})",
                                None if fig.speedup else "no timed scenario") if p]
        rep.check("solo", f"GPU {gpu}: correct, timed, on a GPU UUID", not problems,
                  "; ".join(problems))
        rep.evaluations.append(Evaluation("solo", "solo", gpu, 1, name if text.strip() else None,
                                          fig.uuid, fig.correct, fig.gpu_wait_s,
                                          problem=fig.problem))
        rep.rows.append(Row("solo", "solo", gpu, fig.uuid, 1, geomean(fig.speedup.values()),
                            None, None, None, fig.gpu_wait_s, not problems, problems))
    rep.vs_name = headline(solo.values())
    for row in rep.rows:
        row.vs = geomean((solo[row.gpu or ""].vs.get(rep.vs_name) or {}).values()) \
            if rep.vs_name else None
    dups = duplicate_uuids({g: f.uuid for g, f in solo.items()})
    rep.check("solo", "each GPU has its own UUID", not dups,
              "; ".join(f"{u} on GPUs {', '.join(gs)}" for u, gs in dups.items()))
    return solo


def campaign_rows(s: Setup, rep: Report, phase: str, campaigns: list[CampaignRun],
                  solo: dict[str, Figures]) -> dict[str, str | None]:
    """Check each campaign's evaluations against the solo run on its GPU; copy its files.
    Returns each campaign's UUID."""
    uuids: dict[str, str | None] = {}
    for c in campaigns:
        ref = solo.get(c.gpu or "")
        figs: list[Figures] = []
        devs: list[Deviation] = []
        problems: list[str] = []
        if (c.dir / "events.jsonl").exists():   # the evaluations' times, the waits
            shutil.copyfile(c.dir / "events.jsonl", s.out / f"{phase}-{c.name}-events.jsonl")
        for e in c.evals:
            name = f"{phase}-{c.name}-gpu{tag(c.gpu)}-e{e.n}.json"
            if e.result is not None and e.result.exists():
                shutil.copyfile(e.result, s.out / name)
                try:
                    fig = figures(json.loads(e.result.read_text(encoding="utf-8")))
                except (OSError, json.JSONDecodeError) as exc:
                    fig = failed_figures(f"{e.result}: unreadable ({exc})")
            else:
                fig, name = failed_figures("no saved result"), ""
            figs.append(fig)
            ev_devs = deviations(fig, ref) if ref is not None and not fig.problem else []
            devs += ev_devs
            bad = [d for d in ev_devs if not d.ok(s.tol)]
            where = f"eval {e.n}"
            if fig.problem:
                problems.append(f"{where}: {fig.problem}")
            elif not fig.correct:
                problems.append(f"{where}: not correct")
            if ref is not None and fig.sha256 and ref.sha256 and fig.sha256 != ref.sha256:
                problems.append(f"{where}: another candidate (sha256 {fig.sha256[:12]})")
            for d in bad:
                problems.append(f"{where}: {d.metric} " + (d.problem or f"geomean {_pct(d.dev)}"))
            rep.evaluations.append(Evaluation(
                phase, c.name, c.gpu, e.n, name or None, fig.uuid, fig.correct, fig.gpu_wait_s,
                e.start, e.end, fig.problem, [asdict(d) for d in ev_devs]))
            print(f"{phase}: {c.name} eval {e.n} on GPU {c.gpu}: {describe(fig, headline([fig]))}; "
                  f"worst figure {_pct(worst(ev_devs))}, worst scenario "
                  f"{_pct(worst(ev_devs, 'worst_dev'))}, waited {fig.gpu_wait_s:.1f} s", flush=True)
        if ref is None:
            problems.append(f"no solo run on its GPU ({c.gpu!r})")
        if len(c.evals) != s.evals:
            problems.append(f"{len(c.evals)} evaluations, not {s.evals}")
        if c.end_reason is None:
            problems.append("the campaign did not end")
        uuid, why = one_uuid(figs)
        if why:
            problems.append(why)
        elif ref is not None and uuid != ref.uuid:
            problems.append(f"on {uuid}, not its GPU's {ref.uuid}")
        uuids[c.name] = uuid
        gms = [geomean(f.speedup.values()) for f in figs]
        vss = [geomean((f.vs.get(rep.vs_name) or {}).values()) for f in figs] if rep.vs_name else []
        rep.rows.append(Row(
            phase, c.name, c.gpu, uuid, len(c.evals),
            geomean(g for g in gms if g), geomean(v for v in vss if v),
            worst(devs), worst(devs, "worst_dev"),
            sum(f.gpu_wait_s for f in figs), not problems, problems))
        rep.check(phase, f"{c.name} on GPU {c.gpu}: {s.evals} correct evaluations on its GPU's "
                  f"UUID, figures within {s.tol:.1%} of solo", not problems, "; ".join(problems[:4]))
    return uuids


def fleet_options(s: Setup) -> dict[str, Any]:
    # a goal the candidate meets (the stop hook reuses the last evaluation): the campaign ends
    # goal_met after its scripted evaluations, and no comparison's absence can stall it
    opts: dict[str, Any] = {"max_turns": s.evals + 3, "goal_min_speedup": 0.01,
                            "goal_against": "baseline"}
    if s.scenarios:
        opts["scenarios"] = s.scenarios
    return opts


def agent_for(s: Setup):
    return scripted_agent([("write_file", {"path": "candidate.cu", "content": s.text}),
                           *[("evaluate", {})] * s.evals])


def one_per_gpu_phase(s: Setup, rep: Report, solo: dict[str, Figures], work: Path) -> None:
    n = len(s.gpus)
    print(f"one_per_gpu: a fleet of {n} campaign(s), gpus = \"all\", {s.evals} evaluations each",
          flush=True)
    spec = fleet_toml(str(s.task_dir), n, max_parallel=n, gpus="all", options=fleet_options(s))
    code, campaigns = run_fleet(spec, work / "one_per_gpu", agent_for(s))
    rep.check("one_per_gpu", "the fleet ran every campaign to its end", code == 0
              and len(campaigns) == n, f"exit code {code}, {len(campaigns)} campaigns")
    given = [c.gpu for c in campaigns]
    rep.check("one_per_gpu", "the fleet gave each campaign its own GPU",
              sorted(map(str, given)) == sorted(s.gpus), f"GPUs given: {', '.join(map(str, given))}")
    uuids = campaign_rows(s, rep, "one_per_gpu", campaigns, solo)
    dups = duplicate_uuids(uuids)
    rep.check("one_per_gpu", "the campaigns' GPU UUIDs are pairwise distinct",
              not dups and all(uuids.values()),
              "; ".join(f"{u}: {', '.join(cs)}" for u, cs in dups.items()))
    windows = [Window(c.name, e.start, e.end) for c in campaigns for e in c.evals
               if e.start is not None]
    peak, together = overlap(windows)
    rep.overlap = {"campaigns": n, "peak": peak, "all_at_once_s": round(together, 3),
                   "windows": [asdict(w) for w in windows]}
    rep.check("one_per_gpu", f"all {n} campaigns evaluated at the same time",
              peak == n and (n == 1 or together > 0),
              f"at most {peak} at once; all {n} together for {together:.1f} s")


def sharing_phase(s: Setup, rep: Report, solo: dict[str, Figures], work: Path) -> None:
    gpu = s.gpus[0]
    print(f"sharing: two campaigns on GPU {gpu} only, {s.evals} evaluations each", flush=True)
    spec = fleet_toml(str(s.task_dir), 2, max_parallel=2, gpus=[gpu], options=fleet_options(s))
    code, campaigns = run_fleet(spec, work / "sharing", agent_for(s))
    rep.check("sharing", "the fleet ran both campaigns to their end",
              code == 0 and len(campaigns) == 2, f"exit code {code}, {len(campaigns)} campaigns")
    rep.check("sharing", f"both campaigns were given GPU {gpu}",
              all(c.gpu == gpu for c in campaigns), ", ".join(str(c.gpu) for c in campaigns))
    campaign_rows(s, rep, "sharing", campaigns, solo)
    waits = sum(c.waits for c in campaigns)
    waited = max((e.gpu_wait_s or 0.0 for c in campaigns for e in c.evals), default=0.0)
    rep.check("sharing", "the campaigns took turns for the GPU", waits > 0 and waited > 0,
              f"{waits} eval.wait events, longest wait {waited:.1f} s")


def prepare(args: argparse.Namespace) -> Setup:
    """Every input checked (BadInput, one line) before anything runs."""
    if args.evals < 1:
        raise BadInput(f"--evals must be 1 or more (got {args.evals})")
    if not (math.isfinite(args.tol) and 0 < args.tol < 1):
        raise BadInput(f"--tol must be a fraction between 0 and 1, e.g. 0.01 (got {args.tol})")
    if importlib.util.find_spec("socratic") is None:
        raise BadInput("socratic is not importable: run `pip install -e .` in the repository root")
    from socratic.errors import InputError
    from socratic.gpuinfo import visible_gpus
    from socratic.resources import resolve_task_dir
    from socratic.taskfile import load_task

    try:
        task_dir = resolve_task_dir(args.task)
        if not task_dir.is_dir():
            raise BadInput(f"{args.task}: not a task directory")
        task = load_task(task_dir)
        label, _ = task.select(args.scenarios)
    except InputError as exc:
        raise BadInput(str(exc)) from None
    candidate = Path(args.candidate) if args.candidate else task.baseline
    if candidate.is_dir():
        raise BadInput(f"--candidate {candidate}: is a folder, not a candidate file")
    if not candidate.is_file():
        raise BadInput(f"--candidate {candidate}: no such candidate file")
    try:
        text = candidate.read_bytes().decode("utf-8")   # as is: the campaigns write these bytes
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--candidate {candidate}: cannot read it as text ({exc})") from None
    if not text.strip():
        raise BadInput(f"--candidate {candidate}: empty")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"--out {out}: cannot create it ({exc.strerror or exc})") from None
    evaluator = evaluator_argv()
    for module, package in NEEDED:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:   # its parent package (cuda) is missing
            found = False
        if not found:
            raise BadInput(f"the harness's Python package `{package}` is missing (import "
                           f"{module}): install it, or carry its wheels onto PYTHONPATH")
    gpus = visible_gpus(os.environ)
    if not gpus:
        where = ("CUDA_VISIBLE_DEVICES is empty" if "CUDA_VISIBLE_DEVICES" in os.environ
                 else "nvidia-smi lists none and CUDA_VISIBLE_DEVICES is unset")
        raise BadInput(f"no GPU visible ({where}): run this on a GPU node")
    if not os.environ.get("SOCRATIC_EVALUATOR"):
        from socratic.gpuinfo import gpu_present
        why = gpu_present()
        if why:
            raise BadInput(f"no GPU usable: {why}")
    return Setup(task_dir.resolve(), task.name, label, args.scenarios, candidate.resolve(), text,
                 args.evals, args.tol, out, gpus, evaluator)


def summary_doc(s: Setup, rep: Report, solo: dict[str, Figures], ok: bool,
                started: str) -> dict[str, Any]:
    import hashlib

    return {
        "schema": SCHEMA, "started": started,
        "ended": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(), "task": s.task, "set": s.set_label,
        "candidate": str(s.candidate),
        "candidate_sha256": hashlib.sha256(s.text.encode()).hexdigest(),
        "evals": s.evals, "tol": s.tol, "evaluator": s.evaluator, "vs": rep.vs_name,
        "gpus": [{"gpu": g, "uuid": solo[g].uuid if g in solo else None} for g in s.gpus],
        "rows": [asdict(r) for r in rep.rows], "checks": [asdict(c) for c in rep.checks],
        "overlap": rep.overlap, "evaluations": [asdict(e) for e in rep.evaluations],
        "pass": ok,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--task", default="flash_attn_fwd", help="bundled task name or directory")
    ap.add_argument("--candidate", metavar="PATH", help="the .cu file (default: the task's baseline)")
    ap.add_argument("--scenarios", metavar="SET|IDS", help="default: the task's default set (bench)")
    ap.add_argument("--evals", type=int, default=2, help="evaluations per campaign (default 2)")
    ap.add_argument("--tol", type=float, default=0.01,
                    help="largest geomean deviation from solo, a fraction (default 0.01)")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="where the evaluator JSONs and summary.json go")
    ap.add_argument("--skip-sharing", action="store_true", help="no two-campaigns-one-GPU phase")
    args = ap.parse_args(argv)
    try:
        s = prepare(args)
    except BadInput as exc:
        print(f"fleet_gpus_check: {exc}", file=sys.stderr)
        return 2
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    print(f"task {s.task} ({s.set_label}), candidate {s.candidate}, GPUs {', '.join(s.gpus)}, "
          f"{s.evals} evaluations a campaign, tolerance {s.tol:.1%}", flush=True)
    rep = Report()
    solo = solo_phase(s, rep)
    with tempfile.TemporaryDirectory(prefix="fleet_gpus_") as tmp:
        one_per_gpu_phase(s, rep, solo, Path(tmp))
        if not args.skip_sharing:
            sharing_phase(s, rep, solo, Path(tmp))
    ok = bool(rep.checks) and all(c.ok for c in rep.checks)
    (s.out / "summary.json").write_text(json.dumps(summary_doc(s, rep, solo, ok, started),
                                                   indent=1), encoding="utf-8")
    failed = [c for c in rep.checks if not c.ok]
    print()
    for c in failed:
        print(f"FAIL {c.phase}: {c.what}" + (f" ({c.detail})" if c.detail else ""))
    print(format_table(rep.rows, rep.vs_name))
    print(f"{'PASS' if ok else 'FAIL'}: {len(rep.checks) - len(failed)}/{len(rep.checks)} checks "
          f"hold; evaluator JSONs and summary.json in {s.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
