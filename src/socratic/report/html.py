"""The report as one self-contained HTML file: tables, and plots drawn by matplotlib.

matplotlib (the optional extra `report`) renders each plot to SVG without a display; each
SVG is inlined as a base64 `data:` image, so the file opens with no network and no script,
and the plots stay sharp at any zoom. (plotly would need its ~3.5 MB script inlined to be
interactive offline; these plots need no interaction.)
"""

from __future__ import annotations

import base64
import html
import io
import re
from typing import Any

from socratic.contracts import retracted_on
from socratic.errors import InputError
from socratic.report import coverage as space
from socratic.report.compare import DIMENSIONS
from socratic.report.figures import SessionReport
from socratic.report.model import Report
from socratic.report.text import (
    DIMENSION_WORDS,
    EVAL_HEAD,
    GROUP_HEAD,
    QUESTION_HEAD,
    by_head,
    by_rows,
    eval_rows,
    figure_rows,
    group_rows,
    one_line,
    pct,
    question_rows,
    retraction_lines,
)

GEO, MIN, BAD, AUTO, HUMAN, GOAL = "#1f6fb4", "#e07b00", "#c0392b", "#6c3fb3", "#2e8b57", "#555555"
NUMERIC = re.compile(r"^[+-]?\$?[\d,.]+(x|%| s| min \d+ s| h \d+ min)?$")
MAX_LABELS = 20  # question labels on the plot; more would cover each other

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1, h2, h3 { font-weight: 600; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
img.plot { display: block; max-width: 100%; margin: .5em 0 1.5em; }
blockquote { margin: .3em 0 1em 1em; color: #444; border-left: 3px solid #ccc; padding-left: .7em; }
.note { color: #666; } .wide { overflow-x: auto; }
"""


def _pyplot_free():
    """matplotlib's object API (no pyplot, no display, safe off the main thread)."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("--html needs matplotlib: pip install '.[report]' from the socratic checkout (the PyPI name socratic is another project)") from None
    matplotlib.rcParams["svg.hashsalt"] = "socratic-report"  # same input, same file
    return Figure


def _svg(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img class="plot" alt="plot" src="data:image/svg+xml;base64,{data}">'


def progress_plot(Figure: Any, r: SessionReport) -> str:
    """Geomean and min per goal-set evaluation, the best so far, the goal, and the
    questions as vertical lines where they were asked."""
    pts = [p for p in r.series if p.goal_set]
    fig = Figure(figsize=(10, 4.2))
    ax = fig.subplots()
    against = r.goal.get("against") or "baseline"
    gone = [p for p in pts if retracted_on(p.retracted, against)]   # no figures on its terms
    good = [p for p in pts if p.correct and not retracted_on(p.retracted, against)]
    ax.plot([p.n for p in good], [p.geomean for p in good], "o-", color=GEO, ms=4,
            label="geomean speedup")
    ax.plot([p.n for p in good], [p.min for p in good], "s-", color=MIN, ms=4,
            label="min speedup")
    ax.step([p.n for p in pts], [p.best_geomean for p in pts], where="post", color=GEO,
            alpha=.35, lw=1, ls="--", label="best geomean so far")
    ax.step([p.n for p in pts], [p.best_min for p in pts], where="post", color=MIN,
            alpha=.35, lw=1, ls="--", label="best min so far")
    values = [v for p in good for v in (p.geomean, p.min) if v is not None]
    want = r.goal.get("min_speedup")
    if isinstance(want, (int, float)):
        ax.axhline(want, color=GOAL, lw=1, ls=":", label=f"goal {want}x")
        values.append(float(want))
    low = min(values) * 0.95 if values else 0.0
    bad = [p for p in pts if not p.correct]
    if bad:
        ax.plot([p.n for p in bad], [low] * len(bad), "x", color=BAD, ms=8, mew=2,
                label="incorrect evaluation")
    if gone:
        ax.plot([p.n for p in gone], [low] * len(gone), "o", color=GOAL, mfc="none", ms=6,
                label="retracted evaluation")
    n_of = {i: p.n for i, p in enumerate(r.series)}
    label = len(r.question_gains) <= MAX_LABELS
    at_x: dict[float, int] = {}
    seen: set[str] = set()
    for g in r.question_gains:
        x0 = n_of.get(g.evaluations_before - 1, 0) + 0.5
        k = at_x[x0] = at_x.get(x0, -1) + 1   # questions asked together: side by side
        at = x0 + 0.12 * k
        colour = AUTO if g.source == "auto" else HUMAN
        name = f"{g.source} question"
        ax.axvline(at, color=colour, lw=1, alpha=.6, label=None if name in seen else name)
        seen.add(name)
        if label:
            ax.text(at, 0.99, (g.bank_id or "free text") + " ", rotation=90, fontsize=7,
                    color=colour, va="top", ha="right", transform=ax.get_xaxis_transform())
    ax.set_xlabel("evaluation")
    ax.set_ylabel(f"speedup vs {against} (x)")   # the series is on the goal's terms
    ax.set_title(f"{r.session}: {r.task or '?'} on {r.goal_set or 'the goal set'}", fontsize=11)
    ax.grid(alpha=.3)
    if pts or r.question_gains:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(fig)


def scenario_plot(Figure: Any, r: SessionReport) -> str:
    """The best evaluation's speedup per scenario on the goal's terms (against the baseline,
    or FA3...): a dot per scenario on a line from 1x, the goal marked; an incorrect scenario
    is a red cross at 1x."""
    rows = r.best_scenarios
    against = r.goal.get("against") or "baseline"
    fig = Figure(figsize=(8, 1.2 + 0.24 * len(rows)))
    ax = fig.subplots()
    ys = list(range(len(rows)))[::-1]
    for y, s in zip(ys, rows, strict=False):
        v = s["speedup"] if against == "baseline" else s.get("vs", {}).get(against)
        if not s["correct"]:
            ax.plot([1.0], [y], "x", color=BAD, ms=7, mew=2)
            continue
        if v is None:   # correct, but not timed on these terms
            ax.text(1.0, y, "  not timed", va="center", fontsize=7, color="#999")
            continue
        ax.hlines(y, 1.0, v, color=GEO, lw=2, alpha=.5)
        ax.plot([v], [y], "o", color=GEO, ms=5)
        ax.text(v, y, f"  {v:.3f}", va="center", fontsize=7)
    ax.set_yticks(ys, [str(s["scenario"]) for s in rows], fontsize=8)
    ax.axvline(1.0, color="#999", lw=.8)
    want = r.goal.get("min_speedup")
    if isinstance(want, (int, float)):
        ax.axvline(want, color=GOAL, lw=1, ls=":", label=f"goal {want}x")
        ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(1.01, 0.0))
    ax.margins(x=0.12)
    ax.set_xlabel(f"speedup vs {against} (x)")
    ax.set_title(f"best evaluation #{r.best_evaluation} (highest min, then geomean): "
                 f"speedup per scenario", fontsize=11)
    ax.grid(axis="x", alpha=.3)
    return _svg(fig)


def coverage_plot(Figure: Any, r: SessionReport) -> str:
    """The kernel over its task's space (the last space evaluation): the goal's ratio by the
    grid's two fields (geomean per cell, draws in it), and each draw's ratio against each
    length-like field (log-scale fields), the goal marked; an incorrect draw is a red cross."""
    from socratic.coverage import cross

    cov = space.coverage_of(r.coverage)
    if cov is None:
        return ""
    axes = [a for a in cov.axes if any(a in d.values for d in cov.draws)]
    grid = cross(cov)
    panels = (1 if grid else 0) + len(axes)
    if not panels:
        return ""
    fig = Figure(figsize=(4.6 * panels, 4.0))
    subplots = fig.subplots(1, panels, squeeze=False)[0]
    want = r.goal.get("min_speedup") if r.goal.get("against") == cov.goal else None
    mark = float(want) if isinstance(want, (int, float)) else 1.0
    at = 0
    if grid and cov.grid:
        ax = subplots[at]
        at += 1
        order = {f: [c.label for c in cov.cells if c.field == f] for f in cov.grid}
        ys, xs = order[cov.grid[0]], order[cov.grid[1]]
        values = [[grid.get((y, x), (0, None))[1] for x in xs] for y in ys]
        shown = [[v if v is not None else float("nan") for v in row] for row in values]
        image = ax.imshow(shown, cmap="RdYlGn", vmin=mark * 0.5, vmax=mark * 1.5, aspect="auto")
        for i, y in enumerate(ys):
            for j, x in enumerate(xs):
                n, v = grid.get((y, x), (0, None))
                ax.text(j, i, (f"{v:.2f}" if v is not None else "-") + f"\n{n} draws",
                        ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set_xlabel(cov.grid[1])
        ax.set_ylabel(cov.grid[0])
        ax.set_title(f"geomean vs {cov.goal} by {cov.grid[0]} x {cov.grid[1]}", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.8)
    for name in axes:
        ax = subplots[at]
        at += 1
        good = [d for d in cov.draws if d.correct and cov.goal in d.ratios and name in d.values]
        bad = [d for d in cov.draws if not d.correct and name in d.values]
        ax.plot([d.values[name] for d in good], [d.ratios[cov.goal] for d in good], "o",
                color=GEO, ms=4, alpha=.8, label="a draw")
        low = min([d.ratios[cov.goal] for d in good] + [mark]) * 0.9
        if bad:
            ax.plot([d.values[name] for d in bad], [low] * len(bad), "x", color=BAD, ms=7, mew=2,
                    label="incorrect")
        ax.axhline(mark, color=GOAL, lw=1, ls=":", label=f"goal {mark:g}x" if want else "1x")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(name)
        ax.set_ylabel(f"{cov.goal} time / candidate time (x)")
        ax.set_title(f"vs {cov.goal} against {name}", fontsize=10)
        ax.grid(alpha=.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{r.session}: {cov.n} scenarios drawn from {r.task or 'the task'}'s space "
                 f"(seed {cov.seed})", fontsize=11)
    return _svg(fig)


def groups_plot(Figure: Any, report: Report) -> str:
    """Best geomean of each session, one row per group, the median marked."""
    gs = report.groups
    by_name = {s.session: s for s in report.sessions}
    fig = Figure(figsize=(8, 1.0 + 0.45 * len(gs)))
    ax = fig.subplots()
    for y, g in enumerate(reversed(gs)):
        vals = [by_name[s].best_geomean for s in g["sessions"] if s in by_name
                and by_name[s].best_geomean is not None]
        ax.plot(vals, [y] * len(vals), "o", color=GEO, alpha=.7)
        med = g["medians"]["best_geomean"]
        if med is not None:
            ax.plot([med], [y], "|", color="#000", ms=18, mew=2)
    ax.set_yticks(range(len(gs)), [f"{g['task']} / {g['questions_mode']} / {g['agent']}"
                                   for g in reversed(gs)], fontsize=8)
    ax.set_xlabel("best geomean speedup (dots: sessions, bar: median)")
    ax.grid(axis="x", alpha=.3)
    return _svg(fig)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        s = str(v)
        cls = ' class="num"' if NUMERIC.match(s) else ""
        return f"<td{cls}>{html.escape(s)}</td>"
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "</table>"


def render(report: Report) -> str:
    """The whole HTML document (InputError when matplotlib is missing)."""
    Figure = _pyplot_free()
    e = html.escape
    body = ["<h1>socratic report</h1>"]
    if len(report.sessions) > 1:
        body += ["<h2>Across sessions (medians)</h2>",
                 '<div class="wide">' + _table(GROUP_HEAD, group_rows(report)) + "</div>",
                 groups_plot(Figure, report)]
        for dim in DIMENSIONS:
            body += [f"<h2>By {DIMENSION_WORDS[dim]}</h2>",
                     '<div class="wide">' + _table(by_head(dim), by_rows(report, dim)) + "</div>"]
    for r in report.sessions:
        body += [f"<h2>{e(r.session)}</h2>", _table(["figure", "value"], figure_rows(r)),
                 progress_plot(Figure, r)]
        if r.best_scenarios:
            body.append(scenario_plot(Figure, r))
        body.append(f"<h3>Questions (best after the next {r.window} evaluations)</h3>")
        body.append(_table(QUESTION_HEAD, question_rows(r)) if r.question_gains
                    else "<p>none</p>")
        body.append("<h3>Correctness failures</h3>")
        if not r.correctness_failures:
            body.append("<p>none</p>")
        for f in r.correctness_failures:
            said = f.explanation or "(no words before the next evaluation)"
            body += [f"<p>evaluation #{f.n} ({e(f.set or 'default')}): {e(f.what)}</p>",
                     f"<blockquote>{e(one_line(said, 2000))}</blockquote>"]
        c = r.churn
        body.append(f"<p>churn {pct(c.share)}: {c.readded} of {c.added} lines added had been "
                    f"deleted earlier ({c.deleted} deleted, {c.candidates} candidates"
                    + (f", {c.missing} evaluations without a kept candidate" if c.missing
                       else "") + ").</p>")
        cov = space.coverage_of(r.coverage)
        if cov is not None and r.coverage is not None:
            body += [f'<h3 id="coverage">{e(space.heading(r.coverage))}</h3>',
                     f"<p>{cov.n} scenarios drawn from the task's space (seed {cov.seed}), "
                     f"{cov.n_correct}/{cov.n} correct; ratio: its time over the candidate's, "
                     "geomean and min over a cell's correct draws.</p>",
                     coverage_plot(Figure, r),
                     '<div class="wide">' + _table(space.head(cov), space.rows(cov)) + "</div>",
                     "<p>Worst draws:</p><ul>" + "".join(f"<li>{e(line)}</li>"
                                                       for line in space.worst_lines(cov)) + "</ul>"]
        body.append("<h3>Evaluations</h3>" + _table(EVAL_HEAD, eval_rows(r)))
        body += [f"<p>{e(line)}</p>" for line in retraction_lines(r)]
    if report.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f'<li class="note">{e(n)}</li>'
                                                   for n in report.notes) + "</ul>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>socratic report</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
