"""`socratic eval` / `python -m socratic.evaluator`: evaluate a candidate on a task."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from socratic.contracts import ScenarioResult
from socratic.errors import InputError

if TYPE_CHECKING:
    from socratic.contracts import EvalResult
    from socratic.gpulock import Holder


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task_dir", metavar="TASK_DIR", help="task directory, or a bundled task name")
    p.add_argument("--candidate", metavar="FILE", help="the .cu file to evaluate (default: the baseline)")
    p.add_argument("--scenarios", metavar="SET|ID,..", help="a scenario set or a comma-separated list of ids")
    p.add_argument("--check-only", action="store_true", help="build and static ban checks only (no GPU)")
    p.add_argument("--list", action="store_true", help="list the scenario sets and ids, then exit")
    p.add_argument("--json", action="store_true",
                   help="print the result document on stdout; progress as JSON lines on stderr")
    p.add_argument("--seeds", type=int, metavar="N", help="input seeds per scenario (default: the task's)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-scenario timeout (default 60 s)")
    p.add_argument("--no-timing", action="store_true", help="correctness only")
    p.add_argument("--no-compare", action="store_true", help="skip comparison implementations")
    p.add_argument("--arch", metavar="SM",
                   help="nvcc arch to build for, e.g. sm_80, sm_90a (default: this GPU's; without one, "
                   "the task's first; also $SOCRATIC_ARCH)")
    p.add_argument("--hidden", type=int, metavar="N",
                   help="hidden scenarios drawn from the task's [hidden] space (default: its count; 0: none)")
    p.add_argument("--space", type=int, metavar="N",
                   help="evaluate N scenarios drawn from the task's [hidden] space, with a coverage "
                        "table per hidden field (a set `space:N@SEED`; no other hidden draws)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="with --space: the draw's seed (default: socratic picks one; the same seed "
                        "draws the same scenarios)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", help="build, check and time a candidate kernel against the baseline",
                       description="Build a candidate, check it for banned libraries, check every scenario "
                       "against the original kernel and an fp32 reference, and time it against the original.")
    add_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from socratic.evaluator import report
    from socratic.evaluator.runner import EvalOptions, evaluate
    from socratic.resources import resolve_task_dir
    from socratic.taskfile import load_task

    task_dir = resolve_task_dir(args.task_dir)
    if args.list and args.space is not None:   # the scenarios a space evaluation would draw
        label, drawn = load_task(task_dir).select(space_selection(args))
        if args.json:
            print(json.dumps({"set": label, "scenarios": [s.id for s in drawn]}, indent=1))
        else:
            print("\n".join([f"{label} ({len(drawn)} scenarios)", *(f"  {s.id}" for s in drawn)]))
        return 0
    if args.list:
        task = load_task(task_dir)
        if args.json:
            print(json.dumps({"task": task.name, "default_set": task.default_set,
                              "sets": {n: [s.id for s in scs] for n, scs in task.sets.items()},
                              "distributions": [{"name": d.name, "note": d.note} for d in task.distributions],
                              "hidden": report.hidden_space(task)}, indent=1))
        else:
            print(report.list_sets(task))
        return 0
    from socratic.taskfile import MAX_SPACE

    if args.hidden is not None and args.hidden < 0:
        raise InputError(f"--hidden must be 0 or more (got {args.hidden})")
    if args.hidden is not None and args.hidden > MAX_SPACE:   # a huge one drew for ever
        raise InputError(f"--hidden must be at most {MAX_SPACE}, like --space (got {args.hidden})")
    if args.candidate is not None and not args.candidate.strip():   # else: the baseline, unsaid
        raise InputError("--candidate: empty (give the .cu file; leave it out to evaluate the baseline)")
    if args.seeds is not None and args.seeds < 1:
        raise InputError(f"--seeds must be at least 1 (got {args.seeds})")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(f"--timeout must be a positive number of seconds (got {args.timeout})")
    if args.scenarios is not None and not args.scenarios.strip():
        raise InputError("--scenarios: empty (give a set name or scenario ids; --list shows them)")
    scenarios = space_selection(args)
    from socratic.taskfile import parse_space

    def progress(row: ScenarioResult, index: int, total: int) -> None:
        if args.json:
            print(json.dumps({"event": "scenario", "index": index, "total": total, **row.to_dict()}),
                  file=sys.stderr, flush=True)
        else:
            print(report.progress_line(row, index, total), file=sys.stderr, flush=True)

    def waiting(gpu: str, holder: Holder | None) -> None:
        held = holder.describe() if holder else "another evaluation"
        if args.json:
            print(json.dumps({"event": "gpu_wait", "gpu": gpu, "holder": held}), file=sys.stderr,
                  flush=True)
        else:
            print(f"waiting for GPU {gpu}: held by {held}", file=sys.stderr, flush=True)

    opts = EvalOptions(task_dir=task_dir, candidate=Path(args.candidate) if args.candidate else None,
                       scenarios=scenarios, check_only=args.check_only, seeds=args.seeds,
                       timeout_s=args.timeout, compare=not args.no_compare, time=not args.no_timing,
                       hidden=0 if parse_space(scenarios) and args.hidden is None else args.hidden,
                       arch=args.arch)
    result = evaluate(opts, progress, waiting)
    add_coverage(result, task_dir)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(report.table(result))
    return result.exit_code


def space_selection(args: argparse.Namespace) -> str | None:
    """`--space N [--seed S]` as the scenario selection `space:N[@S]` (the runner draws it
    through `Task.select`), checked here: one line and exit 2 for a bad value."""
    from socratic.taskfile import MAX_SPACE

    if args.space is None:
        if args.seed is not None:
            raise InputError("--seed goes with --space N (the seed of a space evaluation's draw)")
        chosen: str | None = args.scenarios
        return chosen
    if args.scenarios is not None:
        raise InputError("--space and --scenarios: give one (a space evaluation draws its own scenarios)")
    if not 1 <= args.space <= MAX_SPACE:
        raise InputError(f"--space must be 1 to {MAX_SPACE} (got {args.space})")
    if args.seed is not None and args.seed < 0:
        raise InputError(f"--seed must be 0 or more (got {args.seed})")
    return f"space:{args.space}" + (f"@{args.seed}" if args.seed is not None else "")


def add_coverage(result: EvalResult, task_dir: Path) -> None:
    """A space evaluation's result gets its coverage table (socratic.coverage)."""
    from socratic.coverage import build
    from socratic.taskfile import load_task, parse_space

    space = parse_space(result.set)
    if space is None or space.seed is None or not result.scenarios:
        return
    result.coverage = build(load_task(task_dir), result.scenarios, space.seed)


def standalone_main(argv: list[str] | None = None) -> int:
    """`python -m socratic.evaluator ...`: the same as `socratic eval ...`."""
    from socratic.cli import main
    return main(["eval", *(sys.argv[1:] if argv is None else argv)])
