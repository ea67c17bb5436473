"""The line above the scenario table: evaluation number, geomean, min, goal, comparison."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from socratic.tui import format as fmt
from socratic.tui.state import CampaignState


class EvalHeader(Static):
    """One line, two when the summary does not fit in one (it is never cut short)."""

    DEFAULT_CSS = "EvalHeader { height: auto; max-height: 2; width: 1fr; }"

    def on_resize(self) -> None:
        if getattr(self, "_text", None) is not None:
            self._draw(self._text)

    def show(self, state: CampaignState) -> None:
        t = Text(overflow="ellipsis")
        last = state.last_eval
        goal = state.goal
        if state.table_set and state.table_set != state.goal_set:
            t.append(f"[set {state.table_set}] ", style="bold reverse")
        if state.eval_running and state.eval_n is not None:
            total = f"/{state.eval_total}" if state.eval_total else ""
            t.append(f"eval #{state.eval_n} running {state.eval_done}{total}", style="bold")
            if last is not None:
                t.append(f" · last #{last.n}", style="dim")
        elif last is not None:
            t.append(f"eval #{last.n}", style="bold")
        else:
            t.append("no evaluation yet", style="dim")
        if last is not None:
            if last.all_correct is False:
                t.append("  ✗ INCORRECT", style="bold reverse")
            elif last.all_correct:
                t.append("  ✓ correct")
            if last.shows():
                t.append("  geomean ")
                t.append(fmt.speedup(last.geomean), style="bold")
                t.append("  min ")
                below = goal is not None and last.min is not None and last.min < goal
                t.append(fmt.speedup(last.min, goal=goal), style="bold underline" if below else "bold")
                if below:
                    t.append(" ▼")
            if last.retracted:
                t.append(f"  ↺ retracted ({last.retracted})", style="bold")
        if goal is not None:
            against = "" if state.goal_against in ("", "baseline") else f" vs {state.goal_against}"
            t.append(f"  goal ≥{goal:.2f}×{against}")
            missing = state.missing_goal()
            if missing:
                t.append(f" ({len(missing)} miss)", style="bold")
        if last is not None:
            for name, val in last.comparisons:
                if last.shows(name):
                    t.append(f"  vs {name} {fmt.speedup(val)}")
        best = state.best_geomean
        if best is not None:
            against = "" if state.goal_against in ("", "baseline") else f" vs {state.goal_against}"
            t.append(f"  best{against} {fmt.speedup(best)}", style="dim")
        self._draw(t)

    def _draw(self, t: Text) -> None:
        self._text = t
        width = self.content_region.width or 80
        lines = 1 if t.cell_len <= width else 2
        key = (t.plain, tuple(t.spans), lines)
        if key != getattr(self, "_shown", None):
            # a layout pass only when the height changes
            self._shown = key
            self.update(t, layout=lines != getattr(self, "_lines", None))
            self._lines = lines
