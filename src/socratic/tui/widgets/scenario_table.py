"""One row per scenario: pass/fail in words and symbols, errors, times, speedups, bound.

Rows are keyed by scenario id; `show()` compares each cell's text with what is already
there and calls `update_cell` only for cells that changed (inside `app.batch_update()`).
Rows that miss the goal come first by default; `cycle_sort()` (the screen's `s`) cycles
that, scenario order, worst speedup first and best first (numeric sorts); a click on a
header sorts by that column.

Narrow by design: no cell padding, the gap between columns is inside each column's fixed
width (numbers are right-aligned), so every column fits beside the transcript at 160
columns for short scenario ids. Wider tables scroll sideways with the ok and scenario
columns fixed on the left; `needed_width` says how wide the table wants to be.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.coordinate import Coordinate
from textual.reactive import reactive
from textual.strip import Strip
from textual.widgets import DataTable

from socratic.tui import format as fmt
from socratic.tui.state import CampaignState, ScenarioRow
from socratic.tui.widgets.column_scroll import scroll_columns, whole_columns

# (key, header, width incl. the gap, right-aligned); speedup sits next to the id so that it
# stays visible at 80 columns; the id column sizes itself to the ids
COLUMNS = (
    ("verdict", "ok", 7, False), ("id", "scenario", None, False), ("spd", "speedup", 8, True),
    ("best", "best", 6, True), ("cand", "cand ms", 8, True), ("base", "base ms", 8, True),
    ("err", "err", 8, True), ("errx", "err×", 6, True), ("tf", "TF/s", 7, True),
    ("bnd", "bound", 6, True),
)
# under a goal against a comparison (FA3, say), each row's speedup against it, beside the
# speedup against the baseline: the column the ok verdict and the sorts judge by
GOAL_COLUMN = ("goal", 7, True)
FIXED = 2  # ok and scenario stay on screen while the table scrolls sideways
# "goal": rows missing the goal first (then scenario order), so they are on screen
SORT_LABELS = {"goal": "misses first", "order": "scenario order", "worst": "worst first",
               "best": "best first"}
SORTS = tuple(SORT_LABELS)


def verdict(row: ScenarioRow, goal: float | None,
            against: str = "baseline") -> tuple[str, str]:
    """(text, style) of the ok column: words/symbols first, style only on top."""
    if row.correct is None and row.speedup is None and row.error is None:
        return ("·", "dim")
    if row.correct is False or (row.correct is None and row.error):
        return ("✗ FAIL", "bold reverse")
    if row.taken_back(against):
        return ("↺ retr", "dim")     # its evaluation was retracted on the goal's terms
    if row.meets(goal, against) is False:
        return ("▼ slow", "bold underline")
    return ("✓ ok", "")


def columns(against: str) -> tuple[tuple[str, str, int | None, bool], ...]:
    """The table's columns for a goal judged against `against`."""
    if against in ("", "baseline"):
        return COLUMNS
    key, width, right = GOAL_COLUMN
    i = [c[0] for c in COLUMNS].index("spd") + 1
    return (*COLUMNS[:i], (key, f"vs {against}", width, right), *COLUMNS[i:])


def _numeric(row: ScenarioRow, col: str, against: str = "baseline") -> float:
    val = {
        "goal": row.goal_speedup(against),
        "verdict": (0 if row.correct is False else 1 if row.speedup is None else 2),
        "err": row.figure("err"), "errx": row.err_ratio, "base": row.figure("baseline_ms"),
        "cand": row.figure("candidate_ms"), "spd": row.speedup, "best": row.best,
        "tf": row.figure("tflops"), "bnd": row.figure("bound_fraction"),
    }.get(col)
    if val is None or (isinstance(val, float) and math.isnan(val)):
        return -math.inf
    return float(val)


class ScenarioTable(DataTable):
    DEFAULT_CSS = "ScenarioTable { height: 1fr; }"

    sort_mode: reactive[str] = reactive("goal", init=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, cell_padding=0,
                         fixed_columns=FIXED, **kwargs)
        self._cells: dict[str, tuple[str, ...]] = {}
        self._rows: dict[str, ScenarioRow] = {}
        self._goal: float | None = None
        self._against = "baseline"
        self._columns: tuple[tuple[str, str, int | None, bool], ...] = COLUMNS  # _set_against widens it
        self._sort_col: str | None = None
        self._sort_reverse = False

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        for key, label, width, right in self._columns:
            self.add_column(Text(label, justify="right" if right else "left"), key=key,
                            width=width)

    def _set_against(self, against: str) -> None:
        """A goal against another comparison (a replay seeking across campaign.start, say)
        changes the columns: rebuild them, and the rows with them."""
        wanted = columns(against)
        if wanted != self._columns:
            self._columns = wanted
            self.clear(columns=True)
            self._cells.clear()
            self._add_columns()

    @property
    def needed_width(self) -> int:
        """Cells the table needs to show every column (its padding and vertical
        scrollbar included)."""
        return (sum(c.get_render_width(self) for c in self.columns.values())
                + self.styles.gutter.width + 1)

    # ------------------------------------------------------------------ render
    def render_line(self, y: int) -> Strip:
        # a column that does not fit whole at the right edge is left blank, not cut
        # mid-number (the sideways scroll, `<` `>`, brings it whole)
        return whole_columns(self, super().render_line(y), FIXED)


    def _cells_for(self, row: ScenarioRow, goal: float | None, stale: bool,
                   against: str = "baseline") -> tuple[Text, ...]:
        v_text, v_style = verdict(row, goal, against)
        dim = "dim" if stale else ""
        missing = v_style not in ("", "dim")   # not "·" (no result yet) nor "↺ retr"
        id_style = "bold" if missing else dim
        spd_style = "bold" if missing else dim
        cells = {
            "verdict": Text(v_text, style=v_style),
            "id": Text(row.id, style=id_style),  # speedup, right-aligned, makes the gap
            "spd": Text(fmt.speedup(row.goal_speedup("baseline"),
                                    goal=goal if against in ("", "baseline") else None),
                        style=dim if against not in ("", "baseline") else spd_style,
                        justify="right"),
            "goal": Text(fmt.speedup(row.goal_speedup(against), goal=goal), style=spd_style,
                         justify="right"),
            "best": Text(fmt.speedup(row.best), style="dim", justify="right"),
            "cand": Text(fmt.ms(row.figure("candidate_ms")), style=dim, justify="right"),
            "base": Text(fmt.ms(row.figure("baseline_ms")), style=dim, justify="right"),
            "err": Text(fmt.sci(row.figure("err")), style=dim, justify="right"),
            "errx": Text(fmt.ratio(row.err_ratio), style=dim, justify="right"),
            "tf": Text(fmt.fixed(row.figure("tflops")), style=dim, justify="right"),
            "bnd": Text(fmt.percent(row.figure("bound_fraction")), style=dim, justify="right"),
        }
        return tuple(cells[key] for key, *_ in self._columns)

    def show(self, state: CampaignState) -> int:
        """Bring the table up to `state`; returns the number of cells updated."""
        updated = 0
        changed = False
        self._rows = state.rows
        self._goal = state.goal
        self._against = state.goal_against
        self._set_against(state.goal_against)
        keys = [k for k, *_ in self._columns]
        for row in state.rows_in_order():
            cells = self._cells_for(row, state.goal, state.is_stale(row), state.goal_against)
            sig = tuple(c.plain + "|" + str(c.style) for c in cells)
            old = self._cells.get(row.id)
            if old is None:
                self.add_row(*cells, key=row.id)
                self._cells[row.id] = sig
                changed = True
                continue
            if old == sig:
                continue
            for i, key in enumerate(keys):
                if old[i] != sig[i]:
                    self.update_cell(row.id, key, cells[i])
                    updated += 1
            self._cells[row.id] = sig
            changed = True
        # rows that vanished (seek back before campaign.start)
        for sid in list(self._cells):
            if sid not in state.rows:
                self.remove_row(sid)
                del self._cells[sid]
                changed = True
        if changed and (self.sort_mode != "order" or self._sort_col):
            self._apply_sort()
        return updated

    def reset(self) -> None:
        self.clear()
        self._cells.clear()

    # ------------------------------------------------------------------ sorting

    def _apply_sort(self) -> None:
        rows = self._rows
        if self._sort_col:
            col, rev = self._sort_col, self._sort_reverse
            if col == "id":
                self.sort("id", key=lambda c: str(c), reverse=rev)
            else:
                self.sort("id", key=lambda c: _numeric(rows[str(c)], col, self._against)
                          if str(c) in rows else -math.inf, reverse=rev)
            return
        if self.sort_mode == "goal":
            goal = self._goal

            def miss_first(c) -> tuple:
                row = rows.get(str(c))
                if row is None:
                    return (1, 0)
                return (0 if row.meets(goal, self._against) is False else 1, row.order)

            self.sort("id", key=miss_first)
        elif self.sort_mode == "order":
            self.sort("id", key=lambda c: rows[str(c)].order if str(c) in rows else 0)
        else:
            # worst/best on the goal's terms
            self.sort("id", key=lambda c: _numeric(rows[str(c)], "goal", self._against)
                      if str(c) in rows else -math.inf, reverse=self.sort_mode == "best")

    def cycle_sort(self) -> None:
        self._sort_col = None
        self.sort_mode = SORTS[(SORTS.index(self.sort_mode) + 1) % len(SORTS)]

    def watch_sort_mode(self) -> None:
        self._apply_sort()
        self.notify(f"scenarios sorted: {SORT_LABELS[self.sort_mode]}", timeout=2)

    def scroll_columns(self, delta: int) -> None:
        """Sideways by `delta` columns; the fixed ok and scenario columns stay."""
        scroll_columns(self, FIXED, delta)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        col = str(event.column_key.value)
        if self._sort_col == col:
            self._sort_reverse = not self._sort_reverse
        else:
            self._sort_col, self._sort_reverse = col, col not in ("id",)
        self._apply_sort()

    def selected_text(self) -> str:
        """The highlighted row as tab-separated text (for copy)."""
        if self.row_count == 0:
            return ""
        try:
            row_key, _ = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0))
        except Exception:
            return ""
        cells = self.get_row(row_key)
        head = "\t".join(label for _, label, *_ in COLUMNS)
        return head + "\n" + "\t".join(str(c) for c in cells)
