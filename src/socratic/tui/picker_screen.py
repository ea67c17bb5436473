"""The question picker as a screen: `/` opens it, typing filters, Enter injects."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from socratic.tui.widgets.question_picker import QuestionPicker


class PickerScreen(ModalScreen[Any]):
    """Dismisses with the picked entry, or None."""

    CSS_PATH = "picker_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "Close"),
                Binding("enter", "pick", "Inject", show=True)]

    def __init__(self, bank: Any, suggestions: list[str], asked: set[str],
                 trigger: str | None, search=None, note: str = "") -> None:
        super().__init__()
        self._args = (bank, suggestions, asked, trigger, search)
        self.note = note

    def compose(self) -> ComposeResult:
        bank, suggestions, asked, trigger, search = self._args
        with Vertical(id="picker-body"):
            title = "Ask a question  ·  type to filter · ↑↓ move · Enter asks · Esc closes"
            if self.note:
                title += f"  ({self.note})"
            yield Static(title, id="picker-title")
            yield QuestionPicker(bank, suggestions, asked, trigger, search=search)
        yield Footer()

    def on_question_picker_picked(self, event: QuestionPicker.Picked) -> None:
        event.stop()
        self.dismiss(event.entry)

    def action_pick(self) -> None:
        self.query_one(QuestionPicker).pick()

    def action_cancel(self) -> None:
        self.dismiss(None)
