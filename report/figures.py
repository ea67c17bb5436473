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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from socratic.report.churn import Churn, churn
from socratic.report.source import SessionFiles

DEFAULT_WINDOW = 5  # the harness's plateau window: did the question end a plateau?
EXPLANATION_ENDS = {"tool.call", "eval.start", "eval.end", "question", "stophook",
                    "campaign.end"}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


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
    best_evaluation: int | None
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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["churn"] = self.churn.to_dict()
        return d


def questions_mode(start: dict[str, Any], config: dict[str, Any]) -> str:
    """none | auto | human: as the fleet names it when it records one; else auto-questions
    on means auto, an attached campaign waiting for a human means human."""
    named = start.get("questions")
    if isinstance(named, str) and named:
        return named
    auto = start.get("auto_questions")
    if not isinstance(auto, bool):  # older logs: the settings the campaign was started with
        auto = config.get("auto_questions") is True
    if auto:
        return "auto"
    if config.get("wait_for_human"):
        return "human"
    return "none"


def _failure_what(summary: dict[str, Any], failing: list[str]) -> str:
    if summary.get("error"):
        return f"evaluator: {summary['error']}"
    if summary.get("build_ok") is False:
        return "build failed"
    if summary.get("bans_ok") is False:
        return "banned library"
    if failing:
        more = f", +{len(failing) - 4} more" if len(failing) > 4 else ""
        return f"{len(failing)} scenario(s) incorrect ({', '.join(failing[:4])}{more})"
    return "not correct"


def derive(files: SessionFiles, group_of: Callable[[str], str | None],
           window: int = DEFAULT_WINDOW) -> SessionReport:
    """Everything the report says about one session. `group_of` maps a bank id to its group
    (None: not in the bank)."""
    events = files.events
    start = next(e for e in events if e["type"] == "campaign.start")
    raw_goal = start.get("goal") if isinstance(start.get("goal"), dict) else {}
    against = raw_goal.get("against") if isinstance(raw_goal.get("against"), str) else "baseline"
    goal_min = _num(raw_goal.get("min_speedup"))
    goal = {"min_speedup": goal_min, "against": against}
    against_baseline = against == "baseline"
    scen = start.get("scenarios")
    goal_set = scen.get("set") if isinstance(scen, dict) and isinstance(scen.get("set"), str) \
        else None

    tool_calls = turns = 0
    cost = 0.0
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    shas: dict[int, str] = {}
    rows: dict[int, list[dict[str, Any]]] = {}
    series: list[EvalPoint] = []
    results: dict[int, str] = {}
    questions: list[dict[str, Any]] = []     # the event plus where it stood
    triggers: dict[str, int] = {}
    failures: list[Failure] = []
    explaining: Failure | None = None
    said: list[str] = []
    best_geo = best_min = None
    goal_at: tuple[float, int, int] | None = None   # t, tool calls, evaluations
    end: dict[str, Any] | None = None
    last_t = 0.0

    for e in events:
        kind = e["type"]
        t = _num(e.get("t"))
        if t is not None:
            last_t = max(last_t, t)
        if explaining is not None:
            if kind == "agent.text" and isinstance(e.get("text"), str):
                said.append(e["text"])
            elif kind in EXPLANATION_ENDS and "".join(said).strip():
                explaining.explanation = "".join(said).strip()
                explaining, said = None, []
            elif kind == "eval.end":
                explaining, said = None, []  # no words before the next evaluation
        if kind == "tool.call":
            tool_calls += 1
        elif kind == "usage":
            turns += 1
            cost += _num(e.get("cost_usd")) or 0.0
            for key, src in (("input", "input_tokens"), ("output", "output_tokens"),
                             ("cache_read", "cache_read"), ("cache_write", "cache_write")):
                tokens[key] += int(_num(e.get(src)) or 0)
        elif kind == "eval.start" and _int(e.get("n")):
            rows[e["n"]] = []  # an evaluation cut by a kill runs again under its n
            if isinstance(e.get("candidate_sha"), str):
                shas[e["n"]] = e["candidate_sha"]
        elif kind == "eval.scenario" and _int(e.get("n")):
            rows.setdefault(e["n"], []).append(
                {"scenario": str(e.get("scenario")), "correct": e.get("correct") is True,
                 "speedup": _num(e.get("speedup"))})
        elif kind == "eval.end":
            n = e.get("n") if _int(e.get("n")) else len(series) + 1
            summary = e.get("summary") if isinstance(e.get("summary"), dict) else {}
            sha = e.get("candidate_sha") if isinstance(e.get("candidate_sha"), str) \
                else shas.get(n, "")
            set_name = e.get("set") if isinstance(e.get("set"), str) else None
            on_goal = goal_set is None or set_name is None or set_name == goal_set
            correct = summary.get("all_correct") is True
            geo, mn = _num(summary.get("geomean_speedup")), _num(summary.get("min_speedup"))
            if correct and on_goal:
                best_geo, best_min = _max(best_geo, geo), _max(best_min, mn)
                if (goal_at is None and against_baseline and goal_min is not None
                        and mn is not None and mn >= goal_min):
                    goal_at = (t or last_t, tool_calls, len(series) + 1)
            series.append(EvalPoint(n, _int(e.get("seq")), t or last_t, set_name, on_goal,
                                    correct, geo, mn, sha, _str(e.get("source")), tool_calls,
                                    best_geo, best_min))
            if isinstance(e.get("result"), str):
                results[n] = e["result"]
            if not correct:
                listed = summary.get("failing")
                failing = [str(x) for x in (listed if isinstance(listed, list) else [])] or [
                    str(r["scenario"]) for r in rows.get(n, []) if not r["correct"]]
                explaining, said = Failure(n, _int(e.get("seq")), t or last_t, set_name,
                                           _failure_what(summary, failing), failing, None), []
                failures.append(explaining)
        elif kind == "question":
            questions.append({"e": e, "evals": len(series), "calls": tool_calls,
                              "best": (best_geo, best_min)})
        elif kind == "trigger":
            k = str(e.get("kind"))
            triggers[k] = triggers.get(k, 0) + 1
        elif kind == "stophook" and e.get("met") is True and goal_at is None:
            goal_at = (t or last_t, tool_calls, len(series))
        elif kind == "campaign.end":
            end = e
    if explaining is not None and "".join(said).strip():
        explaining.explanation = "".join(said).strip()

    gains = _gains(questions, series, tool_calls, window, group_of)
    by_trigger: dict[str, int] = {}
    by_group: dict[str, int] = {}
    for g in gains:
        key = g.trigger or "none"
        by_trigger[key] = by_trigger.get(key, 0) + 1
        by_group[g.group] = by_group.get(g.group, 0) + 1

    best = _best(series)
    best_rows = rows.get(best.n, []) if best else []
    if best and not best_rows:
        best_rows = _rows_from_result(files.eval_result(results.get(best.n, "")))

    sources: dict[str, str | None] = {}
    for p in series:
        if p.sha and p.sha not in sources:
            sources[p.sha] = files.candidate(p.sha)
    c = churn([sources.get(p.sha) for p in series])
    n_q = len(gains)
    return SessionReport(
        session=files.name, path=str(files.dir),
        task=start.get("task") if isinstance(start.get("task"), str) else None,
        agent=_str(start.get("agent")) or "builtin",
        model=start.get("model") if isinstance(start.get("model"), str) else None,
        questions_mode=questions_mode(start, files.config),
        end_reason=(_str(end.get("reason")) or "?") if end else None,
        started=_str(start.get("ts")),
        duration_s=round((_num(end.get("t")) if end else None) or last_t, 3),
        turns=turns, tool_calls=tool_calls, evaluations=len(series),
        evaluations_correct=sum(1 for p in series if p.correct),
        evaluations_incorrect=sum(1 for p in series if not p.correct),
        goal=goal, goal_set=goal_set,
        best_geomean=best_geo, best_min=best_min,
        best_evaluation=best.n if best else None, best_scenarios=best_rows,
        goal_met=goal_at is not None or bool(end and end.get("reason") == "goal_met"),
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
    )


def _gains(questions: list[dict[str, Any]], series: list[EvalPoint], total_calls: int,
           window: int, group_of: Callable[[str], str | None]) -> list[QuestionGain]:
    out = []
    for i, q in enumerate(questions):
        e = q["e"]
        geo0, min0 = q["best"]
        after = [p for p in series[q["evals"]:] if p.goal_set][:window]
        geo1, min1 = geo0, min0
        for p in after:
            if p.correct:
                geo1, min1 = _max(geo1, p.geomean), _max(min1, p.min)
        nxt = questions[i + 1]["calls"] if i + 1 < len(questions) else total_calls
        bank_id = e.get("bank_id") if isinstance(e.get("bank_id"), str) and e["bank_id"] else None
        group = (group_of(bank_id) or "unknown") if bank_id else "free_text"
        source = e.get("source") if e.get("source") in ("human", "auto") else "human"
        trigger = e.get("trigger") if isinstance(e.get("trigger"), str) else None
        out.append(QuestionGain(
            seq=_int(e.get("seq")), t=_num(e.get("t")) or 0.0, text=str(e.get("text", "")),
            bank_id=bank_id, group=group, trigger=trigger, source=source,
            evaluations_before=q["evals"], tool_calls_after=nxt - q["calls"],
            window_evaluations=len(after),
            best_geomean_before=geo0, best_geomean_after=geo1, geomean_gain=_rel(geo1, geo0),
            best_min_before=min0, best_min_after=min1, min_gain=_rel(min1, min0)))
    return out


def _best(series: list[EvalPoint]) -> EvalPoint | None:
    good = [p for p in series if p.correct and p.goal_set]
    if not good:
        return None
    return max(good, key=lambda p: (p.min or 0.0, p.geomean or 0.0))


def _rows_from_result(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    out = []
    for r in (result or {}).get("scenarios") or []:
        if isinstance(r, dict):
            out.append({"scenario": str(r.get("id")), "correct": r.get("correct") is True,
                        "speedup": _num(r.get("speedup"))})
    return out
