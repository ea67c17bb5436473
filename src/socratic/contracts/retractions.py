"""What a log's `eval.retract` events take back: the one rule every reader applies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from socratic.contracts.events import EvalRetract
from socratic.contracts.vocab import RETRACT_PARTS, RetractPart, Terms


def retracted_on(part: RetractPart | None, against: Terms) -> bool:
    """Whether an evaluation retracted with `part` (None: not retracted) has lost its figures
    against `against` (`baseline` or a comparison's name)."""
    return part == "all" or (part == "comparisons" and against != "baseline")


@dataclass
class Retractions:
    """What a log's `eval.retract` events took back, by evaluation number: the one rule every
    reader (harness, report, TUI, bank trace) applies."""

    by_n: dict[int, EvalRetract] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Iterable[Any]) -> Retractions:
        out = cls()
        for e in events:
            if isinstance(e, EvalRetract):
                out.add(e)
        return out

    def add(self, e: EvalRetract) -> None:
        if e.part not in RETRACT_PARTS:
            return  # a part this version does not know: ignored, like an unknown event type
        for n in e.evals:
            if self.part(n) != "all":   # `all` outranks `comparisons`, whichever came first
                self.by_n[n] = e

    def part(self, n: int) -> RetractPart | None:
        e = self.by_n.get(n)
        return e.part if e is not None else None

    def why(self, n: int) -> str | None:
        e = self.by_n.get(n)
        return e.why if e is not None else None

    def hides(self, n: int, against: Terms) -> bool:
        """Whether evaluation n's figures against `against` are retracted."""
        return retracted_on(self.part(n), against)

    def copy(self) -> Retractions:
        return Retractions(dict(self.by_n))


def number_runs(ns: Iterable[int]) -> str:
    """Evaluation numbers as messages write them: [1, 2, 3, 5] -> '1-3, 5'."""
    runs: list[list[int]] = []
    for n in sorted(set(ns)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
