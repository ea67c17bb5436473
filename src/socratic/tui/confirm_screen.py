"""Yes/no confirmation (used before stopping a campaign)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    CSS_PATH = "confirm_screen.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-body"):
            yield Static(self.question, id="confirm-question")
            yield Static("y: yes    n / Escape: no", id="confirm-keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
