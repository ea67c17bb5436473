"""Questions written to inbox.jsonl that the harness has not yet logged as `question`."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from socratic.tui import format as fmt


class PendingBar(Static):
    DEFAULT_CSS = "PendingBar { height: auto; max-height: 3; padding: 0 1; display: none; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, pending: list[dict], now: float) -> None:
        if not pending:
            self.display = False
            return
        t = Text(no_wrap=True, overflow="ellipsis")
        for i, p in enumerate(pending[-3:]):
            if i:
                t.append("\n")
            age = fmt.duration(max(0.0, now - p.get("sent", now)))
            t.append("⏳ pending ", style="bold")
            label = p.get("bank_id") or "free text"
            t.append(f"[{label}] ", style="dim")
            t.append(fmt.one_line(p.get("text", ""), 200))
            t.append(f"  (sent {age} ago, delivered at the next safe point)", style="dim")
        lines = len(pending[-3:])
        self.update(t, layout=lines != getattr(self, "_lines", None) or not self.display)
        self._lines = lines
        self.display = True
