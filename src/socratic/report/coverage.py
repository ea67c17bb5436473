"""The last space evaluation of a session (`socratic eval --space N`, recorded or imported
as any evaluation): its coverage table as the report's JSON, text, Markdown and HTML rows.

The table itself comes from the saved result (`coverage` of evals/NNNN.json, built by the
evaluator through socratic.coverage); an evaluation retracted on any terms is passed over,
since its figures against the baseline or a comparison would be wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socratic.contracts import ContractError, Coverage
from socratic.coverage import cells_worst_first, lines
from socratic.taskfile import parse_space

if TYPE_CHECKING:
    from socratic.report.figures import EvalPoint
    from socratic.report.source import SessionFiles


def is_space(set_name: str | None) -> bool:
    return parse_space(set_name) is not None


def last_coverage(files: SessionFiles, series: list[EvalPoint]) -> dict[str, Any] | None:
    """The coverage of the last space evaluation that has one, with its evaluation's
    number, set and saved result; None when the session holds none."""
    for p in reversed(series):
        if not is_space(p.set) or p.retracted:
            continue
        result = files.eval_result(p.result)
        if result is not None and result.coverage is not None:
            return {"evaluation": p.n, "set": result.set, "result": p.result,
                    **result.coverage.to_dict()}
    return None


def coverage_of(doc: dict[str, Any] | None) -> Coverage | None:
    """The report's `coverage` back as the record (its evaluation, set, result kept as extras)."""
    if not doc:
        return None
    try:
        return Coverage.from_dict(doc)
    except ContractError:
        return None


def heading(doc: dict[str, Any]) -> str:
    return f"Coverage of the task's space (evaluation #{doc.get('evaluation')}, {doc.get('set')})"


def text_lines(doc: dict[str, Any] | None) -> list[str]:
    cov = coverage_of(doc)
    if cov is None or doc is None:
        return []
    return [heading(doc), *(f"  {line}" for line in lines(cov))]


def summary_line(doc: dict[str, Any] | None) -> str | None:
    """One line for the summary: where the kernel is worst over the space."""
    cov = coverage_of(doc)
    if cov is None or doc is None or not cov.cells:
        return None
    worst = cells_worst_first(cov)[0]
    low = worst.min.get(cov.goal)
    return (f"space evaluation #{doc.get('evaluation')} ({doc.get('set')}): {cov.n_correct}/{cov.n} "
            f"correct; worst cell {worst.field} {worst.label}: min "
            + (f"{low:.3f}x" if low is not None else "-") + f" vs {cov.goal}")


def head(cov: Coverage) -> list[str]:
    return ["field", "value", "draws", "correct",
            *[f"vs {a} {what}" for a in cov.against for what in ("geomean", "min")], "worst draw"]


def rows(cov: Coverage) -> list[list[Any]]:
    def x(v: float | None) -> str:
        return f"{v:.3f}x" if v is not None else "-"
    return [[c.field, c.label, c.n, c.n_correct,
             *[x(d.get(a)) for a in cov.against for d in (c.geomean, c.min)], c.worst or "-"]
            for c in cov.cells]


def worst_lines(cov: Coverage) -> list[str]:
    ratio = {d.id: d.ratios.get(cov.goal) for d in cov.draws}
    ok = {d.id: d.correct for d in cov.draws}
    return [f"{sid}: " + ((f"{ratio[sid]:.3f}x" if ratio.get(sid) is not None else "-")
                          if ok.get(sid) else "INCORRECT") + f" vs {cov.goal}" for sid in cov.worst]
