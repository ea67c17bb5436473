"""A tool call as a collapsible block: name, short input, duration, ok; Enter expands
it to show the full input and the (truncated) output."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from socratic.tui import format as fmt
from socratic.tui.state import Block

MAX_LINES = 40



class ToolBlock(Static):
    DEFAULT_CSS = """
    ToolBlock { height: auto; padding: 0 1; }
    ToolBlock.-collapsed { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    expanded: reactive[bool] = reactive(False, init=False)

    class Toggled(Message):
        """Posted when the block expands or collapses (the transcript keeps its header
        on screen)."""

        def __init__(self, block: ToolBlock) -> None:
            super().__init__()
            self.tool_block = block

    def __init__(self, block: Block) -> None:
        super().__init__()
        self.block = block

    def on_mount(self) -> None:
        self._draw()

    def set_block(self, block: Block) -> None:
        self.block = block
        self._draw()

    def watch_expanded(self) -> None:
        self._draw()
        self.post_message(self.Toggled(self))

    def on_click(self) -> None:
        self.expanded = not self.expanded

    def _draw(self) -> None:
        b = self.block
        self.set_class(not self.expanded, "-collapsed")
        t = Text(no_wrap=not self.expanded, overflow="ellipsis")
        t.append("▾ " if self.expanded else "▸ ", style="dim")
        if not b.done:
            mark, style = "… ", "dim"
        elif b.ok is False:
            mark, style = "✗ ", "bold reverse"
        else:
            mark, style = "✓ ", ""
        t.append(mark, style=style)
        t.append(b.title, style="bold")
        if b.duration is not None:
            t.append(f" {fmt.duration(b.duration)}", style="dim")
        if b.detail:
            t.append("  " + fmt.one_line(b.detail, 160))
        if not b.done:
            t.append("  running…", style="dim italic")
        if self.expanded:
            if b.text:
                t.append("\n")
                t.append(b.text, style="dim")
            if b.output:
                lines = b.output.splitlines()
                shown = "\n".join(lines[:MAX_LINES])
                t.append("\n── output ──\n", style="dim")
                t.append(shown)
                if len(lines) > MAX_LINES:
                    t.append(f"\n… {len(lines) - MAX_LINES} more lines (c copies all)", style="dim")
        elif b.done and b.get("summary"):
            # exit code, lines, bytes, first line that says something (tui/tool_summary.py)
            t.append(f"  → {fmt.one_line(b.get('summary'), 120)}", style="dim")
        # collapsed, a block is one line: only expanding/collapsing changes its height
        self.update(t, layout=self.expanded or getattr(self, "_was_expanded", True))
        self._was_expanded = self.expanded

    def copy_text(self) -> str:
        b = self.block
        parts = [f"{b.title}: {b.detail}".rstrip(": ")]
        if b.text:
            parts.append(b.text)
        if b.output:
            parts.append(b.output)
        return "\n".join(parts)
