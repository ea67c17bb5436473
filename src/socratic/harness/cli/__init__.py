"""`socratic run` and `socratic inject` (and the verbs of attach_cli and retract). Cheap to
import: the campaign, the anthropic SDK and the bank are imported inside the handlers.

The harness never imports the TUI: `socratic run` without --headless starts the campaign as
its own process, then calls the watcher that the TUI's registration sets on the `run` verb
(tui/cli.py: `watch`); without one, or without Textual, it prints progress lines."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from socratic.cliargs import path_text
from socratic.contracts import AskCommand, ControlCommand, InboxCommand
from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE
from socratic.harness.core.config import DEFAULT_MODEL


def register(sub) -> None:
    add_run_parser(sub)
    _add_inject_parser(sub)

    from socratic.harness.cli import attach_cli, retract

    attach_cli.register(sub)
    retract.register(sub)


def run_options() -> dict[str, argparse.Action]:
    """`socratic run`'s options by dest (a fleet file's campaign keys are these: one source
    of truth), from a parser of that verb alone."""
    sub = argparse.ArgumentParser(prog="socratic").add_subparsers()
    add_run_parser(sub)
    return {a.dest: a for a in sub.choices["run"]._actions if a.option_strings}


def add_run_parser(sub) -> None:
    p = sub.add_parser(
        "run", help="run an agent campaign on a task",
        description="Run a campaign: a coding agent optimizes the task's kernel; the goal is "
        "checked on every stop attempt; questions arrive at the five triggers. Without "
        "--headless the campaign runs as its own process and this terminal watches it.")
    p.add_argument("task", metavar="TASK_DIR",
                   help="task directory or bundled task name (with --resume: the session dir)")
    p.add_argument("--session-dir", metavar="DIR", help="the session directory "
                   "(default: sessions/<date-time-task>)")
    p.add_argument("--model", help=f"model id (default: $ANTHROPIC_MODEL or {DEFAULT_MODEL})")
    p.add_argument("--base-url", metavar="URL", help="an Anthropic-compatible Messages API "
                   "(vLLM, SGLang, LiteLLM, llama.cpp; default: $ANTHROPIC_BASE_URL or "
                   "Anthropic's); with it ANTHROPIC_API_KEY may be unset")
    p.add_argument("--headless", action="store_true",
                   help="run the campaign in this process, without the TUI")
    add_goal_options(p)
    p.add_argument("--resume", action="store_true",
                   help="continue the campaign in --session-dir (or TASK_DIR given as a session)")
    p.add_argument("--poll", action="store_true",
                   help="TUI: poll events.jsonl instead of inotify (NFS, Lustre)")
    p.add_argument("--no-mouse", action="store_true",
                   help="TUI: leave the mouse to the terminal (its own text selection)")
    p.add_argument("--wait-for-human", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(handler=handle_run, watch=None)   # watch: set by tui/cli.py


def _add_inject_parser(sub) -> None:
    p = sub.add_parser("inject", help="send a question or control command to a campaign",
                       description="Append a question or a control command to a campaign's "
                       "inbox; the campaign acts on it at its next safe point.")
    p.add_argument("session", type=path_text, metavar="SESSION_DIR",
                   help="the campaign's session folder (running, or ended: a question waits "
                   "for its --resume)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--bank", metavar="ID", help="a question from the bank, by id")
    g.add_argument("--text", metavar="TEXT", help="a question in your own words")
    g.add_argument("--pause", action="store_const", const="pause", dest="action",
                   help="pause after the current tool call")
    g.add_argument("--resume", action="store_const", const="resume", dest="action",
                   help="resume a paused campaign")
    g.add_argument("--stop", action="store_const", const="stop", dest="action",
                   help="end the campaign cleanly")
    g.add_argument("--evaluate", action="store_const", const="evaluate", dest="action",
                   help="evaluate the current candidate now (shown to the agent)")
    p.set_defaults(handler=handle_inject)


def add_goal_options(p: argparse.ArgumentParser) -> None:
    """The campaign's goal, scenario set, questions and limits: the same options for
    `socratic run` and `socratic attach` (read back by goal_overrides)."""
    p.add_argument("--auto-questions", action="store_true",
                   help="pose the bank's top suggestion at each trigger")
    p.add_argument("--max-tool-calls", type=int, metavar="N",
                   help="end the campaign after N tool calls")
    p.add_argument("--max-turns", type=int, metavar="N",
                   help="end the campaign after N model responses")
    p.add_argument("--max-minutes", type=float, metavar="M",
                   help="end the campaign after M minutes (campaign clock, resumes included)")
    p.add_argument("--goal-min-speedup", type=float, metavar="X",
                   help="override the task's [goal] min_speedup")
    p.add_argument("--goal-against", metavar="NAME", help="judge the goal against NAME: "
                   "`baseline` or a comparison of the task, e.g. fa3 (default: its [goal] against)")
    p.add_argument("--goal-hidden", action=argparse.BooleanOptionalAction, default=None,
                   help="the speed rule holds on the hidden scenarios drawn in each evaluation "
                        "too (default: its [goal] hidden)")
    p.add_argument("--scenarios", metavar="SET", help="the goal's scenario set "
                   "(default: the task's default_set)")


NUMBERS = ("max_tool_calls", "max_turns", "max_minutes", "goal_min_speedup")


def check_numbers(args, names: tuple[str, ...] = NUMBERS) -> None:
    """Every numeric option positive and finite (nan and inf parse as floats)."""
    import math

    for name in names:
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            finite = "" if math.isfinite(value) else " and finite"   # `inf` is not "negative"
            raise InputError(f"--{name.replace('_', '-')} {value}: must be positive{finite}")


def check_goal(task_dir: Path, against: str | None, scenarios: str | None,
               where: str = "") -> None:
    """A new campaign's --goal-against and --scenarios against its task.toml (`socratic
    run`, a fleet's campaigns), before anything starts: InputError naming the value,
    prefixed by `where` (a fleet file's line)."""
    from socratic.harness.core.task import CampaignTask
    from socratic.harness.engine.plan import check_goal_set

    try:
        task = CampaignTask.load(task_dir)
        task.goal(against=against)
        if scenarios is not None:
            check_goal_set(task, scenarios)
    except InputError as exc:
        if not where:
            raise
        raise InputError(f"{where}: {exc}") from None


def goal_overrides(args) -> dict:
    """The Config fields add_goal_options sets (None: not given)."""
    out = {"max_tool_calls": args.max_tool_calls, "max_turns": args.max_turns,
           "max_minutes": args.max_minutes, "goal_min_speedup": args.goal_min_speedup,
           "goal_against": args.goal_against, "goal_hidden": args.goal_hidden,
           "scenarios": args.scenarios}
    if args.auto_questions:
        out["auto_questions"] = True
    return out


def _config_overrides(args) -> dict:
    out = goal_overrides(args)
    out["model"] = args.model or None
    out["wait_for_human"] = bool(args.wait_for_human)
    return out


LOCAL_KEY = "no-key"  # sent to a --base-url server when ANTHROPIC_API_KEY is unset


def _api_key(base_url: str | None = None) -> str:
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if not key and base_url:
        return LOCAL_KEY  # local servers (vLLM, llama.cpp) usually take any key or none
    if not key:
        raise InputError("ANTHROPIC_API_KEY is not set (the campaign's agent needs it; "
                         "a local server given with --base-url does not)")
    return key


def _base_url(args) -> str | None:
    url = args.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    if url and not url.startswith(("http://", "https://")):
        raise InputError(f"--base-url {url}: not an http:// or https:// URL")
    return url


def handle_run(args) -> int:
    from socratic.resources import resolve_task_dir

    check_numbers(args)  # before anything starts, attached or not
    session_dir: Path | None
    if args.resume:
        session_dir = Path(args.session_dir or args.task)
        from socratic.harness.core.session import Session
        from socratic.sessionfiles import refuse_pack

        refuse_pack(session_dir, "run --resume")

        if Session(session_dir).killed_start():
            pass  # started again from its saved settings (_run_headless)
        elif (session_dir / "events.jsonl").is_file() and \
                not (session_dir / "events.jsonl").stat().st_size:
            raise InputError(f"{session_dir / 'events.jsonl'}: empty, though the session has "
                             f"evaluations or messages: not resumed (nothing was changed)")
        elif not (session_dir / "events.jsonl").is_file():
            from socratic.fleetfolder import is_fleet
            from socratic.resources import unknown_session_hint

            hint = unknown_session_hint(session_dir) if not session_dir.exists() else ""
            if is_fleet(session_dir):
                hint = (f" (a fleet folder: `socratic fleet run "
                        f"{shlex.quote(str(session_dir))}` continues its campaigns)")
            raise InputError(f"{session_dir}: no events.jsonl to resume{hint}")
        _refuse_attached(session_dir)
    else:
        # bad input is reported here, before anything starts (and before the environment)
        check_goal(resolve_task_dir(args.task), args.goal_against, args.scenarios)
        session_dir = Path(args.session_dir) if args.session_dir else None
    if session_dir is not None:
        from socratic.ownership import SessionBusy, live_owner

        owner = live_owner(session_dir)  # refused before anything starts, attached or not
        if owner is not None:            # (the campaign process claims it for good)
            raise SessionBusy(session_dir, owner)
    key = _api_key(_base_url(args))
    if args.headless:
        return _run_headless(args, session_dir, key)
    return _run_attached(args, session_dir)


def attached_agent(session_dir: Path) -> str | None:
    """The agent of a session made by `socratic attach`, else None."""
    from socratic.harness.core.session import Session

    try:
        attach = Session(session_dir).load_config().attach
    except InputError:
        attach = None
    if attach is not None:
        return str(attach.get("agent"))
    # a damaged config.json: the log's campaign.start still tells the session's kind
    # (its hints must not send an attached session to `run --resume`)
    return _logged_agent(session_dir)


def _logged_agent(session_dir: Path) -> str | None:
    """The outside agent the log's first event (campaign.start) names; None for socratic's
    own loop or an unreadable start (Campaign.resume then reports the bad config.json)."""
    import json

    from socratic.contracts import CampaignStart, parse_event

    try:
        with open(session_dir / EVENTS_FILE, "rb") as fh:
            event = parse_event(json.loads(fh.readline()))
    except (OSError, ValueError):   # JSONDecodeError and ContractError are ValueErrors
        return None
    return event.agent if isinstance(event, CampaignStart) and event.agent else None


def _refuse_attached(session_dir: Path) -> None:
    """A session made by `socratic attach` is driven by its agent's hooks, not this loop."""
    agent = attached_agent(session_dir)
    if agent is not None:
        raise InputError(f"{session_dir}: an attached campaign ({agent}): start "
                         f"the agent again in {session_dir / 'workspace'} to go on")


def _run_headless(args, session_dir: Path | None, key: str) -> int:
    from socratic.harness.api.campaign import Campaign
    from socratic.harness.core.config import DEFAULT_MODEL, Config

    ov = _config_overrides(args)
    from socratic.harness.core.session import Session

    if args.resume and session_dir is not None and Session(session_dir).killed_start():
        # cut short before its first event: it starts again, as it was set up
        saved = Session(session_dir).load_config()
        config = Config.from_dict({**saved.config,
                                   **{k: v for k, v in ov.items() if v is not None}})
        src = saved.task_source
        if src is None:
            raise InputError(f"{Session(session_dir).config_file}: no task_source to start from")
        camp = Campaign.create(Path(src), config, session_dir=session_dir, api_key=key,
                               base_url=_base_url(args))
    elif args.resume:
        assert session_dir is not None  # handle_run sets it for --resume
        camp = Campaign.resume(session_dir, overrides=ov, api_key=key, base_url=_base_url(args))
    else:
        from socratic.resources import resolve_task_dir

        data = {k: v for k, v in ov.items() if v is not None}
        data.setdefault("model", os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL)
        config = Config.from_dict(data)
        camp = Campaign.create(resolve_task_dir(args.task), config, session_dir=session_dir,
                               api_key=key, base_url=_base_url(args))
    from socratic.harness.cli.notices import Notices

    say = Notices(camp.session.log_file)
    camp.emit.on_event = say.on_event
    say(f"socratic: campaign {camp.session.dir} ({camp.config.model}), process {os.getpid()}")
    reason = camp.run()
    error = (camp.end_event or {}).get("error")  # e.g. a bad key: the user's next step
    say(f"socratic: campaign ended: {reason} ({camp.session.dir})"
        + (f": {str(error).splitlines()[0]}" if error else ""))
    return 0 if reason == "goal_met" else 1


def _run_attached(args, session_dir: Path | None) -> int:
    import subprocess

    from socratic.harness.core.session import Session, session_id

    if session_dir is None:
        from socratic.harness.core.task import CampaignTask
        from socratic.resources import resolve_task_dir

        session_dir = Path("sessions") / session_id(CampaignTask.load(resolve_task_dir(args.task)).name)
    events = session_dir / EVENTS_FILE
    if events.exists() and not args.resume:
        raise InputError(f"{session_dir}: already holds a campaign (use --resume)")
    try:
        session_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{session_dir}: cannot create the session directory "
                         f"({exc.strerror or exc})") from None
    argv = [sys.executable, "-m", "socratic", "run", args.task, "--headless", "--wait-for-human",
            "--session-dir", str(session_dir)]
    for flag in ("model", "base_url", "max_tool_calls", "max_turns", "max_minutes",
                 "goal_min_speedup", "goal_against", "scenarios"):
        v = getattr(args, flag)
        if v is not None:
            argv += ["--" + flag.replace("_", "-"), str(v)]
    if args.goal_hidden is not None:
        argv.append("--goal-hidden" if args.goal_hidden else "--no-goal-hidden")
    if args.auto_questions:
        argv.append("--auto-questions")
    if args.resume:
        argv.append("--resume")
    log_path = Session(session_dir).log_file
    with open(log_path, "ab") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, cwd=os.getcwd())
    failed = _startup_failure(proc, events, log_path)
    if failed is not None:
        print(failed[1] or f"socratic: error: the campaign exited with code {failed[0]} "
              f"(see {log_path})", file=sys.stderr)
        return failed[0]
    print(f"socratic: campaign started as process {proc.pid}; session {session_dir}; "
          f"log {log_path}", file=sys.stderr)
    from socratic.harness.cli.watch import detach_hint, tail_progress

    watch = getattr(args, "watch", None)   # the TUI's (tui/cli.py), where it is registered
    if watch is None or not watch(session_dir, poll=args.poll, no_mouse=args.no_mouse):
        return tail_progress(session_dir, proc)   # e.g. no Textual (a GPU node's bare Python)
    if proc.poll() is None:  # ctrl+q left it running: say how to get back to it
        print(detach_hint(session_dir), file=sys.stderr)
    return 0


def _startup_failure(proc, events: Path, log: Path,
                     timeout_s: float = 30.0) -> tuple[int, str] | None:
    """Wait until the detached campaign logs an event or exits. (exit code, the log's last
    line) when it exited without logging one (bad input: one line, code 2), else None."""
    import time

    def size() -> int:
        try:
            return events.stat().st_size
        except OSError:
            return 0

    start, deadline = size(), time.monotonic() + timeout_s
    while proc.poll() is None and size() == start and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None or proc.returncode == 0 or size() != start:
        return None
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return proc.returncode, (lines[-1] if lines else "")


def _inject(session: Path, command: InboxCommand) -> None:
    from socratic.eventlog import INBOX_FILE, inject

    try:
        inject(session, command)
    except OSError as exc:
        raise InputError(f"{session / INBOX_FILE}: cannot append "
                         f"({exc.strerror or exc})") from None


def handle_inject(args) -> int:
    from socratic.ownership import live_owner

    session = Path(args.session)
    from socratic.sessionfiles import refuse_pack

    refuse_pack(session, "inject")
    if not (session / EVENTS_FILE).is_file():
        from socratic.fleetfolder import session_hint
        from socratic.resources import unknown_session_hint

        hint = unknown_session_hint(session) if not session.exists() else session_hint(session)
        raise InputError(f"{session}: not a campaign session (no {EVENTS_FILE}){hint}")
    # alive is decided by the session's lock, which dies with its holder; the last event
    # cannot tell a running campaign from a killed one
    running = live_owner(session) is not None
    ended = _end_reason(session / EVENTS_FILE)
    state = f"has ended ({ended})" if ended else "is not running (its process is gone)"
    resume = f"`socratic run --resume {shlex.quote(str(session))}` restarts it"
    agent = attached_agent(session)
    if agent is not None:  # an outside agent's hooks read the inbox; nothing holds it between
        running = ended is None
        resume = f"prompting {agent} again in {session / 'workspace'} resumes it"
        from socratic.harness.attached.agentspec import by_hand

        if by_hand(agent):  # its steps read the inbox (harness/manual/manual.py)
            resume = "an evaluation by hand (`socratic hook evaluate`) resumes it"
            if args.action in ("pause", "resume"):
                raise InputError(f"{session}: a campaign by hand: nothing runs between its "
                                 f"steps, so nothing to {args.action}")
    if args.action:
        if not running:  # queued, it would act on the next --resume instead
            raise InputError(f"{session}: the campaign {state}: nothing to "
                             f"{args.action}; {resume}")
        _inject(session, ControlCommand(action=args.action))
        print(f"socratic: sent {args.action} to {session}", file=sys.stderr)
        return 0
    if args.bank:
        from socratic.bank import load_bank

        entry = load_bank().get(args.bank)  # a bad user bank file: InputError naming it
        if entry is None:
            raise InputError(f"--bank {args.bank}: no such question in the bank "
                             f"(see `socratic bank list`)")
        _inject(session, AskCommand(text=entry.text, bank_id=entry.id))
    else:
        text = (args.text or "").strip()
        if not text:
            raise InputError("--text: empty question")
        _inject(session, AskCommand(text=text))
    later = "" if running else f" (the campaign {state}; {resume} and asks it)"
    print(f"socratic: question queued for {session}{later}", file=sys.stderr)
    return 0


def _end_reason(events: Path) -> str | None:
    """The reason of the log's last event when that is `campaign.end` (the campaign has
    ended and nothing reads the inbox), else None; a later `eval.retract` (a note on past
    evaluations) does not count. Reads only the file's tail."""
    import json

    from socratic.contracts import CampaignEnd, EvalRetract, parse_event

    try:
        with open(events, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 65536))
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            event = parse_event(json.loads(line))
        except ValueError:
            continue  # a torn last line, or a damaged event (ContractError is a ValueError)
        if event is not None and not isinstance(event, EvalRetract):
            return event.reason if isinstance(event, CampaignEnd) else None
    return None
