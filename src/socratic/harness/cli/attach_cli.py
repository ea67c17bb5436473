"""`socratic attach` and `socratic hook`. Cheap to import: the work is imported inside
the handlers."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

from socratic.cliargs import path_text
from socratic.errors import InputError


def register(sub) -> None:
    from socratic.harness.attached import agentspec
    from socratic.harness.cli import add_goal_options

    agents = agentspec.names()
    p = sub.add_parser(
        "attach", help="a campaign run by Claude Code, Codex CLI, Gemini CLI, or by hand",
        description="Create a campaign session whose agent is an outside coding agent: the "
        "workspace gets the agent's instructions file, a ./evaluate command and hooks that "
        "call `socratic hook`, so the goal is checked whenever the agent tries to stop and "
        "questions reach it. Prints the session and the command that starts the agent. "
        "--agent manual: no agent and no hooks; prints the `socratic hook` commands that "
        "drive the campaign by hand (evaluations may be imported from a GPU node).")
    p.add_argument("task", metavar="TASK_DIR", help="task directory or bundled task name "
                   "(with --resume: the session directory)")
    p.add_argument("--agent", choices=agents, help="the coding agent (required, except with "
                   "--resume)")
    p.add_argument("--session-dir", metavar="DIR", help="the session directory "
                   "(default: sessions/<date-time-task>)")
    p.add_argument("--model", help="model for the agent (passed to its --model)")
    add_goal_options(p)
    p.add_argument("--wait-minutes", type=float, metavar="M", default=50.0,
                   help="longest a hook holds the agent for a pause or, once it is stalled, "
                   "for your question (default 50)")
    p.add_argument("--launch", action="store_true",
                   help="start the agent in the workspace now (this terminal)")
    p.add_argument("--headless", action="store_true",
                   help="run the agent non-interactively in the workspace until it exits "
                   "(its output in SESSION/agent.log), then settle the campaign's end: "
                   "`hooks_silent` when its hooks did not report its tools or its stop")
    p.add_argument("--resume", action="store_true",
                   help="with --headless: go on with the attached session TASK_DIR names")
    p.add_argument("--wait-for-human", action="store_true",
                   help="with --headless: a stalled agent waits for your question (typed in "
                   "the TUI) instead of ending stalled; interactive attaches always wait")
    p.set_defaults(handler=handle_attach)

    p = sub.add_parser(
        "agent", help="start an attached session's agent confined (in its workspace)",
        description="Starts the coding agent of the attached session whose workspace this "
        "is (or --session) as `attach --launch` does: the session server first, then the "
        "agent in a Landlock domain (it writes only its workspace, its own config folders "
        "and a private temporary folder), its hooks loaded from a file it cannot edit. "
        "ARGS replace the agent's launch arguments (default: its launch prompt).")
    p.add_argument("name", choices=[n for n in agents if n != "manual"], metavar="NAME",
                   help="the agent: " + ", ".join(n for n in agents if n != "manual"))
    p.add_argument("--session", type=path_text, metavar="DIR", help="the session (default: found from the "
                   "workspace marker)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="the agent's own arguments")
    p.set_defaults(handler=handle_agent)

    p = sub.add_parser(
        "hook", help="called by an attached agent's hooks (reads its JSON on stdin), or by hand",
        description="The command every hook written by `socratic attach` runs: EVENT is "
        "session-start, prompt, post-tool or stop; the agent's JSON payload comes on stdin "
        "and the answer goes to stdout. `socratic hook evaluate` is the workspace's "
        "./evaluate. By hand (--agent manual): `evaluate [--import RESULT.json]`, `say TEXT` "
        "and `stop [--give-up REASON]`, no stdin.")
    p.add_argument("event", choices=("session-start", "prompt", "post-tool", "stop",
                                     "evaluate", "say", "serve"), metavar="EVENT",
                   help="an agent's hook: session-start, prompt, post-tool, stop; by hand or "
                   "./evaluate: evaluate, say, stop")
    p.add_argument("text", nargs="?", metavar="TEXT",
                   help="say: the agent's text (- reads it from stdin)")
    p.add_argument("--session", type=path_text, metavar="DIR",
                   help="the session (default: found from the workspace marker)")
    p.add_argument("--scenarios", metavar="SET", help="evaluate: the scenario set")
    p.add_argument("--import", dest="import_file", metavar="RESULT.json",
                   help="evaluate: record `socratic eval TASK --candidate FILE --json`'s "
                   "result, made on another machine, instead of evaluating here")
    p.add_argument("--candidate", metavar="FILE", help="evaluate --import: the source the "
                   "result evaluated (default: the workspace's candidate.cu)")
    p.add_argument("--give-up", metavar="REASON", help="stop by hand: end the campaign "
                   "without the goal (campaign.end stalled), saying why")
    p.add_argument("--block", metavar="WORD", default="block",
                   help="stop: the agent's word for a refused stop, used when socratic "
                   "fails before it knows the agent (the hook commands attach writes say it)")
    p.add_argument("--held", action="store_true", help=argparse.SUPPRESS)  # serve: by a launcher
    p.intermixed = True  # `hook say --session DIR TEXT`
    p.set_defaults(handler=handle_hook)


def handle_attach(args) -> int:
    from socratic.harness.attached.attach import attach, eval_task_arg
    from socratic.harness.cli import check_goal, check_numbers, goal_overrides
    from socratic.harness.core.config import Config
    from socratic.harness.core.task import CampaignTask
    from socratic.resources import resolve_task_dir

    check_numbers(args)
    check_numbers(args, ("wait_minutes",))
    from socratic.harness.attached.agentspec import by_hand

    if args.resume:
        return _resume_headless(args)
    if args.agent is None:
        raise InputError("attach: --agent is required (claude, codex, gemini or manual)")
    if args.headless and args.launch:
        raise InputError("--headless and --launch: give one (headless runs the agent "
                         "without a terminal, --launch in this one)")
    if args.wait_for_human and not args.headless:
        raise InputError("--wait-for-human: only with --headless (an interactive attach "
                         "always waits for your question)")
    if args.headless and by_hand(args.agent):
        raise InputError(f"--headless: --agent {args.agent} has no agent to run")
    if args.headless:
        _check_runnable(args.agent)
    if args.launch and by_hand(args.agent):
        raise InputError(f"--launch: --agent {args.agent} has no agent to start (it prints "
                         f"the commands that drive the campaign)")
    if args.launch:
        _check_launchable(args.agent)
    data = goal_overrides(args)
    if args.model:
        data["model"] = args.model
    config = Config.from_dict({k: v for k, v in data.items() if v is not None})
    task_dir = resolve_task_dir(args.task)
    check_goal(task_dir, args.goal_against, args.scenarios)   # `--scenarios ""` too
    a = attach(task_dir, args.agent, config,
               session_dir=Path(args.session_dir) if args.session_dir else None,
               model=args.model, wait_s=args.wait_minutes * 60,
               wait_for_human=args.wait_for_human or not args.headless)
    print(f"socratic: session {a.session.dir} ({a.spec.title}); watch it with "
          f"`socratic watch {shlex.quote(str(a.session.dir))}`", file=sys.stderr)
    if not a.spec.has_hooks:
        from socratic.harness.manual import manual

        # the agent's first turn is now: the start trigger (and its question) is printed
        said = manual.begin(a.session.dir)
        print("\n".join(["socratic: drive it by hand:",
                         *manual.commands(a.session.dir,
                                          eval_task_arg(CampaignTask.load(task_dir))),
                         *said]), file=sys.stderr)
        return 0
    if args.headless:
        return _headless(a.session.dir, resume=False, model=args.model)
    ws = shlex.quote(str(a.session.workspace))
    print(f"socratic: start the agent, confined, with:\n  cd {ws} && socratic agent "
          f"{a.spec.name}\n(by itself, unconfined and on the record so: {a.launch_line})",
          file=sys.stderr)
    if not args.launch:
        return 0
    from socratic.harness.attached.agentlaunch import run_interactive

    return run_interactive(a.session.dir, a.launch_argv, "launch")


def handle_agent(args) -> int:
    """`socratic agent NAME [ARGS...]`: the attached session's agent started as socratic
    starts it (server first, confined, hooks out of its reach), in this terminal."""
    from socratic.harness.attached import agentspec
    from socratic.harness.attached.agentlaunch import run_interactive
    from socratic.harness.attached.attached_campaign import AttachedCampaign
    from socratic.harness.attached.hooks import find_session

    _refuse_late_session(args)
    session = Path(args.session) if args.session else find_session(os.getcwd())
    if not (session / "events.jsonl").is_file():
        raise InputError(f"{session}: not a started campaign session (no events.jsonl)")
    camp = AttachedCampaign(session)
    if camp.settings.agent != args.name:
        raise InputError(f"socratic agent {args.name}: {session} is attached to "
                         f"--agent {camp.settings.agent}")
    spec = agentspec.load(args.name)
    if args.args:
        argv = [spec.command[0], *args.args]
    else:
        argv = spec.launch_argv(camp.settings.launch_prompt, camp.session.workspace)
    return run_interactive(session, argv, "wrapper")


def _refuse_late_session(args: argparse.Namespace) -> None:
    """`socratic agent claude --session DIR`: everything after NAME is the agent's own
    arguments, so the session was looked for in this folder and the error spoke of a
    workspace marker; say where --session goes instead."""
    late = next((a for a in args.args if a == "--session" or a.startswith("--session=")), None)
    if args.session is None and late is not None:
        raise InputError(f"socratic agent {args.name}: {late} after the agent's name is passed "
                         f"to the agent; put it first: `socratic agent --session DIR {args.name}`")


def _check_launchable(agent: str) -> None:
    """--launch: the agent's program is on PATH, said before a session exists (else a retry
    would find the session already holding a campaign)."""
    import shutil

    from socratic.harness.attached import agentspec

    spec = agentspec.load(agent)
    if spec.command and shutil.which(spec.command[0]) is None:
        raise InputError(f"--launch: `{spec.command[0]}` not found on PATH (install it: "
                         f"{spec.install}); nothing was created")


def _check_runnable(agent: str) -> None:
    """The agent's program is on PATH: said before a session exists."""
    import shutil

    from socratic.harness.attached import agentspec

    spec = agentspec.load(agent)
    if spec.headless is None:
        raise InputError(f"--headless: --agent {agent} has no non-interactive mode")
    if shutil.which(spec.headless.command[0]) is None:
        raise InputError(f"--headless: `{spec.headless.command[0]}` not found on PATH "
                         f"(install it: {spec.install}); nothing was created")


def _headless(session_dir: Path, resume: bool, model: str | None) -> int:
    from socratic.harness.attached import headless

    reason = headless.run(session_dir, resume=resume, model=model)
    print(f"socratic: campaign ended: {reason} (session {session_dir}; report: "
          f"`socratic report {shlex.quote(str(session_dir))}`)", file=sys.stderr)
    return 0


def _resume_headless(args) -> int:
    """`socratic attach SESSION --resume --headless`: the attached session goes on."""
    from socratic.harness.attached.attached_campaign import AttachedCampaign

    if not args.headless:
        raise InputError("--resume: only with --headless (to go on interactively, start "
                         "the session's agent again in its workspace)")
    given = [f"--{n.replace('_', '-')}" for n in ("agent", "session_dir", "launch",
                                                  "wait_for_human") if getattr(args, n)]
    if given:
        raise InputError(f"--resume: {', '.join(given)} come from the session's config.json "
                         f"(resume takes only the session)")
    session = Path(args.task)
    from socratic.sessionfiles import refuse_pack

    refuse_pack(session, "attach --resume")
    if not (session / "events.jsonl").is_file():
        raise InputError(f"{session}: not a started campaign session (no events.jsonl); "
                         f"attach a new one with `socratic attach TASK --agent A --headless`")
    camp = AttachedCampaign(session)  # one line when it is not an attached session
    from socratic.harness.attached.agentspec import by_hand

    if by_hand(camp.settings.agent):
        raise InputError(f"{session}: a campaign by hand: nothing to run headless")
    return _headless(session, resume=True, model=args.model)


def _by_hand(event: str, args) -> bool:
    """A command typed by a person rather than an agent's hook: bad input is exit 2 (a
    hook's errors are exit 1: to its agent 2 means "block")."""
    return event == "say" or bool(args.import_file or args.give_up is not None)


def _check_hook_args(args) -> None:
    wrong = []
    if args.text is not None and args.event != "say":
        wrong.append(f"TEXT ({args.text[:40]!r})")
    if (args.import_file or args.candidate) and args.event != "evaluate":
        wrong.append("--import/--candidate")
    if args.candidate and not args.import_file:
        raise InputError("--candidate: only with --import (the source the result evaluated)")
    if args.import_file and args.scenarios:
        raise InputError("--scenarios: not with --import (the result names its set)")
    if args.give_up is not None and args.event != "stop":
        wrong.append("--give-up")
    if wrong:
        raise InputError(f"hook {args.event}: {', '.join(wrong)} not taken by this event")


def _session_by_hand(args) -> Path | None:
    """The session when it is driven by hand (no hooks), else None: --session, or the
    workspace this runs in."""
    from socratic.harness.attached.agentspec import by_hand
    from socratic.harness.attached.hooks import find_session
    from socratic.harness.cli import attached_agent

    if args.session:
        session = Path(args.session)
    else:
        try:
            session = find_session(os.getcwd())
        except InputError:
            return None
    return session if by_hand(attached_agent(session)) else None


def _session(args) -> Path:
    from socratic.harness.attached.hooks import find_session

    return Path(args.session) if args.session else find_session(os.getcwd())


def handle_hook(args) -> int:
    _check_hook_args(args)
    if args.session and not (Path(args.session) / "events.jsonl").is_file():
        # typed by a person (no hook passes --session): exit 2; it read
        # "cannot read the campaign's settings ([Errno 2] No such file ...config.json)"
        from socratic.resources import unknown_session_hint

        where = Path(args.session)
        raise InputError(f"--session {where}: no campaign session there (no events.jsonl)"
                         + (unknown_session_hint(where) if not where.exists() else ""))
    if _by_hand(args.event, args) or _session_by_hand(args) is not None:
        return _handle_by_hand(args)
    started = time.monotonic()
    answered: list[bool] = []  # the agent has its answer: a later failure is only reported
    try:
        if args.event == "serve":
            from socratic.harness.attached.hookserver import serve

            return serve(_session(args), held=args.held)
        if args.event == "evaluate":
            from socratic.harness.attached.hooks import run_evaluate

            _, text = run_evaluate(_session(args), args.scenarios)
            print(text)  # pass or fail is in the table: exit 0 so the agent reads it as output
            return 0
        from socratic.harness.attached.hooks import run_hook

        if sys.stdin.isatty():  # a person typed it: no agent sends a payload
            raise InputError(f"hook {args.event}: no JSON payload on stdin (an agent's hook "
                             f"sends one); a campaign by hand: give --session DIR, or run it "
                             f"in its workspace")
        raw = sys.stdin.read()
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise InputError(f"hook {args.event}: stdin is not JSON ({raw[:80]!r})") from None
        if not isinstance(payload, dict):
            raise InputError(f"hook {args.event}: stdin is not a JSON object")

        def write(out: dict) -> None:
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            answered.append(True)

        run_hook(args.event, payload, started, Path(args.session) if args.session else None,
                 write=write)
        return 0
    except Exception as exc:
        from socratic.harness.attached.hooks import fail_closed_reason, one_line

        line = one_line(exc)
        if answered:
            print(f"socratic: error: {line}", file=sys.stderr)
            return 0
        if args.event == "stop" and not sys.stdin.isatty():
            # an agent's stop (a person at a terminal gets the error): failing open would
            # let the agent stop with the goal unmet
            print(json.dumps({"decision": args.block, "reason": fail_closed_reason(line)}))
            print(f"socratic: error: {line} (the stop was refused)", file=sys.stderr)
            return 0
        # never 2: to a hook's caller exit code 2 means "block this action"
        print(f"socratic: error: {line}", file=sys.stderr)
        return 1


def _handle_by_hand(args) -> int:
    """`socratic hook evaluate [--import]|say|stop [--give-up]` typed by a person: bad input
    is one line and exit 2, as for every other command; `stop` refused exits 1."""
    from socratic.harness.manual import manual

    session = _session(args)
    if args.event == "evaluate" and args.import_file:
        _, text = manual.import_evaluation(
            session, Path(args.import_file), Path(args.candidate) if args.candidate else None)
        print(text)
        return 0
    if args.event == "evaluate":
        _, text = manual.evaluate_here(session, args.scenarios)
        print(text)
        return 0
    if args.event == "say":
        if args.text is None:
            raise InputError("hook say: no text (give TEXT, or - to read it from stdin)")
        print(manual.say(session, sys.stdin.read() if args.text == "-" else args.text))
        return 0
    if args.event == "stop":
        if args.give_up is not None:
            print(manual.give_up(session, args.give_up))
            return 0
        code, text = manual.stop(session)
        print(text)
        return code
    raise InputError(f"hook {args.event}: not a step of a campaign by hand (those are "
                     f"evaluate, say and stop)")
