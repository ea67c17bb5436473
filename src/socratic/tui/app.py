"""The socratic TUI app: one screen per mode, `WatchScreen` (live, steerable) or
`ReplayScreen` (clock and seek), both `CampaignScreen`s (tui/campaign_screen.py).

The screen is a function of a `CampaignState` (tui/state.py). Watch mode folds new
events into it as the harness appends them (watchfiles, or polling); replay mode keeps a
`Timeline` with checkpoints and shows `timeline.state_at(position)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE
from socratic.sessionfiles import is_pack, open_session
from socratic.tui.events_file import describe_empty, read_session_events
from socratic.tui.replay_screen import SPEEDS, ReplayScreen
from socratic.tui.watch_screen import WatchScreen

__all__ = ["SPEEDS", "SocraticApp", "check_session_dir", "run_replay", "run_watch"]


def check_session_dir(path: Path, need_events: bool = True, packed: bool = False) -> Path:
    """A session directory (or, with `packed`, a pack: replay reads one), or InputError
    naming what is wrong (one line)."""
    path = Path(path)
    if not path.exists():
        from socratic.resources import unknown_session_hint

        raise InputError(f"session directory not found: {path}{unknown_session_hint(path)}")
    if is_pack(path):
        if packed:
            return path
        from socratic.sessionfiles import refuse_pack

        refuse_pack(path, "watch")
    if not path.is_dir():
        raise InputError(f"not a session directory (it is a file): {path}")
    events = path / EVENTS_FILE
    if need_events and not events.is_file():
        from socratic.fleet import session_hint

        raise InputError(f"no {EVENTS_FILE} in {path}: not a socratic session directory"
                         f"{session_hint(path)}")
    return path


class SocraticApp(App):
    """`mode` is "watch" or "replay". `clock` (monotonic seconds) and `bank` can be
    injected for tests; `autoplay`/`start` set where a replay begins. `main` is the
    mode's screen, the default screen (app queries reach it)."""

    TITLE = "socratic"
    # the screens' styles (a default screen's own CSS_PATH is not loaded); absolute paths:
    # subclasses live elsewhere
    CSS_PATH = [Path(__file__).with_name("app.tcss"),
                Path(__file__).with_name("fleet_screen.tcss")]
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]
    # ctrl+c quits too, as in any terminal program (Textual's default only says ctrl+q)
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True),
                Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(self, session_dir: Path, mode: str = "watch", *, poll: bool = False,
                 speed: float = 10.0, clock: Callable[[], float] | None = None,
                 bank: Any = None, autoplay: bool = True, start: int | str = 0,
                 watch_files: bool = True) -> None:
        super().__init__()
        self.animation_level = "none"
        self.session_dir = Path(session_dir)
        self.mode = mode
        self.poll = poll
        clock = clock or time.monotonic
        if mode == "fleet":
            from socratic.tui.fleet_screen import FleetScreen

            self.main: Screen = FleetScreen(self.session_dir, clock, poll=poll, bank=bank,
                                            watch_files=watch_files)
        elif mode == "replay":
            self.main = ReplayScreen(self.session_dir, clock, speed=speed,
                                                     autoplay=autoplay, start=start)
        else:
            self.main = WatchScreen(self.session_dir, clock, poll=poll, bank=bank,
                                    watch_files=watch_files)

    def get_default_screen(self) -> Screen:
        return self.main

    def on_mount(self) -> None:
        self.sub_title = str(self.session_dir)


def run_watch(session_dir: Path, **opts: Any) -> int:
    """Attach the TUI to a (live) session; used by `socratic watch` and `socratic run`.

    Options: poll (force polling), no_mouse. The session's events.jsonl may not exist
    yet (the harness was just started); the screen waits for it. A fleet folder (from
    `socratic fleet run`) opens the fleet screen.
    """
    from socratic.fleet import is_fleet

    session_dir = check_session_dir(Path(session_dir), need_events=False)
    mode = "fleet" if is_fleet(session_dir) else "watch"
    app = SocraticApp(session_dir, mode, poll=bool(opts.get("poll")))
    app.run(mouse=not opts.get("no_mouse", False))
    return 0


def run_replay(session_dir: Path, **opts: Any) -> int:
    """`socratic replay`: a log with no event in it (empty, binary) is an error naming it."""
    session_dir = check_session_dir(Path(session_dir), packed=True)
    session = open_session(session_dir)  # a bad pack: one line naming it
    try:
        chunk = read_session_events(session)
    except OSError as exc:
        raise InputError(f"cannot read {session.where(EVENTS_FILE)}: {exc}") from None
    if not chunk.events:
        raise InputError(describe_empty(session.where(EVENTS_FILE), chunk.skipped))
    if opts.get("terminal"):
        opts["terminal"]()  # the command line's check that there is a terminal to draw on
    app = SocraticApp(session_dir, "replay", speed=float(opts.get("speed") or 10.0))
    app.run(mouse=not opts.get("no_mouse", False))
    return 0
