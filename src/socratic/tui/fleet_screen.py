"""The fleet screen: `socratic watch DIR` on a fleet folder. One row per campaign (state,
evaluations, best against the goal, questions mode, agent, last trigger, pending questions,
cost, GPU; an end that is no result, hooks_silent or agent_exited, is marked `!`), kept live
by a polling thread that reads only what the sessions appended; the keys act on the
highlighted campaign: Enter opens its usual watch screen (Esc comes back), `/` and `i`
ask it a question, from the bank or in your own words."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from socratic.tui.widgets.fleet_table import FleetTable
from socratic.tui.widgets.key_hints import KeyHints

POLL_S = 0.5


class FleetScreen(Screen):
    mode = "fleet"
    BINDINGS = [
        Binding("enter", "open", "Open", priority=True),
        Binding("slash", "pick", "Ask"),
        Binding("i", "ask", "Text"),
        Binding("question_mark", "help", "Help"),
        Binding("less_than_sign", "table_scroll(-1)", "Columns", key_display="<>"),
        Binding("greater_than_sign", "table_scroll(1)", "Columns", show=False),
    ]

    def __init__(self, fleet_dir: Path, clock: Callable[[], float], *, poll: bool = False,
                 bank: Any = None, watch_files: bool = True, poll_s: float = POLL_S) -> None:
        from socratic.fleet import FleetStatus

        super().__init__()
        self.fleet_dir = Path(fleet_dir)
        self.clock = clock
        self.poll = poll
        self.bank = bank
        self.watch_files = watch_files
        self.poll_s = poll_s
        self.status = FleetStatus(self.fleet_dir)
        self.rows: dict[str, Any] = {}
        self._lock = threading.Lock()       # FleetStatus is polled from one thread at a time
        self._stop = threading.Event()
        self.updates = 0                    # polls that reached the table (tests, benchmark)

    def compose(self) -> ComposeResult:
        yield Static(id="fleet-title")
        yield FleetTable(id="fleet-table")
        yield Static(id="fleet-detail")
        yield KeyHints("fleet", id="keys")

    def action_table_scroll(self, delta: int) -> None:
        self.query_one(FleetTable).scroll_columns(delta)

    def on_mount(self) -> None:
        self.refresh_rows()
        self.query_one(FleetTable).focus()
        if self.watch_files:
            self._poll_loop()

    def on_unmount(self) -> None:
        self._stop.set()

    # ------------------------------------------------------------------ data

    def _read(self) -> list[Any]:
        with self._lock:
            return self.status.poll()

    def refresh_rows(self) -> None:
        """Read the sessions now and redraw (the poll thread does this every poll_s)."""
        self._show(self._read())

    @work(thread=True, exclusive=True, group="fleet-poll")
    def _poll_loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            rows = self._read()
            if self._stop.is_set() or not self.app.is_running:
                return
            try:
                self.app.call_from_thread(self._show, rows)
            except RuntimeError:  # the app is shutting down
                return

    def _show(self, rows: list[Any]) -> None:
        if not self.is_attached:
            return
        self.rows = {r.name: r for r in rows}
        with self.app.batch_update():
            self.query_one(FleetTable).show(rows)
            self._draw_title(rows)
            self._draw_detail()
        self.updates += 1

    def _draw_title(self, rows: list[Any]) -> None:
        counts: dict[str, int] = {}
        for r in rows:
            key = "waiting for you" if r.state == "waiting" else r.state
            counts[key] = counts.get(key, 0) + 1
        order = ["waiting for you", "running", "starting", "paused", "queued", "not started",
                 "stopped", "ended"]
        parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
        met = sum(1 for r in rows if r.met)
        cost = sum(r.cost_usd for r in rows)
        unproven: dict[str, int] = {}   # ends that are no result: said apart from the rest
        for r in rows:
            if r.detail:
                unproven[r.reason] = unproven.get(r.reason, 0) + 1
        no_result = "".join(f" · ! {n} {reason}" for reason, n in sorted(unproven.items()))
        self.query_one("#fleet-title", Static).update(
            f"fleet {self.fleet_dir} · {self.status.fleet.executor} · {len(rows)} campaigns: "
            + ", ".join(parts) + f" · goal met {met}/{len(rows)}{no_result} · ${cost:.2f}")

    def on_data_table_row_highlighted(self, _event: Any) -> None:
        self._draw_detail()

    def _draw_detail(self) -> None:
        name = self.query_one(FleetTable).current
        row = self.rows.get(name) if name else None
        if row is None:
            text = ""
        else:
            what = {"queued": "queued: starts when a slot is free",
                    "not started": "not started: `socratic fleet run` starts it",
                    "stopped": f"stopped: {row.reason}",
                    "waiting": "waiting for your question: / or i asks it"}.get(row.state, "")
            if row.state == "ended":
                what = f"ended: {row.reason}" + (f": {row.detail}" if row.detail else "")
            if row.gpu_wait_s:
                what += f"{'; ' if what else ''}waited {row.gpu_wait_s:.0f}s for GPU turns"
            text = f"{row.name}  {row.session}" + (f"  ·  {what}" if what else "")
        self.query_one("#fleet-detail", Static).update(text)

    # ------------------------------------------------------------------ keys

    def _highlighted(self) -> Any | None:
        name = self.query_one(FleetTable).current
        row = self.rows.get(name) if name else None
        if row is None:
            return None
        if not row.started:
            self.notify(f"{row.name} has not started yet: nothing to watch or ask",
                        severity="warning", timeout=3)
            return None
        return row

    def _open(self, then: str | None = None) -> None:
        from socratic.tui.fleet_campaign_screen import FleetCampaignScreen

        row = self._highlighted()
        if row is None:
            return
        self.app.push_screen(FleetCampaignScreen(
            Path(row.session), self.clock, poll=self.poll, bank=self.bank,
            watch_files=self.watch_files, then=then))

    def action_open(self) -> None:
        self._open()

    def action_pick(self) -> None:
        self._open("pick")

    def action_ask(self) -> None:
        self._open("ask")

    def action_help(self) -> None:
        self.notify("Enter opens the highlighted campaign (Esc comes back); / asks it a bank "
                    "question, i your own; ↑↓ move; ctrl+q quits (the fleet goes on)",
                    timeout=8)
