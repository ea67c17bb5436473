"""The session's report summary (`socratic report` in a modal): figures re-derived from the
session folder as it is on disk now, computed off the UI thread."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from socratic.resources import session_arg


class ReportScreen(ModalScreen[None]):
    CSS_PATH = "report_screen.tcss"
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("r", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, session_dir: Path) -> None:
        super().__init__()
        self.session_dir = Path(session_dir)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-body"):
            yield Static(Text("Report summary", style="bold"))
            yield Static("computing…", id="report-text")
            yield Static(Text(f"socratic report {session_arg(self.session_dir)} --html FILE: the full "
                              "report with plots. Escape closes this.", style="dim"))

    def on_mount(self) -> None:
        self.compute()

    @work(thread=True, exclusive=True, group="report")
    def compute(self) -> None:
        from socratic.errors import InputError
        from socratic.report import session_report, summary_lines

        try:
            text = "\n".join(summary_lines(session_report(self.session_dir)))
        except InputError as exc:
            text = f"no report yet: {exc}"
        self.app.call_from_thread(self._show, text)

    def _show(self, text: str) -> None:
        if self.is_attached:
            self.query_one("#report-text", Static).update(Text(text))

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
