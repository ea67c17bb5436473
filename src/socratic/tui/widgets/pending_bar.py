"""Questions written to inbox.jsonl (by this TUI or anyone else) that the harness has not
yet logged as `question` events."""

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
        more = len(pending) - 3
        for i, p in enumerate(pending[-3:]):
            if i:
                t.append("\n")
            t.append("⏳ pending ", style="bold")
            if i == 0 and more > 0:
                t.append(f"(+{more} earlier) ", style="bold")
            label = p.get("bank_id") or "free text"
            t.append(f"[{label}] ", style="dim")
            t.append(fmt.one_line(str(p.get("text", "")), 200))
            sent = p.get("sent")
            when = (f"sent {fmt.duration(max(0.0, now - sent))} ago" if sent is not None
                    else "in the inbox")
            t.append(f"  ({when}, delivered at the next safe point)", style="dim")
        lines = len(pending[-3:])
        self.update(t, layout=lines != getattr(self, "_lines", None) or not self.display)
        self._lines = lines
        self.display = True
