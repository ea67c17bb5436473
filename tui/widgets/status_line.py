"""One line: state, elapsed, evaluations, tool calls, tokens and cost, last trigger."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from socratic.tui import format as fmt
from socratic.tui.state import CampaignState

STATE_MARK = {
    "starting": "○ STARTING", "running": "● RUNNING", "paused": "‖ PAUSED",
    "waiting": "… WAITING", "stopping": "■ STOPPING", "ended": "■ ENDED",
}


class StatusLine(Static):
    """The top status line. `show()` is given everything it draws (no clocks inside)."""

    DEFAULT_CSS = "StatusLine { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, state: CampaignState, status: str, elapsed: float | None,
             extra: list[str] | None = None, pending: int = 0) -> None:
        self._args = (state, status, elapsed, extra, pending)
        full = self._render_line(*self._args, compact=False)
        width = self.size.width or 100
        line = full if full.cell_len <= width else self._render_line(*self._args, compact=True)
        key = (line.plain, tuple(line.spans))
        if key != getattr(self, "_shown", None):  # fixed size: no layout pass needed
            self._shown = key
            self.update(line, layout=False)

    def on_resize(self) -> None:
        if getattr(self, "_args", None):
            self.show(*self._args)

    @staticmethod
    def _render_line(state: CampaignState, status: str, elapsed: float | None,
                     extra: list[str] | None, pending: int, compact: bool) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        mark = STATE_MARK.get(status, status.upper())
        t.append(f" {mark} " if not compact else f"{mark}", style="bold reverse")
        running = " +1" if state.eval_running else ""
        tokens_in = state.input_tokens + state.cache_read + state.cache_write
        tokens = f"{fmt.count(tokens_in)}/{fmt.count(state.output_tokens)}"
        parts: list[tuple[str, str]] = [(label, "bold") for label in extra or []]
        parts += [
            (fmt.elapsed(elapsed), "bold"),
            ((f"ev {len(state.evals)}" if compact else f"evals {len(state.evals)}") + running, ""),
            (f"tools {state.tool_calls}", ""),
            ((f"{tokens}" if compact else f"tok {tokens}"), ""),
            (f"${state.cost_usd:.2f}", ""),
        ]
        trig = state.last_trigger
        if trig is not None:
            parts.append((f"⚑{trig.kind}" if compact else f"trigger {trig.kind}", "bold"))
        if state.auto is not None:
            parts.append(("auto on" if state.auto else "auto off", ""))
        if pending:
            parts.append((f"{pending} pending", "bold"))
        sep = "│" if compact else " │ "
        for text, style in parts:
            t.append(sep, style="dim")
            t.append(text, style=style)
        return t
