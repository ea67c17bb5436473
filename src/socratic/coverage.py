"""A kernel over its task's whole space: the coverage of a space evaluation (`socratic eval
TASK --space N`), generic over the task's `[hidden.fields]`.

Each hidden field splits the draws into cells: one per value for choices and for narrow
whole-number ranges (at most `NARROW` values), octaves [2^k, 2^(k+1)) for log-scale ranges
(and for other wide ones, expressions included, whose values are all >= 1), else `BINS`
equal bins. Per cell: how many draws, how many correct, and over its correct draws the
geomean and min of the ratio against the baseline and each comparison timed (another's time
over the candidate's, as `speedup` and `comparisons.NAME.speedup` are). The evaluator
builds it (socratic.eval/1 `coverage`); the report, its HTML picture and the TUI read it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from socratic.contracts import Coverage, CoverageCell, CoverageDraw, ScenarioResult
from socratic.expr import k
from socratic.taskfile import HiddenField, Task

NARROW = 16      # a whole-number range of at most this many values: a cell per value
BINS = 6         # a wide linear range without a log scale: this many equal bins
WORST = 8        # draws listed as the worst


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def ratios(row: ScenarioResult) -> dict[str, float]:
    """A correct row's ratios: against the baseline and each comparison timed on it."""
    if not row.correct:
        return {}
    out: dict[str, float] = {}
    if row.speedup:
        out["baseline"] = float(row.speedup)
    for name, comp in sorted((row.comparisons or {}).items()):
        if comp.speedup:
            out[name] = float(comp.speedup)
    return out


class Binner:
    """The cells of one field: `label(value)` and the order labels sort in."""

    def __init__(self, f: HiddenField, values: list[Any]) -> None:
        self.name = f.name
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        self.numeric = len(nums) == len(values)
        wide = f.choices == () and (f.expr is not None or f.high - f.low + 1 > NARROW)
        if f.expr is not None and len(set(values)) <= NARROW:
            wide = False
        self.octaves = wide and self.numeric and (f.log or min(nums, default=1) >= 1)
        self.linear = wide and self.numeric and not self.octaves
        self.low, self.high = (f.low, f.high) if f.expr is None else \
            (min(nums, default=0), max(nums, default=0))
        self.choices = [str(c) for c in dict.fromkeys(f.choices)]

    def edges(self, v: float) -> tuple[float, float]:
        if self.octaves:
            lo = 2 ** math.floor(math.log2(max(v, 1)))
            return lo, 2 * lo
        step = max(1.0, (self.high - self.low + 1) / BINS)
        i = min(BINS - 1, int((v - self.low) // step))
        return self.low + i * step, self.low + (i + 1) * step

    def label(self, v: Any) -> str:
        if not (self.octaves or self.linear):
            return str(v)
        lo, hi = self.edges(float(v))
        return f"{k(lo)}-{k(hi)}" if self.octaves else f"{lo:g}-{hi:g}"

    def key(self, v: Any) -> tuple[Any, ...]:
        """Cells in their natural order: declared choices, then numbers, then text."""
        if str(v) in self.choices and not (self.octaves or self.linear):
            return (0, self.choices.index(str(v)), "")
        if self.numeric:
            return (1, self.edges(float(v))[0] if (self.octaves or self.linear) else float(v), "")
        return (2, 0, str(v))


def build(task: Task, rows: list[ScenarioResult], seed: int, goal: str | None = None) -> Coverage:
    """The coverage of `rows` (a space evaluation's, drawn with `seed` from `task`'s space).
    `goal`: the ratio the worst draws and cells are judged by (default: the task's goal's)."""
    space = task.hidden
    fields = list(space.fields) if space else []
    timed = {n for r in rows for n in (r.comparisons or {})}
    named = task.comparisons.get("names") if isinstance(task.comparisons, dict) else None
    listed = [str(n) for n in named or [] if str(n) in timed]   # the task's order: fa3, cudnn, fa2
    against = ["baseline", *listed, *sorted(timed - set(listed))]
    goal = goal or str(task.goal.get("against", "baseline"))
    if goal not in against:
        goal = "baseline"
    binners = [Binner(f, [r.params.get(f.name) for r in rows if f.name in r.params])
               for f in fields]
    draws = []
    for r in rows:
        values = {b.name: r.params[b.name] for b in binners if b.name in r.params}
        draws.append(CoverageDraw(id=r.id, values=values, correct=r.correct, ratios=ratios(r),
                                  bins={b.name: b.label(v) for b in binners
                                        if (v := values.get(b.name)) is not None}))
    cells = []
    for b in binners:
        order: dict[str, tuple[Any, ...]] = {}
        for d in draws:
            if b.name in d.values:
                order.setdefault(d.bins[b.name], b.key(d.values[b.name]))
        for label in sorted(order, key=order.__getitem__):
            cells.append(cell(b.name, label, [d for d in draws if d.bins.get(b.name) == label],
                              against, goal))
    grid = list(space.grid) if space and space.grid else None
    return Coverage(seed=seed, n=len(rows), n_correct=sum(r.correct for r in rows),
                    against=against, goal=goal, fields=[f.name for f in fields],
                    axes=[f.name for f in fields if f.log], grid=grid, cells=cells,
                    worst=[d.id for d in worst_first(draws, goal)[:WORST]], draws=draws)


def cell(field: str, label: str, draws: list[CoverageDraw], against: list[str],
         goal: str) -> CoverageCell:
    """One cell's figures over `draws`."""
    geo: dict[str, float] = {}
    low: dict[str, float] = {}
    for name in against:
        vals = [d.ratios[name] for d in draws if d.correct and name in d.ratios]
        g = geomean(vals)
        if g is not None:
            geo[name], low[name] = round(g, 4), round(min(vals), 4)
    bad = worst_first(draws, goal)
    return CoverageCell(field=field, label=label, n=len(draws),
                        n_correct=sum(d.correct for d in draws), geomean=geo, min=low,
                        worst=bad[0].id if bad else None)


def worst_first(draws: list[CoverageDraw], goal: str) -> list[CoverageDraw]:
    """Incorrect draws first, then by the goal's ratio, lowest first (none last)."""
    return sorted(draws, key=lambda d: (d.correct, d.ratios.get(goal, math.inf)))


def cells_worst_first(cov: Coverage, against: str | None = None) -> list[CoverageCell]:
    """Every cell, the worst first: a cell with an incorrect draw, then by its min on
    `against` (default: the goal's ratio), lowest first."""
    name = against or cov.goal
    return sorted(cov.cells, key=lambda c: (c.n_correct == c.n, c.min.get(name, math.inf),
                                            c.geomean.get(name, math.inf)))


def cross(cov: Coverage, against: str | None = None) -> dict[tuple[str, str], tuple[int, float | None]]:
    """The picture's grid: (cell of grid[0], cell of grid[1]) -> (draws, geomean of the
    ratio against `against`, default the goal's) over the correct draws there."""
    name = against or cov.goal
    if not cov.grid or len(cov.grid) != 2:
        return {}
    a, b = cov.grid
    groups: dict[tuple[str, str], list[CoverageDraw]] = {}
    for d in cov.draws:
        if a in d.bins and b in d.bins:
            groups.setdefault((d.bins[a], d.bins[b]), []).append(d)
    return {key: (len(ds), geomean(d.ratios[name] for d in ds if d.correct and name in d.ratios))
            for key, ds in groups.items()}


def _f(v: float | None) -> str:
    return f"{v:.3f}" if v is not None else "-"


def lines(cov: Coverage, width: int = 12) -> list[str]:
    """The coverage table as text: per field and cell, geomean and min against each."""
    out = [f"coverage: {cov.n} scenarios drawn from the task's space (seed {cov.seed}), "
           f"{cov.n_correct}/{cov.n} correct; ratio = its time / the candidate's "
           f"(geomean / min over a cell's correct draws)"]
    head = f"{'field':<{width}} {'value':<11} {'n':>4} {'ok':>4}"
    head += "".join(f"  {('vs ' + a)[:17]:>17}" for a in cov.against)
    out += [head, "-" * len(head)]
    last = None
    for c in cov.cells:
        name = c.field if c.field != last else ""
        last = c.field
        line = f"{name[:width]:<{width}} {c.label[:11]:<11} {c.n:>4} {c.n_correct:>4}"
        for a in cov.against:
            line += f"  {_f(c.geomean.get(a)) + ' / ' + _f(c.min.get(a)):>17}"
        out.append(line)
    draws = {d.id: d for d in cov.draws}
    if cov.worst:
        out.append(f"worst draws (vs {cov.goal}; `socratic eval TASK --scenarios ID` runs one again):")
        for sid in cov.worst:
            d = draws.get(sid)
            if d is not None:
                state = _f(d.ratios.get(cov.goal)) + "x" if d.correct else "INCORRECT"
                out.append(f"  {state:>9}  {sid}")
    return out
