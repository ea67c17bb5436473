"""The help screen: every key of the current mode."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from socratic.tui.widgets.scenario_table import SORT_LABELS

WATCH_KEYS = [
    ("/", "question picker: filter the bank, Enter asks (asked ones ✓)"),
    ("i", "type a free-text question"),
    ("p", "pause or resume the campaign"),
    ("e", "evaluate now"),
    ("x", "stop the campaign (asks to confirm)"),
    ("a", "auto-questions on / off (footer and status line say which)"),
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
    ("tab", "focus: transcript ↔ scenario table"),
    ("j / k", "select the next / previous transcript block (shift+↓ / ↑)"),
    ("Enter", "expand or collapse the selected tool call"),
    ("u", "load earlier transcript blocks; all loaded: go to the top"),
    ("c", "copy the selected block (or the last) or table row (OSC 52)"),
    ("s", "sort the scenarios: " + " → ".join(SORT_LABELS.values())),
    ("< / >", "scroll the scenario table sideways (scenario id stays)"),
    ("r", "the session's report summary (socratic report)"),
    ("v", "coverage of the last space evaluation (eval --space N): worst cells first"),
]
LEGEND = [
    ("table", "✓ ok · ✗ FAIL (incorrect) · ▼ slow (correct, below the goal) · "
              "err× = max error ÷ the baseline's · bound = fraction of the time bound"),
    ("plot", "geo / min: geomean and min speedup of each evaluation of the goal set, "
             "oldest left, then the last value; █=… is the top of the scale, ▁=… its "
             "bottom; ✗ an incorrect evaluation"),
    ("status", "campaign time runs on while paused; RETRYING: the API failed, with the "
               "attempt, the error and the next try"),
]


def key_table(title: str, keys: list[tuple[str, str]]) -> Table:
    table = Table(title=Text(title, style="bold"), show_header=False, box=None,
                  padding=(0, 1), expand=True)
    table.add_column("key", style="bold", no_wrap=True, width=10)
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
            # first, so that it is on screen at any size without scrolling
            yield Static(Text.assemble(("ctrl+q", "bold"), " quits the TUI (the campaign goes on)"
                                       " · ", ("Escape", "bold"), " or ", ("?", "bold"),
                                       " closes this help"), id="help-quit")
            if self.mode == "replay":
                yield Static(key_table("Replay", REPLAY_KEYS))
            else:
                yield Static(key_table("Watch: steer the campaign", WATCH_KEYS))
            yield Static(key_table("Everywhere", COMMON_KEYS))
            yield Static(key_table("What the screen shows", LEGEND))

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
