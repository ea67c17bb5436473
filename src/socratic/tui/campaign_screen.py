"""The campaign screen both modes share: status line, transcript beside (wide) or above
(narrow) the scenario table, footer; the keys that work in both modes.

`WatchScreen` (watch_screen.py) feeds it from the live log and writes the inbox;
`ReplayScreen` (replay_screen.py) feeds it from a `Timeline` with a clock. The screen is a
function of `self.state` (a `CampaignState`, tui/state.py): `refresh_view()` draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable

from socratic.errors import InputError
from socratic.sessionfiles import open_session
from socratic.tui import format as fmt
from socratic.tui.state import CampaignState
from socratic.tui.widgets.eval_header import EvalHeader
from socratic.tui.widgets.key_hints import KeyHints
from socratic.tui.widgets.pending_bar import PendingBar
from socratic.tui.widgets.scenario_table import ScenarioTable
from socratic.tui.widgets.speedup_plot import SpeedupPlot
from socratic.tui.widgets.status_line import StatusLine
from socratic.tui.widgets.transcript import Transcript


class CampaignScreen(Screen):
    """`mode` names the subclass's mode ("watch" or "replay"): the footer and help use it."""

    mode = ""
    BINDINGS = [
        Binding("c", "copy", "Copy", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("r", "report", "Report", show=False),
        Binding("v", "coverage", "Coverage", show=False),
        # on the screen, not the widgets: they work whatever has focus
        Binding("s", "sort", "Sort", show=False),
        Binding("u", "earlier", "Earlier", show=False),
        Binding("less_than_sign", "table_scroll(-1)", "Table left", show=False),
        Binding("greater_than_sign", "table_scroll(1)", "Table right", show=False),
    ]

    def __init__(self, session_dir: Path, clock: Callable[[], float]) -> None:
        super().__init__()
        self.session_dir = Path(session_dir)
        self.clock = clock
        self.state = CampaignState()
        self.pending: list[dict] = []
        self.skipped = 0  # complete lines of the log that are not JSON objects
        self.renders = 0
        self._periodic: list[Callable[[], None]] = []  # what the screen's timers call

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
        self._every(1.0, self._refresh_status)

    def _every(self, seconds: float, fn: Callable[[], None]) -> None:
        """Call `fn` every `seconds` while the screen is up: at shutdown the widgets `fn`
        updates may go before the timers stop."""
        def tick() -> None:
            if self.is_attached and self.app.is_running:
                fn()

        self._periodic.append(tick)
        self.set_interval(seconds, tick)

    # ------------------------------------------------------------------ rendering

    def refresh_view(self, reset: bool = False) -> None:
        s = self.state
        self.renders += 1
        with self.app.batch_update():
            self._refresh_status()
            self.query_one(EvalHeader).show(s)
            self.query_one(ScenarioTable).show(s)
            self._fit_table()
            # the id column's width is known once the table has laid out its new rows
            self.call_after_refresh(self._fit_table)
            self.query_one(SpeedupPlot).show(s.goal_evals(), s.goal, s.goal_against)
            transcript = self.query_one(Transcript)
            transcript.show(s.blocks, reset=reset)
            transcript.set_note("" if s.blocks else self.empty_note())
            self.query_one(PendingBar).show(self.pending, self.clock())
            self.query_one(KeyHints).show(self.key_labels())

    def on_resize(self) -> None:
        self._fit_table()

    def _fit_table(self) -> None:
        """Side by side (wide screens), the table's pane takes what the table needs to
        show every column, between half and two thirds of the screen; narrower, it
        scrolls sideways (< >)."""
        right = self.query_one("#right")
        if not self.has_class("-wide"):
            width = None
        else:
            screen = self.size.width
            need = self.query_one(ScenarioTable).needed_width + 1  # + the pane's border
            width = max(screen // 2, min(need, screen * 2 // 3))
        if width != getattr(self, "_right_width", None):
            self._right_width = width
            right.styles.width = width  # None: back to the stylesheet's

    def empty_note(self) -> str:
        """What the transcript says while there is no block."""
        return ""

    def key_labels(self) -> dict[str, str]:
        """Footer labels that follow the state (e.g. `p` says "resume" while paused)."""
        return {}

    def display_status(self) -> str:
        s = self.state
        if s.status == "running" and s.retry is not None:
            return "retrying"
        return s.status

    def auto_label(self) -> str:
        return fmt.auto_label(self.state.auto)

    def elapsed(self) -> float:
        return self.state.t

    def status_extra(self) -> list[str]:
        return []

    def _refresh_status(self) -> None:
        self.query_one(StatusLine).show(
            self.state, self.display_status(), self.elapsed(), self.status_extra(),
            pending=len(self.pending), auto=self.auto_label(),
            skipped=self.skipped + self.state.n_malformed)
        if self.pending:
            self.query_one(PendingBar).show(self.pending, self.clock())

    # ------------------------------------------------------------------ both modes

    def action_help(self) -> None:
        from socratic.tui.help_screen import HelpScreen

        self.app.push_screen(HelpScreen(self.mode))

    def action_report(self) -> None:
        from socratic.tui.report_screen import ReportScreen

        self.app.push_screen(ReportScreen(self.session_dir))

    def action_coverage(self) -> None:
        from socratic.tui.coverage_screen import CoverageScreen

        self.app.push_screen(CoverageScreen(self.session_dir))

    def action_sort(self) -> None:
        self.query_one(ScenarioTable).cycle_sort()

    def action_earlier(self) -> None:
        self.query_one(Transcript).action_load_earlier()

    def action_table_scroll(self, delta: int) -> None:
        self.query_one(ScenarioTable).scroll_columns(delta)

    def action_copy(self) -> None:
        focused = self.focused
        transcript = self.query_one(Transcript)
        text = ""
        if isinstance(focused, DataTable) and hasattr(focused, "selected_text"):
            text = focused.selected_text()
        elif focused is not None and hasattr(focused, "copy_text"):
            text = focused.copy_text()
        else:
            selected = transcript.selected_block()
            if selected is not None and hasattr(selected, "copy_text"):
                text = selected.copy_text()
        block: Any = getattr(focused, "block", None) or getattr(
            transcript.selected_block(), "block", None)
        blob = block.get("blob") if block is not None and text else None
        if blob:  # the tool's full output was too long for the event log
            try:
                text = open_session(self.session_dir).read_text(blob)  # a folder's or a pack's
            except (OSError, InputError):
                pass
        if not text:
            self.notify("nothing to copy", timeout=2)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {len(text)} characters (OSC 52)", timeout=2)
