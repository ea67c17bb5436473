"""`socratic fleet run` and `socratic fleet status`. Cheap to import: the work is imported
inside the handlers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from socratic.cliargs import path_text
from socratic.errors import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "fleet", help="many campaigns at once (a node's GPUs or a Slurm cluster)",
        description="Run the campaigns of a fleet file, each an ordinary session in the "
        "fleet's folder, and see them all at once.")
    verbs = p.add_subparsers(dest="fleet_verb", metavar="VERB")
    r = verbs.add_parser(
        "run", help="run (or continue) a fleet",
        description="Run every campaign of FLEET (a fleet file, or a fleet folder to "
        "continue) until each has ended. Local: at most max_parallel campaign processes, "
        "spread over the GPUs, the rest queued. Slurm: one job per campaign (a job array), "
        "requeued and resumed after preemption or time-out. Ctrl-C ends the running "
        "campaigns cleanly; running it again continues the fleet.")
    r.add_argument("fleet", type=path_text, metavar="FLEET", help="fleet file (TOML), or a fleet folder")
    r.add_argument("--session-dir", metavar="DIR", help="the fleet folder (default: "
                   "sessions/<date-time>-fleet-<file name>)")
    r.set_defaults(handler=handle_run)
    s = verbs.add_parser(
        "status", help="one row per campaign of a fleet",
        description="One row per campaign: session, task, agent, questions mode, state "
        "(queued, running, paused, waiting for a human, ended and why, stopped), "
        "evaluations, best geomean and min against the goal, last trigger, pending "
        "questions, cost.")
    s.add_argument("dir", type=path_text, metavar="DIR", help="the fleet folder")
    s.add_argument("--json", action="store_true",
                   help="one JSON document: {fleet, executor, campaigns: [row, ...]}")
    s.set_defaults(handler=handle_status)
    p.set_defaults(handler=lambda args: _no_verb(p))


def _no_verb(p) -> int:
    p.print_help(sys.stderr)
    return 2


def handle_run(args) -> int:
    from socratic.fleet.folder import COPY, Fleet, RunnerLock, default_dir, is_fleet, open_fleet
    from socratic.fleet.spec import load_fleet

    source = Path(args.fleet)
    if source.is_dir():
        if not is_fleet(source):
            raise InputError(f"{source}: not a fleet folder (no fleet.json); give a fleet file")
        if args.session_dir and Path(args.session_dir).resolve() != source.resolve():
            raise InputError(f"--session-dir {args.session_dir}: a fleet folder is continued "
                             f"where it is ({source})")
        # the manifest, not the copy of the fleet file: the copy's task paths are relative
        # to where the file was, not to this folder (a continuation said "no such task")
        spec = Fleet.load(source).spec(source / COPY)
        folder = source
    else:
        spec = load_fleet(source)
        folder = Path(args.session_dir) if args.session_dir else default_dir(source)
    _api_key(spec)   # the campaigns' processes (or Slurm jobs) inherit this environment
    if spec.executor == "local":
        _agents_on_path(spec)
    if spec.executor == "slurm":
        from socratic.fleet.slurm import check_slurm
        check_slurm(spec)   # submitit and sbatch present, parameters known: before any folder
    fleet = open_fleet(spec, folder)
    lock = RunnerLock(fleet.dir)
    try:
        if fleet.executor == "slurm":
            from socratic.fleet.slurm import SlurmExecutor
            code = SlurmExecutor(fleet).run()
        else:
            from socratic.fleet.local import LocalExecutor
            code = LocalExecutor(fleet).run()
    finally:
        lock.release()
    print(render(fleet.dir), file=sys.stderr)
    return code


def _api_key(spec) -> None:
    """socratic's own loop needs ANTHROPIC_API_KEY; an outside agent (claude, codex, gemini)
    may be logged in instead of holding a key, which only it can tell."""
    import os

    if any(not c.attached for c in spec.campaigns) and not os.environ.get("ANTHROPIC_API_KEY"):
        raise InputError("ANTHROPIC_API_KEY is not set (the campaigns' agents need it)")


def _agents_on_path(spec) -> None:
    """An outside agent's program is on PATH, before any folder is made (a Slurm node's
    PATH is its own: its job says)."""
    import shutil

    from socratic.harness import headless_agents

    programs = headless_agents()
    for agent in dict.fromkeys(c.agent for c in spec.campaigns if c.attached):
        program = programs.get(agent, agent)
        if shutil.which(program) is None:
            raise InputError(f"{spec.path}: agent {agent}: `{program}` is not on PATH (install "
                             f"it, or put its bin folder on PATH)")


def _fmt(v, spec: str) -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def render(path: Path) -> str:
    """The status table as text."""
    from socratic.fleet.status import fleet_rows

    rows = fleet_rows(path)
    head = ("campaign", "task", "agent", "questions", "state", "evals", "geomean", "min",
            "goal", "trigger", "pending", "cost", "gpu/job")
    table = [head]
    for r in rows:
        state = r.state + (f": {r.reason}" if r.state == "ended" and r.reason else "")
        if r.detail:
            state += " (NOT goal met)"
        if r.gpu_waiting:
            state += " (waiting for its GPU turn)"
        goal = (f"{r.goal:g}x" + (" met" if r.met else "")) if r.goal is not None else "-"
        table.append((r.name, r.task, r.agent, r.questions, state, str(r.evaluations),
                      _fmt(r.best_geomean, ".3f"), _fmt(r.best_min, ".3f"), goal,
                      r.last_trigger or "-", str(r.pending), f"${r.cost_usd:.2f}",
                      r.gpu if r.gpu is not None else (r.job or "-")))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip() for row in table]
    lines += [f"{r.name}: {r.detail}" for r in rows if r.detail]   # why its end is no result
    return "\n".join(lines)


def handle_status(args) -> int:
    from socratic.fleet.folder import Fleet
    from socratic.fleet.status import fleet_rows

    path = Path(args.dir)
    fleet = Fleet.load(path)
    if args.json:
        rows = fleet_rows(path)
        print(json.dumps({"fleet": str(path), "executor": fleet.executor,
                          "campaigns": [r.to_dict() for r in rows]}, indent=1))
    else:
        print(render(path))
    return 0
