"""Which bank entries asked in given sessions were followed by a measured gain: the
candidates for provenance `trace` (`socratic bank trace`).

An asking is judged on the goal's metric (the session's `goal.against`: the geomean speedup
against the baseline, or `geomean_vs[<comparison>]`; `against` overrides): the best correct
goal-set evaluation before the question against the best among the goal-set evaluations
after it, up to the next round of questions (questions with no evaluation between them are
one round: they share what followed) and at most `window` of them. Failing evaluations and
other scenario sets never count (the report's rule: `figures.followed`, `figures.best_on`).
Both are read on one GPU where their saved results say which (`figures.compared`): two bests
on different cards give way to the best of each side on a card the evaluations after ran on,
or to no gain; a ratio moves from card to card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import EvalResult
from socratic.errors import InputError
from socratic.report.figures import (
    DEFAULT_WINDOW,
    Cards,
    EvalPoint,
    SessionReport,
    compared,
    followed,
    geomean_against,
)
from socratic.report.model import Report, build_report
from socratic.report.source import read_result
from socratic.sessionfiles import open_session

# Above the H200's noise band of the baseline against itself (0.994-1.001x geomean on
# attention, README), so that a trace is not a re-measurement of the same kernel.
DEFAULT_MIN_GAIN = 1.02


@dataclass
class Asking:
    """One bank question asked in a session, and what followed it."""

    id: str
    in_bank: bool
    session: str
    path: str
    seq: int
    trigger: str | None
    against: str
    before: EvalPoint | None
    after: EvalPoint | None
    gain: float | None                  # after / before on `against`
    candidate: bool                     # gain >= the minimum

    @property
    def trace(self) -> str:
        return f"{self.session}#{self.seq}"

    @property
    def evidence(self) -> list[str]:
        """The two evaluations compared, as files of the session."""
        return [f"{self.session}/{p.result}" for p in (self.before, self.after)
                if p is not None and p.result]

    def to_dict(self) -> dict[str, Any]:
        def point(p: EvalPoint | None) -> dict[str, Any] | None:
            if p is None:
                return None
            return {"n": p.n, "seq": p.seq, "result": p.result,
                    "geomean": geomean_against(p, self.against)}
        return {"id": self.id, "in_bank": self.in_bank, "session": self.session,
                "seq": self.seq, "trace": self.trace, "trigger": self.trigger,
                "against": self.against, "before": point(self.before),
                "after": point(self.after), "gain": self.gain, "candidate": self.candidate,
                "evidence": self.evidence}


@dataclass
class Traces:
    sessions: list[str]
    min_gain: float
    window: int
    against: str | None                 # the override; None: each session's goal
    askings: list[Asking]
    free_text: int
    notes: list[str] = field(default_factory=list)

    def best(self) -> list[Asking]:
        """Per bank entry with a candidate asking, the one with the largest gain (the first
        of equals): the trace to record."""
        out: dict[str, Asking] = {}
        for a in self.askings:
            if a.candidate and a.in_bank and a.gain is not None and (
                    a.id not in out or a.gain > (out[a.id].gain or 0.0)):
                out[a.id] = a
        return list(out.values())

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "min_gain": self.min_gain, "window": self.window,
                "against": self.against, "askings": [a.to_dict() for a in self.askings],
                "free_text": self.free_text, "notes": self.notes}


def _known_against(reports: list[SessionReport]) -> set[str]:
    return {"baseline"} | {k for r in reports for p in r.series for k in p.geomean_vs}


def _session_askings(r: SessionReport, bank: Any, against: str, window: int,
                     min_gain: float) -> list[Asking]:
    def value(p: EvalPoint) -> float | None:
        return geomean_against(p, against)

    def result(rel: str) -> EvalResult | None:
        try:
            return read_result(open_session(Path(r.path)), rel)
        except InputError:   # the session went away meanwhile: its cards unknown
            return None

    out = []
    card = Cards(result)
    rounds = sorted({g.evaluations_before for g in r.question_gains})
    for g in r.question_gains:
        if g.bank_id is None:
            continue
        until = next((n for n in rounds if n > g.evaluations_before), None)
        before, after = followed(r.series, g.evaluations_before, window, until)
        b, a = compared(before, after, value, card)
        vb = value(b) if b else None
        va = value(a) if a else None
        gain = va / vb if va is not None and vb else None
        out.append(Asking(g.bank_id, bank.get(g.bank_id) is not None, r.session, r.path,
                          g.seq, g.trigger, against, b, a, gain,
                          gain is not None and gain >= min_gain))
    return out


def bank_traces(paths: list[Path], bank: Any, *, against: str | None = None,
                min_gain: float = DEFAULT_MIN_GAIN,
                window: int = DEFAULT_WINDOW) -> Traces:
    """Every bank question asked in the sessions (or fleet folders) and what followed it
    (InputError on bad input, an `against` no evaluation carries included)."""
    return traces_of(build_report(paths, window=window, bank=bank), bank, against=against,
                     min_gain=min_gain)


def traces_of(report: Report, bank: Any, *, against: str | None = None,
              min_gain: float = DEFAULT_MIN_GAIN) -> Traces:
    """`bank_traces` over a report already built (its window)."""
    window = report.window
    known = _known_against(report.sessions)
    if against is not None and against not in known:
        raise InputError(f"--against {against}: no evaluation in these sessions has a "
                         f"geomean against it (they have: {', '.join(sorted(known))})")
    notes = list(report.notes)
    askings: list[Asking] = []
    free_text = 0
    for r in report.sessions:
        metric = against or str(r.goal.get("against") or "baseline")
        if metric not in _known_against([r]):
            notes.append(f"{r.session}: no evaluation has a geomean against {metric} "
                         "(its goal); use --against")
        free_text += sum(1 for g in r.question_gains if g.bank_id is None)
        found = _session_askings(r, bank, metric, window, min_gain)
        for a in found:
            if not a.in_bank:
                notes.append(f"{a.trace}: '{a.id}' is not in the loaded bank (--bank-dir?)")
            for p in (a.before, a.after) if a.candidate else ():
                if p is not None and not (p.result and open_session(Path(r.path)).is_file(p.result)):
                    notes.append(f"{a.trace}: {r.path}/{p.result} (evaluation {p.n}) is missing")
        askings += found
    return Traces([r.session for r in report.sessions], min_gain, window, against,
                  askings, free_text, notes)
