"""`socratic watch SESSION_DIR` and `socratic replay [SESSION_DIR]`, and the view of
`socratic run` (the harness's verb, registered before this one: without --headless it starts
the campaign, then watches it with `watch_run`, set here on its parser).

Cheap to import: Textual is imported inside the handlers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from socratic.cliargs import path_arg
from socratic.errors import InputError


def register(sub) -> None:
    p = sub.add_parser("watch", help="watch a live campaign (or a fleet) and steer it with "
                       "questions",
                       description="Tail a session's events.jsonl in the TUI; keys inject "
                       "questions and controls into its inbox.jsonl. ctrl+q leaves the "
                       "campaign running. On a fleet folder: one row per campaign; Enter "
                       "opens one, Esc returns.")
    p.add_argument("session_dir", type=path_arg, metavar="SESSION_DIR",
                   help="a session folder, or a fleet folder (socratic fleet run)")
    p.add_argument("--poll", action="store_true",
                   help="poll the file instead of inotify (network file systems: NFS, Lustre)")
    p.add_argument("--no-mouse", action="store_true",
                   help="do not capture the mouse (terminal text selection keeps working)")
    p.set_defaults(handler=_watch)

    p = sub.add_parser("replay", help="replay a recorded campaign (default: the bundled demo)",
                       description="Play a finished (or running) campaign with its real timing; "
                       "space plays, arrows step, [ ] jump between evaluations, { } between "
                       "questions, + - change speed.")
    p.add_argument("session_dir", type=path_arg, nargs="?", metavar="SESSION_DIR",
                   help="a session directory, a pack (NAME.socratic), or the name of a bundled "
                   "campaign: demo (the "
                   "default, scripted) or fa3-h200 (the real H200 attention campaign)")
    p.add_argument("--speed", type=float, default=10.0,
                   help="playback speed, x1 to x1000 (default 10)")
    p.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    p.set_defaults(handler=_replay)

    run = sub.choices.get("run")
    if run is not None:
        run.set_defaults(watch=watch_run)


def watch_run(session_dir: Path, *, poll: bool, no_mouse: bool) -> bool:
    """`socratic run` watching the campaign it started: False where Textual is not installed
    (a GPU node's bare Python; the run prints progress lines instead)."""
    try:
        from socratic.tui.app import run_watch
    except ModuleNotFoundError as exc:  # only a missing Textual: our own TUI failing is a bug
        if not (exc.name or "").startswith("textual"):
            raise
        return False
    run_watch(session_dir, poll=poll, no_mouse=no_mouse)
    return True


def need_terminal(verb: str, where: object) -> None:
    """The TUI draws with escape codes: into a pipe or a file they are noise."""
    import sys

    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        raise InputError(f"{verb}: needs a terminal (stdin and stdout are not both one); for "
                         f"text, `socratic report {where}`")


def _watch(args: argparse.Namespace) -> int:
    from socratic.fleet import is_fleet
    from socratic.tui.app import check_session_dir, run_watch

    check_session_dir(args.session_dir, need_events=not is_fleet(args.session_dir))
    need_terminal("watch", args.session_dir)
    return run_watch(args.session_dir, poll=args.poll, no_mouse=args.no_mouse)


def _replay(args: argparse.Namespace) -> int:
    if not 1 <= args.speed <= 1000:
        raise InputError(f"--speed {args.speed:g}: expected 1 to 1000")
    session_dir = args.session_dir
    if session_dir is None:
        from socratic.resources import demo_session_dir

        session_dir = demo_session_dir()
        if not (session_dir / "events.jsonl").is_file():
            raise InputError(f"the bundled demo campaign is not installed ({session_dir}"
                             "/events.jsonl is missing); pass a SESSION_DIR")
    else:
        from socratic.resources import resolve_session_dir

        session_dir = resolve_session_dir(session_dir)
    from socratic.tui.app import run_replay

    return run_replay(session_dir, speed=args.speed, no_mouse=args.no_mouse,
                      terminal=lambda: need_terminal("replay", args.session_dir or "demo"))
