"""The five moments where agents go wrong, one small detector each, and `Triggers`, which
turns a firing into bank suggestions, a `trigger` event and (auto-questions on) a question.

Each detector sees the campaign's evaluations (`on_eval`), the agent's text (`on_text`) or
its stop attempts (`on_stop`), and returns a `Fired(kind, reason)` or None. Thresholds come
from `TriggerConfig`. Detectors hold only what they need, so `--resume` rebuilds them by
replaying the evaluation history with `replay=True` (nothing fires).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from socratic.contracts import Problem, Question, Trigger
from socratic.harness.core.config import TriggerConfig
from socratic.harness.core.history import Evaluation
from socratic.harness.core.inbox import Inbox
from socratic.harness.core.record import Emit


class Suggestion(NamedTuple):
    """A bank entry the bank suggests for a firing (a plain (id, text) pair reads the same)."""

    bank_id: str
    text: str


# (kind, bank ids asked or queued, recent text) -> the bank's suggestions, best first
Suggester = Callable[[str, list[str], str], list[Suggestion]]


@dataclass
class Fired:
    kind: str
    reason: str


def _rel(new: float | None, old: float | None) -> float:
    if new is None or old is None or old <= 0:
        return 0.0
    return new / old - 1.0


class Start:
    """Fires once, before the agent's first turn."""

    def __init__(self) -> None:
        self.done = False

    def fire(self, task_name: str, goal_text: str) -> Fired | None:
        if self.done:
            return None
        self.done = True
        return Fired("start", f"campaign start on {task_name}; goal: {goal_text}")


class Plateau:
    """The best min-speedup and geomean on the goal's terms (against the baseline, or the
    comparison the goal names) have not improved by `plateau_min_gain` (relative) over
    `plateau_window` evaluations of the goal's set. An evaluation without figures against the
    goal's comparison (it did not run on this machine, or they were retracted) is judged
    against the baseline, each set of terms with its own best, so a campaign whose
    comparison cannot run still hears of its plateaus."""

    def __init__(self, cfg: TriggerConfig, against: str = "baseline") -> None:
        self.cfg = cfg
        self.against = against
        self.best: dict[str, tuple[float, float]] = {}   # terms -> (best min, best geomean)
        self.since = 0

    @property
    def best_min(self) -> float | None:
        return self._best()[0]

    @property
    def best_geo(self) -> float | None:
        return self._best()[1]

    def _best(self) -> tuple[float | None, float | None]:
        got = self.best.get(self.against) or self.best.get("baseline")
        return got if got else (None, None)

    def on_eval(self, ev: Evaluation, replay: bool = False) -> Fired | None:
        terms = self.against
        mn, geo = ev.on_terms(terms)
        if geo is None and terms != "baseline":
            terms, (mn, geo) = "baseline", ev.on_terms("baseline")
        if ev.all_correct and geo is not None:   # a retracted evaluation is no best
            mn = geo if mn is None else mn
            if terms not in self.best:
                self.best[terms] = (mn, geo)
                if len(self.best) == 1:
                    self.since = 0
                    return None
            else:
                best_mn, best_geo = self.best[terms]
                g = self.cfg.plateau_min_gain
                if _rel(mn, best_mn) >= g or _rel(geo, best_geo) >= g:
                    self.best[terms] = (max(best_mn, mn), max(best_geo, geo))
                    self.since = 0
                    return None
        if not self.best:
            return None  # nothing correct yet: no plateau of speed to speak of
        self.since += 1
        if self.since >= self.cfg.plateau_window:
            self.since = 0
            shown = self.against if self.against in self.best else "baseline"
            best_mn, best_geo = self.best[shown]
            vs = "" if shown == "baseline" and self.against == "baseline" else f" against {shown}"
            return Fired("plateau", (
                f"{self.cfg.plateau_window} evaluations without a {self.cfg.plateau_min_gain:.0%} "
                f"gain{vs}: best min-speedup {best_mn:.3f}x, best geomean {best_geo:.3f}x"))
        return None


class SuspiciousGain:
    """One evaluation improving geomean or min-speedup by `suspicious_step` over the previous
    correct one (on the baseline's terms, and on the goal's comparison's where it names one),
    a scenario reaching `suspicious_bound_fraction` of its bound for the first time, or one
    below its bound (every time). A scenario that stays near its bound is not news: in the
    H200 campaign it re-fired on every evaluation (18 of 23 questions).
    Under a goal against a comparison, also a scenario whose ratio against it rose by
    `suspicious_step` over the previous evaluation while its speedup over the baseline did not
    follow: the comparison's time moved, not the candidate's (seen on the H200: one scenario
    read 2.42x FA3 against 0.89-0.91x for four siblings with the same kernel time)."""

    def __init__(self, cfg: TriggerConfig, against: str = "baseline") -> None:
        self.cfg = cfg
        self.against = against
        self.prev: Evaluation | None = None
        self.near_bound: set[str] = set()   # scenarios already reported near their bound
        self.by_source: dict[str, Evaluation] = {}   # the last correct evaluation per sha

    def on_eval(self, ev: Evaluation, replay: bool = False) -> Fired | None:
        if not ev.all_correct or not ev.counts_on("baseline"):
            return None
        prev, self.prev = self.prev, ev
        reasons = self._same_source(ev)
        if prev is not None and prev.sha != ev.sha:
            for key, label in (("geomean_speedup", "geomean"), ("min_speedup", "min-speedup")):
                r = _rel(ev.metric(key), prev.metric(key))
                if r >= self.cfg.suspicious_step:
                    reasons.append(f"{label} {prev.metric(key):.3f}x -> {ev.metric(key):.3f}x "
                                   f"(+{r:.0%}) in one step")
            if self.against != "baseline":
                now, before = ev.on_terms(self.against), prev.on_terms(self.against)
                for i, label in ((1, "geomean"), (0, "min-speedup")):
                    r = _rel(now[i], before[i])
                    if r >= self.cfg.suspicious_step:
                        reasons.append(f"{label} against {self.against} {before[i]:.3f}x -> "
                                       f"{now[i]:.3f}x (+{r:.0%}) in one step")
        if prev is not None and self.against != "baseline" and ev.counts_on(self.against) \
                and prev.counts_on(self.against):
            reasons += self._comparison_moved(prev, ev)
        near = []
        for row in ev.scenarios:
            bf = row.bound_fraction
            if row.below_bound:   # faster than physics allows: news every time
                near.append(f"{row.id} at {bf:.0%} of its bound (below it)" if bf is not None
                            else f"{row.id} below its bound")
            elif bf is not None and bf >= self.cfg.suspicious_bound_fraction \
                    and row.id not in self.near_bound:
                self.near_bound.add(row.id)
                near.append(f"{row.id} at {bf:.0%} of its bound")
        if near:
            reasons.append("; ".join(near[:4]) + (f" (+{len(near) - 4} more)" if len(near) > 4
                                                  else ""))
        if reasons:
            return Fired("suspicious_gain", "; ".join(reasons))
        return None

    def _same_source(self, ev: Evaluation) -> list[str]:
        """The same bytes measured again must agree within noise: a rise beyond
        `same_source_step` says the measurement moved, or the record was made up."""
        before, self.by_source[ev.sha] = self.by_source.get(ev.sha), ev
        if before is None or not ev.sha:
            return []
        out = []
        for key, label in (("geomean_speedup", "geomean"), ("min_speedup", "min-speedup")):
            r = _rel(ev.metric(key), before.metric(key))
            if r >= self.cfg.same_source_step:
                out.append(f"the same source (sha256 {ev.sha[:12]}) as evaluation "
                           f"#{before.n}: {label} {before.metric(key):.3f}x -> "
                           f"{ev.metric(key):.3f}x (+{r:.0%}); the same bytes measured "
                           f"again should agree within noise")
        return out

    def _comparison_moved(self, prev: Evaluation, ev: Evaluation) -> list[str]:
        before = {row.id: row for row in prev.scenarios}
        moved = []
        for row in ev.scenarios:
            old = before.get(row.id)
            if old is None:
                continue
            vs_rel = _rel(row.speedup_against(self.against), old.speedup_against(self.against))
            base_rel = _rel(row.speedup, old.speedup)
            if vs_rel >= self.cfg.suspicious_step and vs_rel - base_rel >= self.cfg.suspicious_step:
                moved.append(f"{row.id} {old.speedup_against(self.against):.3f}x -> "
                             f"{row.speedup_against(self.against):.3f}x against {self.against} "
                             f"while its speedup over the baseline moved {base_rel:+.0%}: "
                             f"{self.against}'s time moved, not yours")
        return moved


class CorrectnessFailure:
    """A failing evaluation (build, ban or a scenario's correctness), then the agent's
    explanation of it: the first text of at least `explanation_min_chars` after it."""

    def __init__(self, cfg: TriggerConfig) -> None:
        self.cfg = cfg
        self.pending: Evaluation | None = None
        self.explained_n = 0   # the last failing evaluation the agent explained

    def on_eval(self, ev: Evaluation, replay: bool = False) -> Fired | None:
        self.pending = ev if ev.failed_check and ev.n > self.explained_n else None
        return None

    def on_text(self, text: str) -> Fired | None:
        if self.pending is None or len(text.strip()) < self.cfg.explanation_min_chars:
            return None
        ev, self.pending = self.pending, None
        self.explained_n = ev.n
        bad = [r.id for r in ev.scenarios if not r.correct]
        what = ("build failed" if not ev.build_ok else "banned library" if not ev.bans_ok
                else f"{len(bad)} scenario(s) incorrect ({', '.join(bad[:4])})" if bad
                else ev.error or "evaluation failed")
        snippet = " ".join(text.split())[:160]
        return Fired("correctness_failure",
                     f"evaluation #{ev.n}: {what}; the agent explains: \"{snippet}\"")


LIMIT_PATTERNS = [
    (r"\b(at|near|close to|reached|reaching|hit(ting)?)\b[^.\n]{0,40}\b(the )?(limit|roofline|"
     r"peak|ceiling|bound)\b"),
    r"\bcan(not|'t)? (be )?(improved?|go|get|made?) (any |much )?(further|faster|more|better)\b",
    r"\b(no|little) (further|more) (room|headroom|gains?|improvement|speedup)\b",
    r"\b(is|are|looks|seems|now) (already |essentially |basically )?(near[- ])?optimal\b",
    r"\b(best possible|as fast as (it|this|the hardware) (can|gets|allows))\b",
    r"\bfundamental(ly)? (limit|bound)",
    r"\b(i am|i'm|we are|we're) done\b",
    r"\bdiminishing returns\b",
    r"\bnothing (left|more|further) to (gain|try|optimi[sz]e)\b",
]
_LIMIT_RE = re.compile("|".join(f"(?:{p})" for p in LIMIT_PATTERNS), re.IGNORECASE)


def declares_limit(text: str) -> str | None:
    m = _LIMIT_RE.search(text)
    return m.group(0) if m else None


class DeclaredDone:
    """A stop attempt with the goal unmet, or text declaring a limit; at most once per
    `declared_done_cooldown` evaluations."""

    def __init__(self, cfg: TriggerConfig) -> None:
        self.cfg = cfg
        self.last_at: int | None = None

    def _ok(self, n_evals: int) -> bool:
        return self.last_at is None or n_evals - self.last_at >= self.cfg.declared_done_cooldown

    def on_text(self, text: str, n_evals: int) -> Fired | None:
        phrase = declares_limit(text)
        if phrase is None or not self._ok(n_evals):
            return None
        self.last_at = n_evals
        return Fired("declared_done", f"the agent declares a limit: \"{phrase}\"")

    def on_stop(self, met: bool, n_failing: int, n_evals: int) -> Fired | None:
        if met or not self._ok(n_evals):
            return None
        self.last_at = n_evals
        return Fired("declared_done", f"stop attempt with the goal unmet "
                                      f"({n_failing} scenario(s) short)")


class Detectors:
    """All five, wired the way the campaign uses them."""

    def __init__(self, cfg: TriggerConfig, against: str = "baseline") -> None:
        self.start = Start()
        self.plateau = Plateau(cfg, against)
        self.suspicious = SuspiciousGain(cfg, against)
        self.correctness = CorrectnessFailure(cfg)
        self.declared = DeclaredDone(cfg)

    def on_eval(self, ev: Evaluation, goal_set: bool, replay: bool = False) -> list[Fired]:
        fired = [self.correctness.on_eval(ev, replay)]
        if goal_set:
            fired += [self.suspicious.on_eval(ev, replay), self.plateau.on_eval(ev, replay)]
        return [] if replay else [f for f in fired if f]

    def on_text(self, text: str, n_evals: int) -> list[Fired]:
        return [f for f in (self.correctness.on_text(text),
                            self.declared.on_text(text, n_evals)) if f]


class Triggers:
    """The detectors wired to a campaign. A firing asks the suggester (the bank) for
    questions not asked or queued yet, is logged as a `trigger` event with their ids, and,
    with auto-questions on, queues the top one in the inbox. A failing suggester is logged as
    a `problem` and the trigger goes out without suggestions."""

    def __init__(self, cfg: TriggerConfig, *, goal_set: str | None, inbox: Inbox, emit: Emit,
                 suggester: Suggester | None, against: str = "baseline") -> None:
        self.detectors = Detectors(cfg, against)   # against: the goal's terms
        self.goal_set = goal_set
        self.inbox = inbox
        self.emit = emit
        self.suggester = suggester
        self.recent_text = ""  # the agent's latest text, for the suggester

    def start(self, task_name: str, goal_text: str) -> None:
        """Before the agent's first turn (once per campaign: a resume does not fire it)."""
        f = self.detectors.start.fire(task_name, goal_text)
        if f:
            self.fire(f)

    def on_eval(self, ev: Evaluation) -> None:
        for f in self.detectors.on_eval(ev, ev.set == self.goal_set):
            self.fire(f)

    def resume(self, history: list[Evaluation]) -> None:
        """A resumed campaign: the start has fired; detector state from the evaluations
        already in the log, in order (nothing fires)."""
        self.detectors.start.done = True
        for ev in history:
            self.detectors.on_eval(ev, ev.set == self.goal_set, replay=True)

    def marks(self) -> tuple[bool, int | None, int]:
        """What replaying the evaluations cannot give back: whether the start fired, the
        evaluation count at declared_done's last firing, and the last failing evaluation
        the agent explained (correctness_failure fired for it)."""
        d = self.detectors
        return d.start.done, d.declared.last_at, d.correctness.explained_n

    def restore_marks(self, start_fired: bool, declared_last_at: int | None,
                      explained_n: int) -> None:
        """`marks` put back (after the evaluations were replayed)."""
        d = self.detectors
        d.start.done = start_fired
        d.declared.last_at = declared_last_at
        d.correctness.explained_n = explained_n
        if d.correctness.pending is not None and d.correctness.pending.n <= explained_n:
            d.correctness.pending = None

    def on_text(self, text: str, n_evals: int) -> None:
        if not text.strip():
            return
        self.recent_text = (self.recent_text + "\n" + text)[-4000:]
        for f in self.detectors.on_text(text, n_evals):
            self.fire(f)

    def on_stop(self, met: bool, n_failing: int, n_evals: int) -> None:
        f = self.detectors.declared.on_stop(met, n_failing, n_evals)
        if f:
            self.fire(f)

    def fire(self, fired: Fired) -> None:
        suggestions: list[Suggestion] = []
        if self.suggester is not None:
            try:
                # the firing's own reason is context too: "fa3's time moved" lifts the
                # entries about the comparison's measurement over generic validity ones
                suggestions = self.suggester(fired.kind, self.inbox.known_bank_ids(),
                                             self.recent_text[-2000:] + "\n" + fired.reason)
            except Exception as exc:
                self.emit(Problem(where="bank.suggest", error=f"{type(exc).__name__}: {exc}"))
                suggestions = []
        self.emit(Trigger(kind=fired.kind, reason=fired.reason,
                          suggestions=[s[0] for s in suggestions]))
        known = set(self.inbox.known_bank_ids())
        fresh = [s for s in suggestions if s[0] not in known]
        if self.inbox.auto_questions and fresh:
            bid, text = fresh[0]  # the bank's top suggestion not posed yet
            self.inbox.ask(Question(text=text, bank_id=bid, trigger=fired.kind, source="auto"))
