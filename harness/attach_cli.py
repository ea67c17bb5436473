"""`socratic attach` and `socratic hook`. Cheap to import: the work is imported inside
the handlers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from socratic.errors import InputError


def register(sub) -> None:
    from socratic.harness import agentspec

    agents = agentspec.names()
    p = sub.add_parser(
        "attach", help="a campaign run by Claude Code, Codex CLI or Gemini CLI",
        description="Create a campaign session whose agent is an outside coding agent: the "
        "workspace gets the agent's instructions file, a ./evaluate command and hooks that "
        "call `socratic hook`, so the goal is checked whenever the agent tries to stop and "
        "questions reach it. Prints the session and the command that starts the agent.")
    p.add_argument("task", metavar="TASK_DIR", help="task directory or bundled task name")
    p.add_argument("--agent", required=True, choices=agents, help="the coding agent")
    p.add_argument("--session-dir", metavar="DIR", help="the session directory "
                   "(default: sessions/<date-time-task>)")
    p.add_argument("--model", help="model for the agent (passed to its --model)")
    p.add_argument("--auto-questions", action="store_true",
                   help="pose the bank's top suggestion at each trigger")
    p.add_argument("--max-tool-calls", type=int, metavar="N",
                   help="end the campaign after N tool calls")
    p.add_argument("--max-minutes", type=float, metavar="M",
                   help="end the campaign after M minutes")
    p.add_argument("--goal-min-speedup", type=float, metavar="X",
                   help="override the task's [goal] min_speedup")
    p.add_argument("--scenarios", metavar="SET", help="the goal's scenario set "
                   "(default: the task's default_set)")
    p.add_argument("--wait-minutes", type=float, metavar="M", default=50.0,
                   help="longest a hook holds the agent for a pause or, once it is stalled, "
                   "for your question (default 50)")
    p.add_argument("--launch", action="store_true",
                   help="start the agent in the workspace now (this terminal)")
    p.set_defaults(handler=handle_attach)

    p = sub.add_parser(
        "hook", help="called by an attached agent's hooks (reads its JSON on stdin)",
        description="The command every hook written by `socratic attach` runs: EVENT is "
        "session-start, prompt, post-tool or stop; the agent's JSON payload comes on stdin "
        "and the answer goes to stdout. `socratic hook evaluate` is the workspace's "
        "./evaluate.")
    p.add_argument("event", choices=("session-start", "prompt", "post-tool", "stop",
                                     "evaluate"))
    p.add_argument("--session", metavar="DIR",
                   help="the session (default: found from the workspace marker)")
    p.add_argument("--scenarios", metavar="SET", help="evaluate: the scenario set")
    p.set_defaults(handler=handle_hook)


def handle_attach(args) -> int:
    import math

    from socratic.harness.attach import attach
    from socratic.harness.config import Config
    from socratic.resources import resolve_task_dir

    for name in ("max_tool_calls", "max_minutes", "goal_min_speedup", "wait_minutes"):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v > 0):
            raise InputError(f"--{name.replace('_', '-')} {v}: must be positive")
    data = {"max_tool_calls": args.max_tool_calls, "max_minutes": args.max_minutes,
            "goal_min_speedup": args.goal_min_speedup, "scenarios": args.scenarios,
            "auto_questions": bool(args.auto_questions), "wait_for_human": True}
    if args.model:
        data["model"] = args.model
    config = Config.from_dict({k: v for k, v in data.items() if v is not None})
    a = attach(resolve_task_dir(args.task), args.agent, config,
               session_dir=Path(args.session_dir) if args.session_dir else None,
               model=args.model, wait_s=args.wait_minutes * 60)
    print(f"socratic: session {a.session.dir} ({a.spec.title}); watch it with "
          f"`socratic watch {a.session.dir}`", file=sys.stderr)
    print(f"socratic: start the agent with:\n  {a.launch_line}", file=sys.stderr)
    if not args.launch:
        return 0
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(a.spec.root_env)
    try:
        return subprocess.call(a.launch_argv, cwd=a.session.workspace, env=env)
    except FileNotFoundError:
        raise InputError(f"--launch: `{a.launch_argv[0]}` not found on PATH (install it: "
                         f"{a.spec.install})") from None


def handle_hook(args) -> int:
    started = time.monotonic()
    try:
        if args.event == "evaluate":
            from socratic.harness.hooks import find_session, run_evaluate

            session = Path(args.session) if args.session else find_session(os.getcwd())
            _, text = run_evaluate(session, args.scenarios)
            print(text)  # pass or fail is in the table: exit 0 so the agent reads it as output
            return 0
        from socratic.harness.hooks import run_hook

        raw = sys.stdin.read()
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise InputError(f"hook {args.event}: stdin is not JSON ({raw[:80]!r})") from None
        if not isinstance(payload, dict):
            raise InputError(f"hook {args.event}: stdin is not a JSON object")
        out = run_hook(args.event, payload, started,
                       Path(args.session) if args.session else None)
        print(json.dumps(out, ensure_ascii=False))
        return 0
    except InputError as exc:
        # never 2: to a hook's caller exit code 2 means "block this action"
        print(f"socratic: error: {exc}", file=sys.stderr)
        return 1
