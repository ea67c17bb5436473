"""The footer: the keys of the current mode, in a fixed order (Textual's Footer orders
keys by the focused widget's bindings, which reshuffles them as focus moves)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

HINTS = {
    "watch": [("/", "ask"), ("i", "text"), ("p", "pause"), ("e", "eval"), ("x", "stop"),
              ("a", "auto"), ("c", "copy"), ("?", "help"), ("^q", "quit")],
    "replay": [("space", "play"), ("←→", "step"), ("[]", "eval"), ("{}", "question"),
               ("+-", "speed"), ("home/end", ""), ("c", "copy"), ("?", "help"), ("^q", "quit")],
}


class KeyHints(Static):
    DEFAULT_CSS = "KeyHints { height: 1; width: 1fr; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, mode: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode = mode

    def on_mount(self) -> None:
        self.show({})

    def show(self, labels: dict[str, str]) -> None:
        """`labels` overrides a key's label (e.g. `p` says "resume" while paused)."""
        if labels == getattr(self, "_labels", None):
            return
        self._labels = dict(labels)
        t = Text(no_wrap=True, overflow="ellipsis")
        for key, label in HINTS.get(self.mode, []):
            label = labels.get(key, label)
            t.append(f" {key}", style="bold reverse")
            t.append(f" {label} " if label else " ")
        self.update(t, layout=False)
