"""The help screen: every key of the current mode."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

WATCH_KEYS = [
    ("/", "open the question picker and filter the bank"),
    ("Enter", "in the picker: inject the highlighted question"),
    ("i", "type a free-text question"),
    ("p", "pause or resume the campaign"),
    ("e", "evaluate now"),
    ("x", "stop the campaign (asks to confirm)"),
    ("a", "toggle auto-questions"),
]
REPLAY_KEYS = [
    ("space", "play or pause"),
    ("← / →", "one event back / forward"),
    ("[ / ]", "previous / next evaluation"),
    ("{ / }", "previous / next question"),
    ("+ / -", "faster / slower (x1 … x1000, idle gaps capped)"),
    ("home / end", "first / last event"),
]
COMMON_KEYS = [
    ("tab", "move focus between the transcript and the scenario table"),
    ("j / k", "transcript: select the next / previous block (also shift+↓ / shift+↑)"),
    ("Enter", "transcript: expand or collapse the selected tool call"),
    ("c", "copy the selected block (or the last one) or table row (OSC 52)"),
    ("s", "scenario table: cycle sort (order, worst first, best first)"),
    ("u", "transcript: load earlier blocks (or scroll to the top)"),
    ("?", "this help"),
    ("ctrl+q", "quit the TUI (the campaign goes on)"),
]


def key_table(title: str, keys: list[tuple[str, str]]) -> Table:
    table = Table(title=Text(title, style="bold"), show_header=False, box=None,
                  padding=(0, 1), expand=True)
    table.add_column("key", style="bold", no_wrap=True, width=12)
    table.add_column("action")
    for k, v in keys:
        table.add_row(k, v)
    return table


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help_screen.tcss"
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            if self.mode == "replay":
                yield Static(key_table("Replay", REPLAY_KEYS))
            else:
                yield Static(key_table("Watch: steer the campaign", WATCH_KEYS))
            yield Static(key_table("Everywhere", COMMON_KEYS))
            yield Static(Text("Escape closes this help.", style="dim"))

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
