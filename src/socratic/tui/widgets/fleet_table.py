"""The fleet table: one row per campaign (socratic.fleet.CampaignRow), keyed by campaign
name; a poll changes only the cells that changed, so 16 live campaigns cost little."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.strip import Strip
from textual.widgets import DataTable

from socratic.tui.widgets.column_scroll import scroll_columns, whole_columns

# what a glance needs first (at 80 columns the rest is a `>` away); the name stays put;
# what kind of campaign it is (questions mode, agent) next, as a fleet compares by them
COLUMNS = [("campaign", "campaign"), ("state", "state"), ("evals", "evals"),
           ("geomean", "geomean"), ("min", "min"), ("goal", "goal"), ("pending", "pending"),
           ("questions", "q"), ("agent", "agent"), ("trigger", "trigger"), ("task", "task"),
           ("cost", "cost"), ("gpu", "gpu")]
FIXED = 1

# pass/fail and waiting are words and symbols, never colour alone
STATE_MARK = {"running": "▶", "starting": "▶", "paused": "‖", "waiting": "?",
              "queued": "…", "not started": "·", "ended": "■", "stopped": "✗"}


def _x(v: Any) -> str:
    return f"{v:.3f}x" if isinstance(v, (int, float)) else "-"


def state_text(row: Any) -> Text:
    mark = STATE_MARK.get(row.state, " ")
    if row.state == "ended":
        if row.detail:   # hooks_silent, agent_exited: no result, whatever the log says
            return Text(f"! ended: {row.reason} (not met)", style="bold red")
        ok = row.reason == "goal_met"
        return Text(f"{mark} ended: {row.reason}", style="green" if ok else "")
    if row.state == "waiting":
        return Text(f"{mark} waiting for you", style="bold yellow")
    if row.state == "stopped":
        return Text(f"{mark} stopped (no process)", style="red")
    text = f"{mark} {row.state}"
    if row.gpu_waiting:
        text += " · GPU turn"
    return Text(text, style="dim" if row.state in ("queued", "not started") else "")


def cells(row: Any) -> list[Any]:
    goal = "-"
    if row.goal is not None:
        goal = f"{row.goal:g}x" + (" ✓ met" if row.met else "")
    best_min = _x(row.best_min)
    miss = row.goal is not None and row.best_min is not None and row.best_min < row.goal
    return [row.name, state_text(row), str(row.evaluations), _x(row.best_geomean),
            Text(best_min + (" ▼" if miss else ""), style="yellow" if miss else ""), goal,
            Text(str(row.pending), style="bold") if row.pending else "0", row.questions,
            row.agent, row.last_trigger or "-", row.task,
            f"${row.cost_usd:.2f}", row.gpu if row.gpu is not None else (row.job or "-")]


class FleetTable(DataTable):
    """`scroll_columns` (the screen's < and >): sideways by whole columns."""

    DEFAULT_CSS = "FleetTable { height: 1fr; scrollbar-size-vertical: 1; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, fixed_columns=FIXED, **kwargs)
        self._shown: dict[str, list[str]] = {}

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    def show(self, rows: list[Any]) -> None:
        """Add new rows, update changed cells (the cursor stays on its campaign)."""
        for row in rows:
            values = cells(row)
            plain = [str(v) for v in values]
            old = self._shown.get(row.name)
            if old is None:
                self.add_row(*values, key=row.name)
            elif old != plain:
                for (key, _), value, before, now in zip(COLUMNS, values, old, plain, strict=False):
                    if before != now:
                        self.update_cell(row.name, key, value, update_width=True)
            self._shown[row.name] = plain

    def scroll_columns(self, delta: int) -> None:
        scroll_columns(self, FIXED, delta)

    def render_line(self, y: int) -> Strip:
        return whole_columns(self, super().render_line(y), FIXED)   # no column cut at an edge

    @property
    def current(self) -> str | None:
        """The highlighted campaign's name."""
        if not self.row_count:
            return None
        key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return key.value
