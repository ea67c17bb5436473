"""One session's figures, re-derived in one pass over its event log.

What counts (the same rules as the harness):
- an evaluation is one `eval.end`; it is correct when its summary says `all_correct`;
- the goal set is `campaign.start`'s `scenarios.set` (when the log names none, every
  evaluation counts as one of the goal set);
- best geomean and best min are each the highest over correct goal-set evaluations (they
  may come from different evaluations); the *best evaluation* is ranked as the harness
  ranks it, by min and then geomean, and its per-scenario speedups are the ones plotted;
- the goal is reached at the first `stophook` with `met`, or earlier at the first correct
  goal-set evaluation whose min speedup is at least the goal (goal against the baseline);
- a question's gain: the best geomean and min before it, and after the next `window`
  goal-set evaluations that end after it (relative change; best values never go down).
  `followed` and `best_on` are that rule, shared with `socratic bank trace`;
- an evaluation retracted (`eval.retract`, wherever it lies in the log) keeps its place and
  its correctness, but the figures it was retracted on are not figures: null in its point
  (all of them, or its comparisons'), so it is no best, reaches no goal and is no evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from socratic.contracts import (
    AgentLaunch,
    CampaignStart,
    EvalEnd,
    EvalResult,
    EvalSummary,
    Goal,
    RetractPart,
)
from socratic.endreasons import counts_as_met, end_detail
from socratic.logread import Asked, LogState, read_log
from socratic.report.churn import Churn, churn
from socratic.report.coverage import last_coverage
from socratic.report.source import SessionFiles
from socratic.report.verdict import (
    Point,
    Verdict,
    broken_record,
    check_results,
    logged_tampering,
    meets,
    record_dict,
    same_goal,
    same_source_jumps,
)
from socratic.report.verdict import goal_at as goal_at_seq

DEFAULT_AGENT = "socratic"  # its own Messages API loop (`socratic run`), as fleets name it
DEFAULT_WINDOW = 5  # the harness's plateau window: did the question end a plateau?


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _rel(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old <= 0:
        return None
    return new / old - 1.0


def _max(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


@dataclass
class EvalPoint:
    n: int
    seq: int
    t: float
    set: str | None
    goal_set: bool
    correct: bool
    geomean: float | None
    min: float | None
    sha: str
    source: str | None
    tool_calls: int                 # tool calls before it ended
    best_geomean: float | None      # running best (correct goal-set evaluations) after it
    best_min: float | None
    result: str = ""                # the saved result, relative to the session folder
    geomean_vs: dict[str, float] = field(default_factory=dict)  # against each comparison
    baseline_geomean: float | None = None   # geomean/min above are on the goal's terms
    retracted: RetractPart | None = None            # eval.retract's part (all | comparisons)
    retracted_why: str | None = None
    imported: bool = False                  # recorded by `hook evaluate --import`


def geomean_against(p: EvalPoint, against: str) -> float | None:
    """An evaluation's geomean speedup against the baseline or a comparison (`fa3`...)."""
    return p.baseline_geomean if against == "baseline" else p.geomean_vs.get(against)


def best_on(points: list[EvalPoint], value: Callable[[EvalPoint], float | None]
            ) -> EvalPoint | None:
    """The correct goal-set evaluation with the highest `value` (the first of equals);
    failing evaluations and other scenario sets never count."""
    best = None
    for p in points:
        v = value(p)
        if p.correct and p.goal_set and v is not None:
            if best is None or v > cast(float, value(best)):
                best = p
    return best


class Cards:
    """The GPU each evaluation ran on, read from its saved result when first asked (None: no
    result, or none that reads): ratios move from card to card, so a gain is read on one."""

    def __init__(self, read: Callable[[str], EvalResult | None]):
        self.read = read
        self.known: dict[str, str | None] = {}

    def __call__(self, p: EvalPoint) -> str | None:
        if p.result not in self.known:
            res = self.read(p.result) if p.result else None
            self.known[p.result] = res.gpu.name if res is not None and res.gpu is not None else None
        return self.known[p.result]


def compared(before: list[EvalPoint], after: list[EvalPoint], value: Callable[[EvalPoint], float | None],
             card: Callable[[EvalPoint], str | None]) -> tuple[EvalPoint | None, EvalPoint | None]:
    """The two evaluations a question's gain is read from: the best before it and the best
    after it (best_on), where they ran on one GPU or either's is unknown (no readable
    result); else, per GPU the evaluations after it ran on, the best of each side on it, the
    pair that gained most; (None, best after) where no evaluation before ran on any of them."""
    b, a = best_on(before, value), best_on(after, value)
    if b is None or a is None or None in (card(b), card(a)) or card(b) == card(a):
        return b, a
    pairs = []
    for c in dict.fromkeys(card(p) for p in after if p.correct and p.goal_set):
        if c is None:
            continue
        a_c = best_on([p for p in after if card(p) == c], value)
        b_c = best_on([p for p in before if card(p) == c], value)
        if a_c is not None and b_c is not None:
            pairs.append((cast(float, value(a_c)) / max(cast(float, value(b_c)), 1e-30), b_c, a_c))
    if not pairs:
        return None, a
    _, b, a = max(pairs, key=lambda t: t[0])
    return b, a


def followed(series: list[EvalPoint], evals_before: int, window: int,
             until: int | None = None) -> tuple[list[EvalPoint], list[EvalPoint]]:
    """What a question asked after the first `evals_before` evaluations is judged on: the
    evaluations ended before it, and the next `window` goal-set evaluations ended after it
    (among those before index `until`, when given)."""
    after = [p for p in series[evals_before:until] if p.goal_set][:window]
    return series[:evals_before], after


@dataclass
class QuestionGain:
    seq: int
    t: float
    text: str
    bank_id: str | None
    group: str
    trigger: str | None
    source: str
    evaluations_before: int          # evaluations ended before it (any set)
    tool_calls_after: int            # until the next question (or the end)
    window_evaluations: int          # goal-set evaluations counted after it (<= window)
    best_geomean_before: float | None
    best_geomean_after: float | None
    geomean_gain: float | None       # after / before - 1
    best_min_before: float | None
    best_min_after: float | None
    min_gain: float | None


@dataclass
class Failure:
    n: int
    seq: int
    t: float
    set: str | None
    what: str
    failing: list[str]
    explanation: str | None          # the agent's first words after it


@dataclass
class SessionReport:
    session: str
    path: str
    task: str | None
    agent: str
    model: str | None
    questions_mode: str
    end_reason: str | None           # None: no campaign.end (running, or killed)
    started: str | None
    duration_s: float
    turns: int
    tool_calls: int
    evaluations: int
    evaluations_correct: int
    evaluations_incorrect: int
    goal: dict[str, Any]
    goal_set: str | None
    best_geomean: float | None
    best_min: float | None
    best_evaluation: int | None             # ranked by min, then geomean (the harness's best)
    best_scenarios: list[dict[str, Any]]
    goal_met: bool
    time_to_goal_s: float | None
    tool_calls_to_goal: int | None
    evaluations_to_goal: int | None
    tokens: dict[str, int]
    cost_usd: float
    questions: int
    questions_by_trigger: dict[str, int]
    questions_by_group: dict[str, int]
    questions_human: int
    questions_auto: int
    tool_calls_per_question: float | None
    question_gains: list[QuestionGain]
    triggers: dict[str, int]
    churn: Churn
    correctness_failures: list[Failure]
    series: list[EvalPoint]
    skipped_lines: int
    window: int = DEFAULT_WINDOW
    events: int = 0
    notes: list[str] = field(default_factory=list)
    best_geomean_evaluation: int | None = None   # the evaluation each best figure is from
    best_min_evaluation: int | None = None
    sessions: int = 1                # a campaign ended and resumed has several
    active_s: float | None = None    # their time, the gaps between them left out
    end_detail: str = ""             # an end that is no result (hooks_silent, agent_exited)
    cost_known: bool = False         # the log priced some model turns (usage events)
    coverage: dict[str, Any] | None = None   # the last space evaluation's (coverage.py)
    record: dict[str, Any] = field(default_factory=dict)   # the chain's verdict (verdict.py)
    contradictions: list[str] = field(default_factory=list)  # the record against itself
    imported: int = 0                # evaluations imported (`hook evaluate --import`)
    # an outside agent (attach): started by socratic in a Landlock domain every time (and
    # never found running outside it); None where no outside agent ran (run, by hand)
    confined: bool | None = None
    confined_detail: str = ""        # why not, in words
    damaged: list[str] = field(default_factory=list)   # session files there but unreadable

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["churn"] = self.churn.to_dict()
        return d


def confinement(agent: str | None, events: list[Any]) -> tuple[bool | None, str]:
    """(confined, why not) of an attached campaign's agent, from its `agent.launch` events."""
    if agent in (None, "", DEFAULT_AGENT, "manual"):
        return None, ""
    launches = [e for e in events if isinstance(e, AgentLaunch)]
    if not launches:
        return False, "the agent was not started by socratic (no agent.launch in the log)"
    bad = next((e for e in launches if not e.confined), None)
    if bad is not None:
        return False, f"{bad.agent} started {bad.mode} unconfined: {bad.how}"
    return True, ""


def _declared_or_extra(start: CampaignStart, name: str) -> Any:
    """A campaign.start field the contract may not declare yet (`agent` from attached
    agents, `questions` from fleets): read either way."""
    return getattr(start, name, None) or start.extra.get(name)


def _named(*values: Any) -> str | None:
    return next((v for v in values if isinstance(v, str) and v), None)


def questions_mode(start: CampaignStart, config: dict[str, Any],
                   fleet: dict[str, Any] | None = None) -> str:
    """none | auto | human: as the fleet ran it (its manifest) or the log names it; else
    auto-questions on means auto, an attached campaign waiting for a human means human."""
    named = _named((fleet or {}).get("questions"), _declared_or_extra(start, "questions"))
    if named:
        return named
    auto = start.auto_questions
    if auto is None:  # older logs: the settings the campaign was started with
        auto = config.get("auto_questions") is True
    if auto:
        return "auto"
    if config.get("wait_for_human"):
        return "human"
    return "none"


def _failure_what(summary: EvalSummary, failing: list[str]) -> str:
    if summary.error:
        return f"evaluator: {summary.error}"
    if summary.build_ok is False:
        return "build failed"
    if summary.bans_ok is False:
        return "banned library"
    if failing:
        more = f", +{len(failing) - 4} more" if len(failing) > 4 else ""
        return f"{len(failing)} scenario(s) incorrect ({', '.join(failing[:4])}{more})"
    return "not correct"


class _Judge:
    """The record checked against itself: whether an evaluation's figures stand, and whether
    what a stop or the end cites meets the goal in force."""

    def __init__(self, files: SessionFiles, log: LogState) -> None:
        self.log, self.verdict = log, Verdict()
        broken_record(files.record, self.verdict)
        check_results(files.files.read_bytes, files.events, self.verdict)
        logged_tampering(files.events, self.verdict)
        self.goals = log.goals   # the goals in force, in order (socratic.logread)
        self.points: dict[int, Point] = {}

    def stands(self, n: int | None) -> bool:
        """Evaluation n's figures on the goal's terms are not retracted, and its saved
        result is the one its eval.end recorded."""
        return n is None or (not self.log.retractions.hides(n, self.log.terms)
                             and n not in self.verdict.rewritten)

    def why_not(self, n: int | None, seq: int, what: str, said_goal: Goal | None = None) -> bool:
        """Says (and returns True) when what `what` cites does not meet the goal in force."""
        start = cast(CampaignStart, self.log.start)
        in_force = goal_at_seq(self.goals, seq) or start.goal
        if said_goal is not None and not same_goal(said_goal, in_force):
            self.verdict.say(f"{what} judged a goal of {said_goal.min_speedup:g}x against "
                             f"{said_goal.against}, not the {in_force.min_speedup:g}x against "
                             f"{in_force.against} pinned at the start")
            return True
        if n is None:
            self.verdict.say(f"{what} names no evaluation")
            return True
        why = ("its saved result was rewritten" if n in self.verdict.rewritten
               else meets(self.points.get(n), in_force))
        if why:
            self.verdict.say(f"{what} cites evaluation #{n}, which does not meet the goal: {why}")
        return why is not None


def _series(files: SessionFiles, log: LogState, judge: _Judge) -> list[EvalPoint]:
    """The evaluations as the report plots them, with the running bests on the goal's terms
    (correct goal-set evaluations whose figures stand)."""
    series: list[EvalPoint] = []
    best_geo = best_min = None
    for e in log.evaluations:
        end, summary = e.end, e.end.summary
        if not judge.stands(e.n):
            geo = mn = None
        elif log.terms == "baseline":
            geo, mn = _num(summary.geomean_speedup), _num(summary.min_speedup)
        else:   # the goal's terms: speedups against the comparison (FA3 ...)
            geo, mn = _on_comparison(files, end, log.terms)
        if e.correct and e.goal_set:
            best_geo, best_min = _max(best_geo, geo), _max(best_min, mn)
        vs = {k: v for k, v in (summary.geomean_vs or {}).items()
              if _num(v) is not None and not log.retractions.hides(e.n, k)}
        base = None if log.retractions.hides(e.n, "baseline") else _num(summary.geomean_speedup)
        series.append(EvalPoint(e.n, end.seq, e.t, end.set, e.goal_set, e.correct, geo, mn,
                                e.sha, end.source, e.tool_calls, best_geo, best_min, end.result,
                                vs, base, log.retractions.part(e.n), log.retractions.why(e.n),
                                e.imported))
    return series


def _firsts(series: list[EvalPoint]) -> tuple[int | None, int | None]:
    """The evaluations the best geomean and the best min are from (the first of equals)."""
    geo_n = min_n = None
    best_geo = best_min = None
    for p in series:
        if p.correct and p.goal_set:
            if p.geomean is not None and (best_geo is None or p.geomean > best_geo):
                geo_n, best_geo = p.n, p.geomean
            if p.min is not None and (best_min is None or p.min > best_min):
                min_n, best_min = p.n, p.min
    return geo_n, min_n


def _failures(log: LogState) -> list[Failure]:
    out = []
    for e in log.evaluations:
        if e.correct:
            continue
        failing = list(e.end.summary.failing or []) or [r.scenario for r in e.rows
                                                         if not r.correct]
        out.append(Failure(e.n, e.end.seq, e.t, e.end.set,
                           _failure_what(e.end.summary, failing), failing,
                           log.explanations.get(e.index)))
    return out


def _goal_reached(log: LogState, series: list[EvalPoint], judge: _Judge
                  ) -> tuple[tuple[float, int, int] | None, bool]:
    """(t, tool calls, evaluations) when the goal was first reached, or None; and whether
    the end's goal_met stands. "Met" re-derived: what a stop or the end cites must meet the
    goal in force."""
    goal_min = _num(cast(CampaignStart, log.start).goal.min_speedup)
    goal_at = next(((p.t, p.tool_calls, i + 1) for i, p in enumerate(series)
                    if goal_min is not None and p.correct and p.goal_set and p.min is not None
                    and p.min >= goal_min), None)
    judge.points = {p.n: Point(p.n, p.sha, p.goal_set, p.correct and judge.stands(p.n), p.min,
                               p.geomean, p.baseline_geomean, p.source) for p in series}

    def judged(n: int | None, n_evals: int) -> int | None:
        """The evaluation a stop judged: the one it names, else (older logs) the last
        goal-set evaluation before it."""
        if n is not None:
            return n
        return next((p.n for p in reversed(series[:n_evals]) if p.goal_set), None)

    for stop in log.met_stops:
        if not judge.why_not(judged(stop.event.n, stop.evaluations), stop.event.seq,
                             f"the stop at event {stop.event.seq}", stop.event.goal) \
                and goal_at is None:
            goal_at = (stop.t, stop.tool_calls, stop.evaluations)
    end, end_met = log.end, False
    if end is not None and end.reason == "goal_met":
        if not series:
            judge.verdict.say("the campaign ended goal_met with 0 evaluations")
        else:
            cited = end.n if end.n is not None else \
                (log.met_stops[-1].event.n if log.met_stops else None)
            end_met = not judge.why_not(judged(cited, len(series)), end.seq,
                                        "campaign.end goal_met")
    if end is not None and not counts_as_met(end.reason):
        goal_at = None   # hooks_silent, agent_exited: no goal check of it stands
    return goal_at, end_met


def _best_rows(files: SessionFiles, log: LogState, best: EvalPoint | None) -> list[dict[str, Any]]:
    """The best evaluation's per-scenario speedups: the log's rows carry the baseline's,
    eval.end (or, in older logs, the saved result) the comparisons'."""
    if best is None:
        return []
    rows: list[dict[str, Any]] = [
        {"scenario": r.scenario, "correct": r.correct, "speedup": _num(r.speedup)}
        for r in log.rows(best.n)]
    last = next(e.end for e in reversed(log.evaluations) if e.n == best.n)  # its latest run
    if not rows:
        rows = _rows_from_result(files.eval_result(last.result))
    else:
        logged: dict[str, Any] = last.scenario_vs or {}
        if not logged:   # logs before scenario_vs: the saved result has them
            logged = {r["scenario"]: r["vs"]
                      for r in _rows_from_result(files.eval_result(last.result))}
        rows = [{**r, "vs": {k: _num(v) for k, v in logged.get(r["scenario"], {}).items()
                             if _num(v) is not None}} for r in rows]
    return [{**r, "vs": {k: v for k, v in r.get("vs", {}).items()
                         if not log.retractions.hides(best.n, k)}} for r in rows]


def derive(files: SessionFiles, group_of: Callable[[str], str | None],
           window: int = DEFAULT_WINDOW) -> SessionReport:
    """Everything the report says about one session: the one reading of its log
    (socratic.logread), checked against itself, plus the report's own figures. `group_of`
    maps a bank id to its group (None: not in the bank)."""
    log = read_log(files.events)
    start = cast(CampaignStart, log.start)   # load_session keeps only logs with one
    judge = _Judge(files, log)
    series = _series(files, log, judge)
    goal_at, end_met = _goal_reached(log, series, judge)
    if _declared_or_extra(start, "agent") not in (None, "manual"):
        for p in series:
            if p.imported:
                judge.verdict.say(f"evaluation #{p.n} was imported in a session driven by an "
                                  f"agent's hooks (imports are for campaigns by hand)")
    same_source_jumps([judge.points[p.n] for p in series], judge.verdict)
    gains = _gains(log.questions, series, log.tool_calls, window, group_of, Cards(files.eval_result))
    best = _best([p for p in series if judge.stands(p.n)])
    sources: dict[str, str | None] = {}
    for p in series:
        if p.sha and p.sha not in sources:
            sources[p.sha] = files.candidate(p.sha)
    agent = _declared_or_extra(start, "agent")
    confined, confined_why = confinement(agent, files.events)
    best_geo_n, best_min_n = _firsts(series)
    last = series[-1] if series else None
    end, tok = log.end, log.tokens
    tokens = {"input": tok.input, "output": tok.output, "cache_read": tok.cache_read,
              "cache_write": tok.cache_write}
    return SessionReport(
        session=files.name, path=str(files.dir), task=start.task,
        agent=_named(agent, files.fleet.get("agent")) or DEFAULT_AGENT,
        model=start.model, questions_mode=questions_mode(start, files.config, files.fleet),
        end_reason=log.end_reason, started=start.ts, duration_s=round(log.duration_s, 3),
        turns=log.turns, tool_calls=log.tool_calls, evaluations=len(series),
        evaluations_correct=sum(1 for p in series if p.correct),
        evaluations_incorrect=sum(1 for p in series if not p.correct),
        goal={"min_speedup": _num(start.goal.min_speedup), "against": start.goal.against},
        goal_set=log.goal_set,
        best_geomean=last.best_geomean if last else None,
        best_min=last.best_min if last else None,
        best_evaluation=best.n if best else None, best_scenarios=_best_rows(files, log, best),
        best_geomean_evaluation=best_geo_n, best_min_evaluation=best_min_n,
        sessions=log.clock.sessions, active_s=round(log.clock.active_s, 3),
        goal_met=goal_at is not None or end_met,
        record=record_dict(files.record), contradictions=judge.verdict.contradictions,
        imported=log.imports,
        end_detail=end_detail(end.reason, {**end.extra, **vars(end)}) if end else "",
        cost_known=log.priced, confined=confined, confined_detail=confined_why,
        time_to_goal_s=round(goal_at[0], 3) if goal_at else None,
        tool_calls_to_goal=goal_at[1] if goal_at else None,
        evaluations_to_goal=goal_at[2] if goal_at else None,
        tokens={**tokens, "total": sum(tokens.values())}, cost_usd=round(log.cost_usd, 6),
        questions=len(gains), questions_by_trigger=_count(g.trigger or "none" for g in gains),
        questions_by_group=_count(g.group for g in gains),
        questions_human=sum(1 for g in gains if g.source == "human"),
        questions_auto=sum(1 for g in gains if g.source == "auto"),
        tool_calls_per_question=log.tool_calls / len(gains) if gains else None,
        question_gains=gains, triggers=dict(log.triggers),
        churn=churn([sources.get(p.sha) for p in series]),
        correctness_failures=_failures(log), series=series, skipped_lines=files.skipped,
        window=window, events=len(files.events), coverage=last_coverage(files, series),
        damaged=files.damaged + [why for p in sorted(series, key=lambda p: p.n)
                                 if (why := files.result_problem(p.result)) is not None],
    )


def _count(keys: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return out


def _gains(questions: list[Asked], series: list[EvalPoint], total_calls: int,
           window: int, group_of: Callable[[str], str | None],
           card: Callable[[EvalPoint], str | None]) -> list[QuestionGain]:
    out = []
    for i, q in enumerate(questions):
        e = q.event
        before, after = followed(series, q.evaluations, window)
        geo_b, geo_a = compared(before, after, _geomean, card)
        min_b, min_a = compared(before, after, _min, card)
        geo0, min0 = _value(geo_b, _geomean), _value(min_b, _min)
        geo1 = _max(geo0, _value(geo_a, _geomean))
        min1 = _max(min0, _value(min_a, _min))
        nxt = questions[i + 1].tool_calls if i + 1 < len(questions) else total_calls
        bank_id = e.bank_id or None
        group = (group_of(bank_id) or "unknown") if bank_id else "free_text"
        out.append(QuestionGain(
            seq=e.seq, t=_num(e.t) or 0.0, text=e.text, bank_id=bank_id, group=group,
            trigger=e.trigger, source=e.source if e.source in ("human", "auto") else "human",
            evaluations_before=q.evaluations, tool_calls_after=nxt - q.tool_calls,
            window_evaluations=len(after),
            best_geomean_before=geo0, best_geomean_after=geo1, geomean_gain=_rel(geo1, geo0),
            best_min_before=min0, best_min_after=min1, min_gain=_rel(min1, min0)))
    return out


def _geomean(p: EvalPoint) -> float | None:
    return p.geomean


def _min(p: EvalPoint) -> float | None:
    return p.min


def _value(p: EvalPoint | None, value: Callable[[EvalPoint], float | None]) -> float | None:
    return value(p) if p is not None else None


def _on_comparison(files: SessionFiles, e: EvalEnd, against: str) -> tuple[float | None, float | None]:
    """An evaluation's geomean and min speedup against a comparison (its time over the
    candidate's), the figures a goal against FA3 is judged on; the per-scenario ratios come
    from the saved result (the log's scenario events carry only the baseline's)."""
    geo = _num((e.summary.geomean_vs or {}).get(against))
    result = files.eval_result(e.result or "")
    mn = result.min_and_geomean(against)[0] if result else None
    return geo, _num(mn)


def _best(series: list[EvalPoint]) -> EvalPoint | None:
    good = [p for p in series if p.correct and p.goal_set]
    if not good:
        return None
    return max(good, key=lambda p: (p.min or 0.0, p.geomean or 0.0))


def _rows_from_result(result: EvalResult | None) -> list[dict[str, Any]]:
    return [{"scenario": r.id, "correct": r.correct, "speedup": _num(r.speedup),
             "vs": {k: sp for k in (r.comparisons or {})
                    if (sp := _num(r.speedup_against(k))) is not None}}
            for r in (result.scenarios if result else [])]
