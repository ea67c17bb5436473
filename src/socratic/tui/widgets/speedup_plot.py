"""A two-line plot of geomean and min speedup per evaluation of the goal set, oldest on
the left (block characters). Each row ends with the last value and a legend of the scale:
`█=1.25×` (the top of the scale, on the geo row) and `▁=0.99×` (its bottom, min row);
`✗` marks an incorrect evaluation; a retracted one (all its figures) is a gap."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from socratic.tui import format as fmt
from socratic.tui.state import EvalPoint

BARS = "▁▂▃▄▅▆▇█"


def spark(values: list[float | None], lo: float, hi: float,
          fails: list[bool] | None = None) -> str:
    out = []
    span = hi - lo
    for i, v in enumerate(values):
        if fails and fails[i]:
            out.append("✗")
        elif v is None:
            out.append(" ")
        else:
            k = 0 if span <= 0 else int(round((v - lo) / span * (len(BARS) - 1)))
            out.append(BARS[max(0, min(len(BARS) - 1, k))])
    return "".join(out)


class SpeedupPlot(Static):
    DEFAULT_CSS = "SpeedupPlot { height: 2; width: 1fr; text-wrap: nowrap; text-overflow: clip; }"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._evals: list[EvalPoint] = []
        self._goal: float | None = None
        self._against = "baseline"
        self._key: tuple | None = None

    def show(self, evals: list[EvalPoint], goal: float | None, against: str = "baseline") -> None:
        """On the goal's terms: against the baseline, or the comparison the goal names."""
        self._evals, self._goal, self._against = evals, goal, against or "baseline"
        self._draw()

    def on_resize(self) -> None:
        self._key = None
        self._draw()

    def _draw(self) -> None:
        width = max(10, self.size.width or 60)
        key = (len(self._evals), self._evals[-1] if self._evals else None, self._goal, width,
               self._against,
               tuple(p.n for p in self._evals if p.retracted))   # a retraction redraws
        if key == self._key:
            return
        self._key = key
        label_w = 5
        tail_w = 18  # " 1.25×  █=1.25×", room for 12.34×
        n = max(1, width - label_w - tail_w)
        pts = self._evals[-n:]
        vs = self._against
        geo = [p.on(vs)[0] if p.shows(vs) else None for p in pts]
        mins = [p.on(vs)[1] if p.shows(vs) else None for p in pts]
        fails = [p.all_correct is False for p in pts]
        vals = [v for v in geo + mins if v is not None]
        if self._goal is not None:
            vals.append(self._goal)
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        t = Text(no_wrap=True, overflow="crop")
        if not self._evals:
            t.append("geo  ", style="dim")
            t.append("(no evaluation yet)", style="dim")
            t.append("\nmin  ", style="dim")
            self.update(t, layout=False)
            return
        last = self._evals[-1]
        t.append("geo  ", style="dim")
        t.append(spark(geo, lo, hi, fails), style="bold")
        t.append(f" {fmt.speedup(last.on(vs)[0] if last else None)}")
        t.append(f"  █={hi:.2f}×" if vals else "", style="dim")
        t.append("\n")
        t.append("min  ", style="dim")
        t.append(spark(mins, lo, hi, fails))
        t.append(f" {fmt.speedup(last.on(vs)[1] if last else None)}")
        t.append(f"  ▁={lo:.2f}×" if vals else "", style="dim")
        self.update(t, layout=False)
