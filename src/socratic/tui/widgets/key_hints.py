"""The footer: the keys of the current mode, in a fixed order (Textual's Footer orders
keys by the focused widget's bindings, which reshuffles them as focus moves). When the
line is too narrow, the least needed hints go first; `? help` and `^q quit` always stay."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

HINTS = {
    "watch": [("/", "ask"), ("i", "text"), ("p", "pause"), ("e", "eval"), ("x", "stop"),
              ("a", "auto"), ("c", "copy"), ("?", "help"), ("^q", "quit")],
    "fleet": [("enter", "open"), ("/", "ask"), ("i", "text"), ("<>", "columns"), ("?", "help"), ("^q", "quit")],
    "replay": [("space", "play"), ("←→", "step"), ("[]", "eval"), ("{}", "question"),
               ("+-", "speed"), ("home/end", ""), ("c", "copy"), ("?", "help"), ("^q", "quit")],
}
# dropped first to last when the line does not fit; ? and ^q are never dropped
KEEP = ("?", "^q")
DROP = {"watch": ["c", "e", "i", "x"], "replay": ["c", "home/end", "{}", "+-"]}


class KeyHints(Static):
    DEFAULT_CSS = "KeyHints { height: 1; width: 1fr; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, mode: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode = mode
        self._labels: dict[str, str] | None = None

    def on_mount(self) -> None:
        self.show({})

    def on_resize(self) -> None:
        if self._labels is not None:
            self._draw()

    def show(self, labels: dict[str, str]) -> None:
        """`labels` overrides a key's label (e.g. `p` says "resume" while paused)."""
        if labels == self._labels:
            return
        self._labels = dict(labels)
        self._draw()

    def _draw(self) -> None:
        labels = self._labels or {}
        hints = [(k, labels.get(k, label)) for k, label in HINTS.get(self.mode, [])]
        width = self.size.width or 200
        drop = list(DROP.get(self.mode, []))
        # then any other hint, the last first: `? help` and `^q quit` stay at 40 columns too
        drop += [k for k, _ in reversed(hints) if k not in drop and k not in KEEP]
        while self._text(hints).cell_len > width and drop:
            gone = drop.pop(0)
            hints = [h for h in hints if h[0] != gone]
        self.update(self._text(hints), layout=False)

    @staticmethod
    def _text(hints: list[tuple[str, str]]) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        for key, label in hints:
            t.append(f" {key}", style="bold reverse")
            t.append(f" {label} " if label else " ")
        return t
