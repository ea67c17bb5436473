"""The coverage of the session's last space evaluation (`socratic eval --space N`, recorded
or imported): per hidden field and cell, the geomean and min against the baseline and each
comparison, the worst cells first; read through the report (socratic.report) off the UI
thread."""

from __future__ import annotations

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


def _x(v: float | None) -> Text:
    return Text(f"{v:.3f}" if v is not None else "-", justify="right")


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

        try:
            doc = session_report(self.session_dir).coverage
        except InputError as exc:
            doc, why = None, f"no report yet: {exc}"
        else:
            why = NONE_YET
        self.app.call_from_thread(self._show, doc, why)

    def _show(self, doc: dict[str, Any] | None, why: str) -> None:
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
        table = self.query_one("#coverage-table", DataTable)
        table.add_columns("field", "value", "draws", "ok",
                          *[f"{what} {a}" for a in cov.against for what in ("geo", "min")], "worst draw")
        for c in cells_worst_first(cov):
            flag = "" if c.n_correct == c.n else " ✗"
            table.add_row(c.field, c.label + flag, Text(str(c.n), justify="right"),
                          Text(str(c.n_correct), justify="right"),
                          *[_x(d.get(a)) for a in cov.against for d in (c.geomean, c.min)],
                          c.worst or "-")
        ratio = {d.id: (d.correct, d.ratios.get(cov.goal)) for d in cov.draws}
        worst = [f"  {('INCORRECT' if not ok else f'{r:.3f}x' if r is not None else '-'):>9}  {sid}"
                 for sid in cov.worst for ok, r in [ratio.get(sid, (True, None))]]
        self.query_one("#coverage-worst", Static).update(
            Text("\n".join([f"worst draws (vs {cov.goal}; `socratic eval TASK --scenarios ID` runs "
                            "one again):", *worst])))
        table.focus()

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
