"""The coverage of the session's last space evaluation (`socratic eval --space N`, recorded
or imported): per hidden field and cell, the geomean and min against the baseline and each
comparison, the worst cells first; read through the report (socratic.report) off the UI
thread."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

NONE_YET = ("no space evaluation in this session yet: on the GPU node, `socratic eval TASK "
            "--space 64 --candidate FILE --json > r.json`, then `socratic hook evaluate "
            "--import r.json` records it (or ./evaluate --scenarios space:64)")


def _below(v: float, goal: float | None) -> str:
    """`v` to 3 decimals, never rounded up onto a goal it misses (0.9996 is 0.999)."""
    text = f"{v:.3f}"
    if goal is not None and v < goal and float(text) >= goal:
        text = f"{math.floor(v * 1000) / 1000:.3f}"
    return text


def _x(v: float | None, goal: float | None = None) -> Text:
    """A ratio; below `goal` (the min against the goal's comparison): marked ▼, in bold."""
    if v is None:
        return Text("-", justify="right")
    if goal is not None and v < goal:
        return Text(f"▼{_below(v, goal)}", style="bold", justify="right")
    return Text(f"{v:.3f}", justify="right")


class CoverageScreen(ModalScreen[None]):
    CSS_PATH = "coverage_screen.tcss"
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("v", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, session_dir: Path) -> None:
        super().__init__()
        self.session_dir = Path(session_dir)

    def compose(self) -> ComposeResult:
        with Vertical(id="coverage-body"):
            yield Static(Text("Coverage of the task's space (worst cells first)", style="bold"))
            yield Static("computing…", id="coverage-head")
            yield DataTable(id="coverage-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="coverage-worst")
            yield Static(Text("socratic report SESSION --html FILE draws it. Escape closes this.",
                              style="dim"))

    def on_mount(self) -> None:
        self.compute()

    @work(thread=True, exclusive=True, group="coverage")
    def compute(self) -> None:
        from socratic.errors import InputError
        from socratic.report import session_report

        goal: tuple[float, str] | None = None
        try:
            r = session_report(self.session_dir)
        except InputError as exc:
            doc, why = None, f"no report yet: {exc}"
        else:
            doc, why = r.coverage, NONE_YET
            want, against = (r.goal or {}).get("min_speedup"), (r.goal or {}).get("against")
            if isinstance(want, (int, float)) and not isinstance(want, bool):
                goal = (float(want), str(against or "baseline"))
        self.app.call_from_thread(self._show, doc, why, goal)

    def _show(self, doc: dict[str, Any] | None, why: str,
              goal: tuple[float, str] | None = None) -> None:
        from socratic.contracts import ContractError, Coverage
        from socratic.coverage import cells_worst_first

        if not self.is_attached:
            return
        head = self.query_one("#coverage-head", Static)
        try:
            cov = Coverage.from_dict(doc) if doc else None
        except ContractError as exc:
            cov, why = None, f"the coverage could not be read: {exc}"
        if cov is None or doc is None:
            head.update(Text(why))
            return
        head.update(Text(f"evaluation #{doc.get('evaluation')} ({doc.get('set')}): {cov.n} scenarios "
                         f"drawn (seed {cov.seed}), {cov.n_correct}/{cov.n} correct; ratio = its "
                         f"time / the candidate's, sorted by the min vs {cov.goal}"))
        # the goal's speed rule, where the coverage is on its terms: draws below it marked
        want = goal[0] if goal is not None and goal[1] == cov.goal else None
        table = self.query_one("#coverage-table", DataTable)
        table.add_columns("field", "value", "draws", "ok",
                          *[f"{what} {a}" for a in cov.against for what in ("geo", "min")], "worst draw")
        for c in cells_worst_first(cov):
            flag = "" if c.n_correct == c.n else " ✗"
            table.add_row(c.field, c.label + flag, Text(str(c.n), justify="right"),
                          Text(str(c.n_correct), justify="right"),
                          *[_x(d.get(a), want if a == cov.goal and d is c.min else None)
                            for a in cov.against for d in (c.geomean, c.min)],
                          c.worst or "-")
        ratio = {d.id: (d.correct, d.ratios.get(cov.goal)) for d in cov.draws}
        out = Text(f"worst draws (vs {cov.goal}; `socratic eval TASK --scenarios ID` runs "
                   "one again):")
        if want is not None:
            slow = sum(1 for d in cov.draws if d.correct and (v := d.ratios.get(cov.goal))
                       is not None and v < want)
            out.append(f"  {slow} of {cov.n} draws below the goal (>= {want:g}x vs {cov.goal})",
                       style="bold" if slow else "")
        for sid in cov.worst:
            ok, r = ratio.get(sid, (True, None))
            mark = "✗ FAIL" if not ok else "▼ slow" if want is not None and r is not None \
                and r < want else ""
            value = "INCORRECT" if not ok else f"{_below(r, want)}x" if r is not None else "-"
            out.append(f"\n  {mark:<6} {value:>9}  {sid}",
                       style="bold" if mark else "")
        self.query_one("#coverage-worst", Static).update(out)
        table.focus()

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
