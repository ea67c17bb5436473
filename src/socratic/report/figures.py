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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from socratic.contracts import (AgentLaunch, AgentText, CampaignEnd, CampaignResume, CampaignStart, EvalEnd,
                                EvalResult, EvalScenario, EvalStart, EvalSummary, Goal, Question, Retractions,
                                StopHook, ToolCall, Trigger, Usage)
from socratic.endreasons import counts_as_met, end_detail
from socratic.report.churn import Churn, churn
from socratic.report.coverage import last_coverage
from socratic.report.verdict import (Point, Verdict, broken_record, check_results, goals_in_force,
                                     logged_tampering, meets, record_dict, same_goal,
                                     same_source_jumps)
from socratic.report.verdict import goal_at as goal_at_seq
from socratic.report.source import SessionFiles

DEFAULT_AGENT = "socratic"  # its own Messages API loop (`socratic run`), as fleets name it
DEFAULT_WINDOW = 5  # the harness's plateau window: did the question end a plateau?
EXPLANATION_ENDS = (ToolCall, EvalStart, EvalEnd, Question, StopHook, CampaignEnd)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _rel(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old <= 0:
        return None
    return new / old - 1.0


def sessions_time(events: list[Any]) -> tuple[int, float]:
    """(how many sessions, their time): each from a campaign.start or campaign.resume to
    the next campaign.end (or the last event); the gaps between sessions left out."""
    n, active, t0 = 0, 0.0, None
    last = 0.0
    for e in events:
        t = _num(getattr(e, "t", None))
        if t is None:
            continue
        last = max(last, t)
        if isinstance(e, (CampaignStart, CampaignResume)) and t0 is None:
            n, t0 = n + 1, t
        elif isinstance(e, CampaignEnd) and t0 is not None:
            active, t0 = active + max(0.0, t - t0), None
    if t0 is not None:
        active += max(0.0, last - t0)
    return n, active


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
    retracted: str | None = None            # eval.retract's part (all | comparisons)
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


@dataclass
class _Asked:
    """A question and where the campaign stood when it was asked."""

    event: Question
    evals: int
    calls: int
    best: tuple[float | None, float | None]


def derive(files: SessionFiles, group_of: Callable[[str], str | None],
           window: int = DEFAULT_WINDOW) -> SessionReport:
    """Everything the report says about one session. `group_of` maps a bank id to its group
    (None: not in the bank)."""
    events = files.events
    start = next(e for e in events if isinstance(e, CampaignStart))
    goal_min = _num(start.goal.min_speedup)
    against = start.goal.against
    goal = {"min_speedup": goal_min, "against": against}
    against_baseline = against == "baseline"
    goal_set = start.scenarios.set
    retracted = Retractions.of(events)
    verdict = Verdict()
    broken_record(files.record, verdict)
    check_results(files.files.read_bytes, events, verdict)
    logged_tampering(events, verdict)
    goals = goals_in_force(events)

    def stands(n: int | None) -> bool:
        """Evaluation n's figures on the goal's terms are not retracted, and its saved
        result is the one its eval.end recorded."""
        return n is None or (not retracted.hides(n, against) and n not in verdict.rewritten)

    tool_calls = turns = 0
    cost = 0.0
    priced = False
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    shas: dict[int, str] = {}
    rows: dict[int, list[dict[str, Any]]] = {}
    series: list[EvalPoint] = []
    results: dict[int, str] = {}
    scenario_vs: dict[int, dict[str, dict[str, float]]] = {}   # eval.end's, by evaluation
    questions: list[_Asked] = []
    triggers: dict[str, int] = {}
    failures: list[Failure] = []
    explaining: Failure | None = None
    said: list[str] = []
    best_geo = best_min = None
    best_geo_n: int | None = None
    best_min_n: int | None = None
    goal_at: tuple[float, int, int] | None = None   # t, tool calls, evaluations
    end: CampaignEnd | None = None
    met_stops: list[tuple[StopHook, float, int, int]] = []   # with t, tool calls, evaluations
    last_t = 0.0

    for e in events:
        t = _num(e.t)
        if t is None:
            t = last_t
        last_t = max(last_t, t)
        if explaining is not None:
            if isinstance(e, AgentText):
                said.append(e.text)
            elif isinstance(e, EXPLANATION_ENDS) and "".join(said).strip():
                explaining.explanation = "".join(said).strip()
                explaining, said = None, []
            elif isinstance(e, EvalEnd):
                explaining, said = None, []  # no words before the next evaluation
        if isinstance(e, ToolCall):
            tool_calls += 1
        elif isinstance(e, Usage):
            turns += 1
            cost += _num(e.cost_usd) or 0.0
            priced = priced or _num(e.cost_usd) is not None
            tokens["input"] += e.input_tokens
            tokens["output"] += e.output_tokens
            tokens["cache_read"] += e.cache_read
            tokens["cache_write"] += e.cache_write
        elif isinstance(e, EvalStart):
            rows[e.n] = []  # an evaluation cut by a kill runs again under its n
            shas[e.n] = e.candidate_sha
        elif isinstance(e, EvalScenario):
            rows.setdefault(e.n, []).append(
                {"scenario": e.scenario, "correct": e.correct, "speedup": _num(e.speedup)})
        elif isinstance(e, EvalEnd):
            summary = e.summary
            on_goal = goal_set is None or e.set is None or e.set == goal_set
            correct = summary.all_correct
            if not stands(e.n):
                geo = mn = None
            elif against_baseline:
                geo, mn = _num(summary.geomean_speedup), _num(summary.min_speedup)
            else:   # the goal's terms: speedups against the comparison (FA3 ...)
                geo, mn = _on_comparison(files, e, against)
            if correct and on_goal:
                if geo is not None and (best_geo is None or geo > best_geo):
                    best_geo_n = e.n
                if mn is not None and (best_min is None or mn > best_min):
                    best_min_n = e.n
                best_geo, best_min = _max(best_geo, geo), _max(best_min, mn)
                if (goal_at is None and goal_min is not None
                        and mn is not None and mn >= goal_min):
                    goal_at = (t, tool_calls, len(series) + 1)
            vs = {k: v for k, v in (summary.geomean_vs or {}).items()
                  if _num(v) is not None and not retracted.hides(e.n, k)}
            base = None if retracted.hides(e.n, "baseline") else _num(summary.geomean_speedup)
            series.append(EvalPoint(e.n, e.seq, t, e.set, on_goal, correct, geo, mn,
                                    e.candidate_sha or shas.get(e.n, ""), e.source,
                                    tool_calls, best_geo, best_min, e.result, vs, base,
                                    retracted.part(e.n), retracted.why(e.n),
                                    e.source == "import" or e.imported is not None))
            results[e.n] = e.result
            scenario_vs[e.n] = e.scenario_vs or {}
            if not correct:
                failing = list(summary.failing or []) or [
                    str(r["scenario"]) for r in rows.get(e.n, []) if not r["correct"]]
                explaining, said = Failure(e.n, e.seq, t, e.set,
                                           _failure_what(summary, failing), failing, None), []
                failures.append(explaining)
        elif isinstance(e, Question):
            questions.append(_Asked(e, len(series), tool_calls, (best_geo, best_min)))
        elif isinstance(e, Trigger):
            triggers[e.kind] = triggers.get(e.kind, 0) + 1
        elif isinstance(e, StopHook) and e.met:
            met_stops.append((e, t, tool_calls, len(series)))
        elif isinstance(e, CampaignEnd):
            end = e
    if explaining is not None and "".join(said).strip():
        explaining.explanation = "".join(said).strip()

    # "met" re-derived: the evaluation a stop or the end cites must meet the goal in force
    points = {p.n: Point(p.n, p.sha, p.goal_set, p.correct and stands(p.n), p.min, p.geomean,
                         p.baseline_geomean, p.source) for p in series}

    def why_not(n: int | None, seq: int, what: str, said_goal: Goal | None = None) -> bool:
        in_force = goal_at_seq(goals, seq) or start.goal
        if said_goal is not None and not same_goal(said_goal, in_force):
            verdict.say(f"{what} judged a goal of {said_goal.min_speedup:g}x against "
                        f"{said_goal.against}, not the {in_force.min_speedup:g}x against "
                        f"{in_force.against} pinned at the start")
            return True
        if n is None:
            verdict.say(f"{what} names no evaluation")
            return True
        why = ("its saved result was rewritten" if n in verdict.rewritten
               else meets(points.get(n), in_force))
        if why:
            verdict.say(f"{what} cites evaluation #{n}, which does not meet the goal: {why}")
        return why is not None

    def judged(n: int | None, n_evals: int) -> int | None:
        """The evaluation a stop judged: the one it names, else (older logs) the last
        goal-set evaluation before it."""
        if n is not None:
            return n
        return next((p.n for p in reversed(series[:n_evals]) if p.goal_set), None)

    for stop, t, calls, n_evals in met_stops:
        if not why_not(judged(stop.n, n_evals), stop.seq, f"the stop at event {stop.seq}",
                       stop.goal) and goal_at is None:
            goal_at = (t, calls, n_evals)
    end_met = False
    if end is not None and end.reason == "goal_met":
        if not series:
            verdict.say("the campaign ended goal_met with 0 evaluations")
        else:
            cited = end.n if end.n is not None else \
                (met_stops[-1][0].n if met_stops else None)
            end_met = not why_not(judged(cited, len(series)), end.seq, "campaign.end goal_met")
    if _declared_or_extra(start, "agent") not in (None, "manual"):
        for p in series:
            if p.imported:
                verdict.say(f"evaluation #{p.n} was imported in a session driven by an agent's "
                            f"hooks (imports are for campaigns by hand)")
    same_source_jumps([points[p.n] for p in series], verdict)

    gains = _gains(questions, series, tool_calls, window, group_of)
    by_trigger: dict[str, int] = {}
    by_group: dict[str, int] = {}
    for g in gains:
        key = g.trigger or "none"
        by_trigger[key] = by_trigger.get(key, 0) + 1
        by_group[g.group] = by_group.get(g.group, 0) + 1

    n_sessions, active_s = sessions_time(events)
    best = _best([p for p in series if stands(p.n)])
    best_rows = rows.get(best.n, []) if best else []
    if best and not best_rows:
        best_rows = _rows_from_result(files.eval_result(results.get(best.n, "")))
    elif best:   # the log's rows carry the baseline's speedup; eval.end the comparisons'
        logged = scenario_vs.get(best.n) or {}
        if not logged:   # logs before scenario_vs: the saved result has them
            logged = {r["scenario"]: r["vs"]
                      for r in _rows_from_result(files.eval_result(results.get(best.n, "")))}
        best_rows = [{**r, "vs": {k: _num(v) for k, v in logged.get(r["scenario"], {}).items()
                                  if _num(v) is not None}} for r in best_rows]
    if best:
        best_rows = [{**r, "vs": {k: v for k, v in r.get("vs", {}).items()
                                  if not retracted.hides(best.n, k)}} for r in best_rows]

    sources: dict[str, str | None] = {}
    for p in series:
        if p.sha and p.sha not in sources:
            sources[p.sha] = files.candidate(p.sha)
    c = churn([sources.get(p.sha) for p in series])
    n_q = len(gains)
    agent = _declared_or_extra(start, "agent")
    confined, confined_why = confinement(agent, events)
    if end is not None and not counts_as_met(end.reason):
        goal_at = None   # hooks_silent, agent_exited: no goal check of it stands
    return SessionReport(
        session=files.name, path=str(files.dir), task=start.task,
        agent=_named(agent, files.fleet.get("agent")) or DEFAULT_AGENT,
        model=start.model, questions_mode=questions_mode(start, files.config, files.fleet),
        end_reason=end.reason if end else None, started=start.ts,
        duration_s=round(_num(end.t) or last_t if end else last_t, 3),
        turns=turns, tool_calls=tool_calls, evaluations=len(series),
        evaluations_correct=sum(1 for p in series if p.correct),
        evaluations_incorrect=sum(1 for p in series if not p.correct),
        goal=goal, goal_set=goal_set,
        best_geomean=best_geo, best_min=best_min,
        best_evaluation=best.n if best else None, best_scenarios=best_rows,
        best_geomean_evaluation=best_geo_n, best_min_evaluation=best_min_n,
        sessions=n_sessions, active_s=round(active_s, 3),
        goal_met=goal_at is not None or end_met,
        record=record_dict(files.record), contradictions=verdict.contradictions,
        imported=sum(1 for p in series if p.imported),
        end_detail=end_detail(end.reason, {**end.extra, **vars(end)}) if end else "",
        cost_known=priced, confined=confined, confined_detail=confined_why,
        time_to_goal_s=round(goal_at[0], 3) if goal_at else None,
        tool_calls_to_goal=goal_at[1] if goal_at else None,
        evaluations_to_goal=goal_at[2] if goal_at else None,
        tokens={**tokens, "total": sum(tokens.values())}, cost_usd=round(cost, 6),
        questions=n_q, questions_by_trigger=by_trigger, questions_by_group=by_group,
        questions_human=sum(1 for g in gains if g.source == "human"),
        questions_auto=sum(1 for g in gains if g.source == "auto"),
        tool_calls_per_question=tool_calls / n_q if n_q else None,
        question_gains=gains, triggers=triggers, churn=c, correctness_failures=failures,
        series=series, skipped_lines=files.skipped, window=window, events=len(events),
        coverage=last_coverage(files, series),
        damaged=files.damaged + [why for n in sorted(results)
                                 if (why := files.result_problem(results[n])) is not None],
    )


def _gains(questions: list[_Asked], series: list[EvalPoint], total_calls: int,
           window: int, group_of: Callable[[str], str | None]) -> list[QuestionGain]:
    out = []
    for i, q in enumerate(questions):
        e = q.event
        geo0, min0 = q.best
        _, after = followed(series, q.evals, window)
        geo1 = _max(geo0, _value(best_on(after, _geomean), _geomean))
        min1 = _max(min0, _value(best_on(after, _min), _min))
        nxt = questions[i + 1].calls if i + 1 < len(questions) else total_calls
        bank_id = e.bank_id or None
        group = (group_of(bank_id) or "unknown") if bank_id else "free_text"
        out.append(QuestionGain(
            seq=e.seq, t=_num(e.t) or 0.0, text=e.text, bank_id=bank_id, group=group,
            trigger=e.trigger, source=e.source if e.source in ("human", "auto") else "human",
            evaluations_before=q.evals, tool_calls_after=nxt - q.calls,
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
