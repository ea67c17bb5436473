"""Watch mode: tail a live session's events.jsonl and steer the campaign through its
inbox.jsonl (questions and controls). The inbox is read too: every question in it that
the harness has not logged yet is shown as pending, whoever wrote it.

Whether the campaign still runs is not in its log: a campaign killed before its
`campaign.end` leaves a log that looks like a running one. Its process holds the session
lock (socratic.ownership) for its life, so the screen checks that lock too and says
NO WRITER when nobody holds it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.binding import Binding
from textual.reactive import reactive

from socratic.contracts import AskCommand, ControlCommand, InboxCommand
from socratic.eventlog import EVENTS_FILE, INBOX_FILE, inject, read_jsonl
from socratic.ownership import session_held
from socratic.tui import format as fmt
from socratic.tui.campaign_screen import CampaignScreen
from socratic.tui.events_file import read_events
from socratic.tui.pending import inbox_questions, pending_questions
from socratic.tui.state import CampaignState
from socratic.tui.widgets.scenario_table import ScenarioTable

WAITING_AFTER_S = 120  # no event for this long while running → "waiting"
WRITER_CHECK_S = 2.0   # how often the session lock is checked for a live campaign


class EmptyBank:
    entries: list = []

    def get(self, _id):
        return None


class WatchScreen(CampaignScreen):
    mode = "watch"
    BINDINGS = [
        Binding("slash", "pick", "Ask"),
        Binding("i", "ask", "Text"),
        Binding("p", "pause", "Pause/resume"),
        Binding("e", "evaluate", "Eval"),
        Binding("x", "stop", "Stop"),
        Binding("a", "auto", "Auto"),
    ]
    # the log has no campaign.end, yet no process holds the session: its campaign died
    writer_gone: reactive[bool] = reactive(False, init=False)

    def __init__(self, session_dir: Path, clock: Callable[[], float], *, poll: bool = False,
                 bank: Any = None, watch_files: bool = True) -> None:
        super().__init__(session_dir, clock)
        self.events_path = self.session_dir / EVENTS_FILE
        self.inbox_path = self.session_dir / INBOX_FILE
        self._inbox: list[dict] = []     # the inbox's question commands, in order
        self._inbox_offset = 0
        self._sent: dict[str, float] = {}  # text → when this TUI sent it
        self.poll = poll
        self._bank = bank
        self._bank_error = ""
        self._auto_requested: bool | None = None
        self._offset = 0
        self._last_event_wall: float | None = None
        self._stop_watching = threading.Event()
        self._watch_files = watch_files

    def on_mount(self) -> None:
        super().on_mount()
        self._poll_inbox()
        self._poll_file()
        if not self.state.n_events:
            self.refresh_view(reset=True)
        if self._watch_files:
            self._tail()
            # a slow safety net beside inotify (or beside polling): a cheap stat
            self._every(2.0, self._poll_file)
            self._every(2.0, self._poll_inbox)
        self._check_writer()
        self._every(WRITER_CHECK_S, self._check_writer)

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # ------------------------------------------------------------------ drawing

    def key_labels(self) -> dict[str, str]:
        return {"p": "resume" if self.state.status == "paused" else "pause",
                "a": self.auto_label() or "auto"}

    def auto_label(self) -> str:
        return fmt.auto_label(self.state.auto, self._auto_requested)

    def empty_note(self) -> str:
        path = self.events_path
        if not path.exists():
            return f"waiting for {path}: the campaign has not started writing it"
        if self.skipped:
            s = "s" if self.skipped != 1 else ""
            return (f"{path}: no socratic event yet ({self.skipped} line{s} skipped: not "
                    "JSON objects); waiting for the campaign's events")
        return f"{path} is empty: waiting for the campaign's first event"

    def display_status(self) -> str:
        s = self.state
        if self.writer_gone:
            return "no writer"
        status = super().display_status()
        if status == "running" and self._last_event_wall is not None:
            if self.clock() - self._last_event_wall > WAITING_AFTER_S:
                return "waiting"
        if not s.started and s.status == "starting":
            return "starting" if self.events_path.exists() else "waiting"
        return status

    def elapsed(self) -> float:
        """Campaign time: it runs on between events, paused or not (the harness's clock
        does), so it never freezes and then jumps."""
        s = self.state
        if (s.status not in ("ended", "starting") and not self.writer_gone
                and self._last_event_wall is not None):
            return s.t + max(0.0, self.clock() - self._last_event_wall)
        return s.t

    def status_extra(self) -> list[str]:
        return ["not running: no process holds the session"] if self.writer_gone else []

    # ------------------------------------------------------------------ liveness

    def _may_have_writer(self) -> bool:
        """Only a started, unended campaign of `socratic run` holds its session for its
        life: an attached one is written by short-lived hooks, nothing holds it between."""
        s = self.state
        return s.started and s.status != "ended" and not s.agent

    def _check_writer(self) -> None:
        if self._may_have_writer():
            self._probe_writer()
        else:
            self.writer_gone = False

    @work(exclusive=True, group="writer")
    async def _probe_writer(self) -> None:
        def nobody_holds() -> bool:  # a flock probe, in a thread: it may wait on the file
            return session_held(self.session_dir) is False  # None: a session without a lock

        gone = await asyncio.to_thread(nobody_holds)
        if not self.is_attached:
            return
        if gone:  # a campaign writes its campaign.end before it lets go: read up to it first
            self._poll_file()
        self.writer_gone = gone and self._may_have_writer()

    def watch_writer_gone(self) -> None:
        self._refresh_status()

    # ------------------------------------------------------------------ tailing

    def _poll_file(self) -> None:
        try:
            size = self.events_path.stat().st_size
        except OSError:
            return
        if size < self._offset:  # the log was replaced: start over
            self._offset = self.skipped = 0
            self.state = CampaignState()
            self.query_one(ScenarioTable).reset()
            self._update_pending()
            self.refresh_view(reset=True)
        if size == self._offset:
            return
        try:
            chunk = read_events(self.events_path, self._offset)
        except OSError:
            return
        self._offset = chunk.offset
        self.skipped += chunk.skipped
        if chunk.events:
            self.ingest(chunk.events)
        elif chunk.skipped:
            self.refresh_view()

    def ingest(self, events: list[dict]) -> None:
        first = self.state.n_events == 0
        switches = self.state.log.auto_switches
        self.state.apply_all(events)
        if self.state.log.auto_switches != switches:  # the harness acted on a switch
            self._auto_requested = None
        self._last_event_wall = self.clock()
        self._update_pending()
        self.refresh_view(reset=first)

    def _poll_inbox(self) -> None:
        """Read questions appended to inbox.jsonl since the last call (by anyone)."""
        try:
            size = self.inbox_path.stat().st_size
        except OSError:
            return
        if size < self._inbox_offset:  # the inbox was replaced: read it again
            self._inbox, self._inbox_offset = [], 0
        if size == self._inbox_offset:
            return
        try:
            commands, self._inbox_offset = read_jsonl(self.inbox_path, self._inbox_offset)
        except OSError:
            return
        new = inbox_questions(commands)
        if new:
            self._inbox.extend(new)
            if self._update_pending():
                self.refresh_view()

    def _update_pending(self) -> bool:
        """Recompute the pending questions; True if they changed."""
        pending = [dict(c, sent=self._sent.get(c["text"]))
                   for c in pending_questions(self._inbox, self.state.questions)]
        changed = pending != self.pending
        self.pending = pending
        return changed

    @work(exclusive=True, group="tail")
    async def _tail(self) -> None:
        try:
            from watchfiles import awatch
        except ImportError:  # pragma: no cover - watchfiles is a dependency
            self._every(0.25, self._poll_file)
            return

        def events_or_inbox(_change, path: str) -> bool:
            return Path(path).name in (EVENTS_FILE, INBOX_FILE)

        try:
            async for changes in awatch(
                self.session_dir, watch_filter=events_or_inbox, debounce=50, step=20,
                force_polling=True if self.poll else None, poll_delay_ms=200,
                recursive=False, stop_event=self._stop_watching, rust_timeout=500,
                yield_on_timeout=False,
            ):
                if self.is_attached and self.app.is_running:
                    if any(Path(path).name == INBOX_FILE for _, path in changes):
                        self._poll_inbox()
                    self._poll_file()
        except Exception as exc:  # e.g. inotify limits: fall back to polling
            self.notify(f"file watching failed ({exc}); polling instead", severity="warning")
            self._every(0.25, self._poll_file)

    # ------------------------------------------------------------------ actions

    def _ended(self) -> bool:
        """The campaign cannot act on a control: it has ended, or its process is gone."""
        if self.state.status == "ended" or self.writer_gone:
            what = "has ended" if self.state.status == "ended" else "is not running"
            self.notify(f"the campaign {what}: nothing to control (socratic run --resume "
                        "restarts it)", severity="warning", timeout=4)
            return True
        return False

    def _send(self, command: InboxCommand, note: str) -> bool:
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
        search: Callable[..., Any] | None = None
        if not isinstance(bank, EmptyBank):
            from socratic.bank import search
        ids, kind = self._suggestions(bank)
        note = f"bank unavailable: {self._bank_error}" if self._bank_error else ""
        self.app.push_screen(PickerScreen(bank, ids, set(self.state.asked), kind, search, note),
                             self._picked)

    def _picked(self, entry: Any) -> None:
        if entry is None:
            return
        eid = str(getattr(entry, "id", ""))
        text = str(getattr(entry, "text", ""))
        self.ask(text, eid or None)

    def ask(self, text: str, bank_id: str | None = None) -> None:
        # the harness waits only after repeated stop attempts with the goal unmet: a
        # question then answers them (logged as `[human @ declared_done]`)
        waiting = self.state.status == "waiting"
        command = AskCommand(text=text, bank_id=bank_id or None,
                             trigger="declared_done" if waiting else None)
        note = f"question sent: {bank_id or text[:40]}"
        if self.state.status == "ended" or self.writer_gone:  # kept in the inbox until then
            what = "has ended" if self.state.status == "ended" else "is not running"
            note = (f"the campaign {what}: the question is kept for `socratic run "
                    "--resume`, which asks it")
        if self._send(command, note):
            self._sent.setdefault(text, self.clock())
            self._poll_inbox()

    def action_ask(self) -> None:
        from socratic.tui.ask_screen import AskScreen

        self.app.push_screen(AskScreen(), lambda text: self.ask(text) if text else None)

    def action_pause(self) -> None:
        if self._ended():
            return
        action = "resume" if self.state.status == "paused" else "pause"
        self._send(ControlCommand(action=action), f"{action} requested")

    def action_evaluate(self) -> None:
        if self._ended():
            return
        self._send(ControlCommand(action="evaluate"), "evaluation requested")

    def action_stop(self) -> None:
        from socratic.tui.confirm_screen import ConfirmScreen

        if self._ended():
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._send(ControlCommand(action="stop"),
                           "stop requested (the harness stops at the next safe point)")

        self.app.push_screen(ConfirmScreen("Stop the campaign? The agent is stopped at the next "
                                           "safe point; the session can be resumed later."),
                             answered)

    def action_auto(self) -> None:
        if self._ended():
            return
        current = self._auto_requested if self._auto_requested is not None else bool(self.state.auto)
        want = not current
        if self._send(ControlCommand(action="auto_on" if want else "auto_off"),
                      f"auto-questions {'on' if want else 'off'} requested"):
            self._auto_requested = want
            self.refresh_view()
