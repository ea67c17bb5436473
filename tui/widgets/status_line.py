"""One line: state, elapsed, evaluations, tool calls, tokens and cost, last trigger."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui import format as fmt
from tui.state import CampaignState

STATE_MARK = {
    "starting": "○ STARTING", "running": "● RUNNING", "paused": "‖ PAUSED",
    "waiting": "… WAITING", "stopping": "■ STOPPING", "ended": "■ ENDED",
}


class StatusLine(Static):
    """The top status line. `show()` is given everything it draws (no clocks inside)."""

    DEFAULT_CSS = "StatusLine { height: 1; width: 1fr; }"

    def show(self, state: CampaignState, status: str, elapsed: float | None,
             extra: list[str] | None = None, pending: int = 0) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f" {STATE_MARK.get(status, status.upper())} ", style="bold reverse")
        parts: list[tuple[str, str]] = [(label, "bold") for label in extra or []]
        parts += [
            (fmt.elapsed(elapsed), "bold"),
            (f"evals {len(state.evals)}" + (" +1" if state.eval_running else ""), ""),
            (f"tools {state.tool_calls}", ""),
            (f"tok {fmt.count(state.input_tokens)}/{fmt.count(state.output_tokens)}", ""),
            (f"${state.cost_usd:.2f}", ""),
        ]
        trig = state.last_trigger
        if trig is not None:
            parts.append((f"trigger {trig.kind}", "bold"))
        if state.auto is not None:
            parts.append(("auto on" if state.auto else "auto off", ""))
        if pending:
            parts.append((f"{pending} pending", "bold"))
        for text, style in parts:
            t.append(" │ ", style="dim")
            t.append(text, style=style)
        self.update(t)
