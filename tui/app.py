"""The socratic TUI: one screen for `watch` (live, steerable) and `replay` (clock and seek).

The screen is a function of a `CampaignState` (tui/state.py). Watch mode folds new
events into it as the harness appends them (watchfiles, or polling); replay mode keeps a
`Timeline` with checkpoints and shows `timeline.state_at(position)`.
"""

from __future__ import annotations

import bisect
import threading
import time
from pathlib import Path
from typing import Any, Callable

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable

from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE, INBOX_FILE, inject, read_jsonl
from socratic.tui.state import CampaignState, Timeline
from socratic.tui.widgets.eval_header import EvalHeader
from socratic.tui.widgets.key_hints import KeyHints
from socratic.tui.widgets.pending_bar import PendingBar
from socratic.tui.widgets.scenario_table import ScenarioTable
from socratic.tui.widgets.speedup_plot import SpeedupPlot
from socratic.tui.widgets.status_line import StatusLine
from socratic.tui.widgets.transcript import Transcript

SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
GAP_CAP_S = 1.0        # replay: longest wall-clock wait between two events
TICK_S = 0.05          # replay clock tick
WAITING_AFTER_S = 120  # watch: no event for this long while running → "waiting"

WATCH_ACTIONS = {"pick", "ask", "pause", "evaluate", "stop", "auto"}
REPLAY_ACTIONS = {"play", "step", "eval_jump", "question_jump", "speed", "seek_home", "seek_end"}


class EmptyBank:
    entries: list = []

    def get(self, _id):
        return None


def check_session_dir(path: Path, need_events: bool = True) -> Path:
    """A session directory, or InputError naming what is wrong (one line)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"session directory not found: {path}")
    if not path.is_dir():
        raise InputError(f"not a session directory (it is a file): {path}")
    events = path / EVENTS_FILE
    if need_events and not events.is_file():
        raise InputError(f"no {EVENTS_FILE} in {path}: not a socratic session directory")
    return path


class SocraticApp(App):
    """`mode` is "watch" or "replay". `clock` (monotonic seconds) and `bank` can be
    injected for tests; `autoplay`/`start` set where a replay begins."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "socratic"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]

    BINDINGS = [
        # watch
        Binding("slash", "pick", "Ask"),
        Binding("i", "ask", "Text"),
        Binding("p", "pause", "Pause/resume"),
        Binding("e", "evaluate", "Eval"),
        Binding("x", "stop", "Stop"),
        Binding("a", "auto", "Auto"),
        # replay (priority: they win over the table's and the transcript's own keys)
        Binding("space", "play", "Play/pause", priority=True),
        Binding("left", "step(-1)", "Step", key_display="←→", priority=True),
        Binding("right", "step(1)", "Step", show=False, priority=True),
        Binding("left_square_bracket", "eval_jump(-1)", "Eval", key_display="[]", priority=True),
        Binding("right_square_bracket", "eval_jump(1)", "Eval", show=False, priority=True),
        Binding("left_curly_bracket", "question_jump(-1)", "Question", key_display="{}",
                priority=True),
        Binding("right_curly_bracket", "question_jump(1)", "Question", show=False, priority=True),
        Binding("plus", "speed(1)", "Speed", key_display="+-", priority=True),
        Binding("equals_sign", "speed(1)", "Speed", show=False, priority=True),
        Binding("minus", "speed(-1)", "Speed", show=False, priority=True),
        Binding("home", "seek_home", "Start", show=False, priority=True),
        Binding("end", "seek_end", "End", show=False, priority=True),
        # both
        Binding("c", "copy", "Copy", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, session_dir: Path, mode: str = "watch", *, poll: bool = False,
                 speed: float = 10.0, clock: Callable[[], float] | None = None,
                 bank: Any = None, autoplay: bool = True, start: int | str = 0,
                 watch_files: bool = True) -> None:
        super().__init__()
        self.animation_level = "none"
        self.session_dir = Path(session_dir)
        self.events_path = self.session_dir / EVENTS_FILE
        self.mode = mode
        self.poll = poll
        self.clock = clock or time.monotonic
        self._bank = bank
        self._bank_error = ""
        self.state = CampaignState()
        self.pending: list[dict] = []
        self._auto_requested: bool | None = None
        # watch
        self._offset = 0
        self._last_event_wall: float | None = None
        self._stop_watching = threading.Event()
        self._periodic: list[Callable[[], None]] = []  # what the app's timers call
        self._watch_files = watch_files
        self.renders = 0
        # replay
        self.timeline: Timeline | None = None
        self.pos = 0
        self.speed = min(SPEEDS, key=lambda s: abs(s - speed))
        self.playing = False
        self._autoplay = autoplay
        self._start = start
        self._vt = 0.0
        self._last_tick = 0.0

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Transcript(live=self.mode == "watch", id="transcript")
                yield PendingBar(id="pending")
            with Vertical(id="right"):
                yield EvalHeader(id="evalhead")
                yield ScenarioTable(id="table")
                yield SpeedupPlot(id="plot")
        yield KeyHints(self.mode, id="keys")

    def on_mount(self) -> None:
        self.sub_title = str(self.session_dir)
        if self.mode == "replay":
            self._load_replay()
        else:
            self._load_watch()
        self._every(1.0, self._refresh_status)

    def _every(self, seconds: float, fn: Callable[[], None]) -> None:
        """Call `fn` every `seconds` while the app runs: at shutdown the screens (and the
        widgets `fn` updates) go before the app's timers stop."""
        def tick() -> None:
            if self.is_running:
                fn()

        self._periodic.append(tick)
        self.set_interval(seconds, tick)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in WATCH_ACTIONS:
            return self.mode == "watch"
        if action in REPLAY_ACTIONS:
            return self.mode == "replay"
        return True

    # ------------------------------------------------------------------ rendering

    def refresh_view(self, reset: bool = False) -> None:
        s = self.state
        self.renders += 1
        with self.batch_update():
            self._refresh_status()
            self.query_one(EvalHeader).show(s)
            self.query_one(ScenarioTable).show(s)
            self.query_one(SpeedupPlot).show(s.goal_evals(), s.goal)
            self.query_one(Transcript).show(s.blocks, reset=reset)
            self.query_one(PendingBar).show(self.pending, self.clock())
            if self.mode == "watch":
                auto = self._auto_requested if self._auto_requested is not None else s.auto
                self.query_one(KeyHints).show({
                    "p": "resume" if s.status == "paused" else "pause",
                    "a": "auto off" if auto else "auto on",
                })

    def display_status(self) -> str:
        s = self.state
        if self.mode == "watch" and s.status == "running" and self._last_event_wall is not None:
            if self.clock() - self._last_event_wall > WAITING_AFTER_S:
                return "waiting"
        if not s.started and s.status == "starting" and self.mode == "watch":
            return "starting" if self.events_path.exists() else "waiting"
        return s.status

    def elapsed(self) -> float:
        s = self.state
        if (self.mode == "watch" and s.status in ("running", "waiting", "stopping")
                and self._last_event_wall is not None):
            return s.t + max(0.0, self.clock() - self._last_event_wall)
        return s.t

    def _refresh_status(self) -> None:
        extra: list[str] = []
        if self.mode == "replay" and self.timeline is not None:
            mark = "▶" if self.playing else "‖"
            extra = [f"{mark} x{self.speed}", f"event {self.pos}/{len(self.timeline)}"]
        self.query_one(StatusLine).show(self.state, self.display_status(), self.elapsed(),
                                        extra, pending=len(self.pending))
        if self.pending:
            self.query_one(PendingBar).show(self.pending, self.clock())

    # ------------------------------------------------------------------ watch

    def _load_watch(self) -> None:
        self._poll_file()
        if not self.state.n_events:
            self.refresh_view(reset=True)
        if self._watch_files:
            self._tail()
            # a slow safety net beside inotify (or beside polling): a cheap stat
            self._every(2.0, self._poll_file)

    def _poll_file(self) -> None:
        try:
            size = self.events_path.stat().st_size
        except OSError:
            return
        if size < self._offset:  # the log was replaced: start over
            self._offset = 0
            self.state = CampaignState()
            self.query_one(ScenarioTable).reset()
            self.refresh_view(reset=True)
        if size == self._offset:
            return
        try:
            events, self._offset = read_jsonl(self.events_path, self._offset)
        except OSError:
            return
        if events:
            self.ingest(events)

    def ingest(self, events: list[dict]) -> None:
        first = self.state.n_events == 0
        for ev in events:
            self.state.apply(ev)
            if ev.get("type") == "question" and self.pending:
                self._resolve_pending(ev)
            elif ev.get("type") == "control" and ev.get("action") in ("auto_on", "auto_off"):
                self._auto_requested = None
        self._last_event_wall = self.clock()
        self.refresh_view(reset=first)

    def _resolve_pending(self, ev: dict) -> None:
        bank_id, text = ev.get("bank_id"), ev.get("text")
        for i, p in enumerate(self.pending):
            if (bank_id and p.get("bank_id") == bank_id) or (text and p.get("text") == text):
                del self.pending[i]
                return

    @work(exclusive=True, group="tail")
    async def _tail(self) -> None:
        try:
            from watchfiles import awatch
        except ImportError:  # pragma: no cover - watchfiles is a dependency
            self._every(0.25, self._poll_file)
            return

        def only_events(_change, path: str) -> bool:
            return Path(path).name == EVENTS_FILE

        try:
            async for _changes in awatch(
                self.session_dir, watch_filter=only_events, debounce=50, step=20,
                force_polling=True if self.poll else None, poll_delay_ms=200,
                recursive=False, stop_event=self._stop_watching, rust_timeout=500,
                yield_on_timeout=False,
            ):
                if self.is_running:
                    self._poll_file()
        except Exception as exc:  # e.g. inotify limits: fall back to polling
            self.notify(f"file watching failed ({exc}); polling instead", severity="warning")
            self._every(0.25, self._poll_file)

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # ------------------------------------------------------------------ watch actions

    def _ended(self) -> bool:
        if self.state.status == "ended":
            self.notify("the campaign has ended: nothing to control (socratic run --resume "
                        "restarts it)", severity="warning", timeout=4)
            return True
        return False

    def _send(self, command: dict, note: str) -> bool:
        try:
            inject(self.session_dir, command)
        except OSError as exc:
            self.notify(f"could not write {INBOX_FILE}: {exc}", severity="error")
            return False
        self.notify(note, timeout=3)
        return True

    def _get_bank(self) -> Any:
        if self._bank is None:
            from socratic.bank import BankError, load_bank

            try:
                self._bank = load_bank()
            except BankError as exc:  # a bad user file: the picker opens, free text works
                self._bank_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                self._bank = EmptyBank()
        return self._bank

    def _suggestions(self, bank: Any) -> tuple[list[str], str | None]:
        trig = self.state.last_trigger
        if trig is None:
            return [], None
        ids = list(trig.suggestions)
        if not ids and not isinstance(bank, EmptyBank):
            from socratic.bank import SuggestContext, suggest

            ctx = SuggestContext(arch="hopper", asked=set(self.state.asked))
            ids = [e.id for e in suggest(bank, trig.kind, ctx, limit=5)]
        return ids, trig.kind

    def action_pick(self) -> None:
        from socratic.tui.picker_screen import PickerScreen

        bank = self._get_bank()
        search = None
        if not isinstance(bank, EmptyBank):
            from socratic.bank import search
        ids, kind = self._suggestions(bank)
        note = f"bank unavailable: {self._bank_error}" if self._bank_error else ""
        self.push_screen(PickerScreen(bank, ids, set(self.state.asked), kind, search, note),
                         self._picked)

    def _picked(self, entry: Any) -> None:
        if entry is None:
            return
        eid = str(getattr(entry, "id", ""))
        text = str(getattr(entry, "text", ""))
        self.ask(text, eid or None)

    def ask(self, text: str, bank_id: str | None = None) -> None:
        command: dict[str, Any] = {"type": "question", "text": text}
        if bank_id:
            command["bank_id"] = bank_id
        note = f"question sent: {bank_id or text[:40]}"
        if self.state.status == "ended":  # kept in the inbox; nothing reads it until then
            note = ("the campaign has ended: the question is kept for `socratic run "
                    "--resume`, which asks it")
        if self._send(command, note):
            self.pending.append({"text": text, "bank_id": bank_id, "sent": self.clock()})
            self.refresh_view()

    def action_ask(self) -> None:
        from socratic.tui.ask_screen import AskScreen

        self.push_screen(AskScreen(), lambda text: self.ask(text) if text else None)

    def action_pause(self) -> None:
        if self._ended():
            return
        action = "resume" if self.state.status == "paused" else "pause"
        self._send({"type": "control", "action": action}, f"{action} requested")

    def action_evaluate(self) -> None:
        if self._ended():
            return
        self._send({"type": "control", "action": "evaluate"}, "evaluation requested")

    def action_stop(self) -> None:
        from socratic.tui.confirm_screen import ConfirmScreen

        if self._ended():
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._send({"type": "control", "action": "stop"},
                           "stop requested (the harness stops at the next safe point)")

        self.push_screen(ConfirmScreen("Stop the campaign? The agent is stopped at the next "
                                       "safe point; the session can be resumed later."),
                         answered)

    def action_auto(self) -> None:
        if self._ended():
            return
        current = self._auto_requested if self._auto_requested is not None else bool(self.state.auto)
        want = not current
        if self._send({"type": "control", "action": "auto_on" if want else "auto_off"},
                      f"auto-questions {'on' if want else 'off'} requested"):
            self._auto_requested = want

    # ------------------------------------------------------------------ replay

    def _load_replay(self) -> None:
        try:
            events, _ = read_jsonl(self.events_path)
        except OSError as exc:
            self.notify(f"cannot read {self.events_path}: {exc}", severity="error")
            events = []
        self.timeline = Timeline(events)
        start = self._start
        if start == "end":
            start = len(self.timeline)
        self._seek(int(start), reset=True)
        self._every(TICK_S, self._tick)
        if self._autoplay and self.pos < len(self.timeline):
            self._play(True)

    def _seek(self, i: int, reset: bool = False) -> None:
        tl = self.timeline
        assert tl is not None
        self.pos = max(0, min(i, len(tl)))
        self.state = tl.state_at(self.pos)
        self._vt = tl.times[self.pos - 1] if self.pos > 0 else 0.0
        self._cap_gap()
        self.query_one(Transcript).anchor()  # a seek shows the transcript's end at that point
        self.refresh_view(reset=reset)

    def _cap_gap(self) -> None:
        tl = self.timeline
        if tl is not None and self.pos < len(tl):
            nxt = tl.times[self.pos]
            if nxt - self._vt > GAP_CAP_S * self.speed:
                self._vt = nxt - GAP_CAP_S * self.speed

    def _play(self, on: bool) -> None:
        self.playing = on
        self._last_tick = self.clock()
        self._cap_gap()
        self._refresh_status()

    def _tick(self) -> None:
        if not self.playing or self.timeline is None:
            return
        tl = self.timeline
        now = self.clock()
        dt, self._last_tick = now - self._last_tick, now
        self._vt += dt * self.speed
        end = bisect.bisect_right(tl.times, self._vt, lo=self.pos)
        if end > self.pos:
            self.state.apply_all(tl.events[self.pos:end])
            self.pos = end
            self._cap_gap()
            self.refresh_view()
        if self.pos >= len(tl):
            self._play(False)

    def action_play(self) -> None:
        if self.timeline is None:
            return
        if not self.playing and self.pos >= len(self.timeline):
            self._seek(0)
        self._play(not self.playing)

    def action_step(self, delta: int) -> None:
        if self.timeline is None:
            return
        self.playing = False
        if delta > 0 and self.pos < len(self.timeline):
            self.state.apply(self.timeline.events[self.pos])
            self.pos += 1
            self._vt = self.timeline.times[self.pos - 1]
            self.refresh_view()
        elif delta < 0 and self.pos > 0:
            self._seek(self.pos - 1)
        else:
            self._refresh_status()

    def _jump(self, kind: str, delta: int) -> None:
        tl = self.timeline
        if tl is None:
            return
        target = tl.next_position(kind, self.pos) if delta > 0 else tl.prev_position(kind, self.pos)
        if target is None:
            self.notify(f"no {'next' if delta > 0 else 'previous'} {kind}", timeout=2)
            return
        self._seek(target)

    def action_eval_jump(self, delta: int) -> None:
        self._jump("eval", delta)

    def action_question_jump(self, delta: int) -> None:
        self._jump("question", delta)

    def action_speed(self, delta: int) -> None:
        i = SPEEDS.index(self.speed) if self.speed in SPEEDS else 3
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + delta))]
        self._refresh_status()

    def action_seek_home(self) -> None:
        self._seek(0)

    def action_seek_end(self) -> None:
        if self.timeline is not None:
            self.playing = False
            self._seek(len(self.timeline))
            self.query_one(Transcript).jump_end()

    # ------------------------------------------------------------------ both

    def action_help(self) -> None:
        from socratic.tui.help_screen import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(HelpScreen(self.mode))

    def action_copy(self) -> None:
        focused = self.focused
        text = ""
        if isinstance(focused, DataTable) and hasattr(focused, "selected_text"):
            text = focused.selected_text()
        elif focused is not None and hasattr(focused, "copy_text"):
            text = focused.copy_text()
        else:
            block = self.query_one(Transcript).selected_block()
            if block is not None and hasattr(block, "copy_text"):
                text = block.copy_text()
        block = getattr(focused, "block", None) or getattr(
            self.query_one(Transcript).selected_block(), "block", None)
        blob = block.get("blob") if block is not None and text else None
        if blob:  # the tool's full output was too long for the event log
            try:
                text = (self.session_dir / blob).read_text(encoding="utf-8", errors="replace")
            except OSError:
                pass
        if not text:
            self.notify("nothing to copy", timeout=2)
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied {len(text)} characters (OSC 52)", timeout=2)


def run_watch(session_dir: Path, **opts: Any) -> int:
    """Attach the TUI to a (live) session; used by `socratic watch` and `socratic run`.

    Options: poll (force polling), no_mouse. The session's events.jsonl may not exist
    yet (the harness was just started); the screen waits for it.
    """
    session_dir = check_session_dir(Path(session_dir), need_events=False)
    app = SocraticApp(session_dir, "watch", poll=bool(opts.get("poll")))
    app.run(mouse=not opts.get("no_mouse", False))
    return 0


def run_replay(session_dir: Path, **opts: Any) -> int:
    session_dir = check_session_dir(Path(session_dir))
    app = SocraticApp(session_dir, "replay", speed=float(opts.get("speed") or 10.0))
    app.run(mouse=not opts.get("no_mouse", False))
    return 0
