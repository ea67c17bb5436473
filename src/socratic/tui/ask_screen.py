"""Type a free-text question; Enter sends it, Escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskScreen(ModalScreen[str | None]):
    CSS_PATH = "ask_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-body"):
            yield Static("Ask the agent (free text). Enter sends, Escape cancels.", id="ask-title")
            yield Input(placeholder="e.g. What does the profiler say limits the causal 16k case?",
                        id="ask-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
