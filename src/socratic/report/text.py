"""The report as words: a short summary (terminal, TUI) and a full Markdown document."""

from __future__ import annotations

import math
from typing import Any

from socratic.contracts import number_runs
from socratic.report import coverage as space
from socratic.report.compare import DIMENSIONS, MEDIANS
from socratic.report.figures import QuestionGain, SessionReport
from socratic.report.model import Report


def vs_goal(r: SessionReport) -> str:
    """' vs fa3' when the goal (and so the best figures) is against a comparison."""
    against = (r.goal or {}).get("against") or "baseline"
    return "" if against == "baseline" else f" vs {against}"

def x(v: float | None) -> str:
    return f"{v:.3f}x" if v is not None else "-"


def pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.1%}" if signed else f"{v:.0%}"


def duration(s: float | None) -> str:
    if s is None:
        return "-"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.{digits}f}"


def counts(d: dict[str, int]) -> str:
    ranked = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in ranked) or "-"


def one_line(text: str | None, width: int) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= width else t[: width - 1] + "…"


def goal_text(r: SessionReport, word: str = "goal ") -> str:
    want = r.goal.get("min_speedup")
    against = r.goal.get("against", "baseline")
    head = f"{word}>= {want}x vs {against}" if want is not None else "goal"
    if not r.goal_met:
        claimed = r.end_reason == "goal_met" or any("goal" in c for c in r.contradictions)
        return f"{head}: NOT met" + (" (the log claims it; see the contradictions)"
                                     if claimed and r.contradictions else "")
    if r.time_to_goal_s is None:
        return f"{head}: met"
    return (f"{head}: met after {duration(r.time_to_goal_s)}, {r.tool_calls_to_goal} tool "
            f"calls, {r.evaluations_to_goal} evaluations")


def retraction_lines(r: SessionReport) -> list[str]:
    """Each retraction (`socratic retract`): which evaluations, on what terms, and why."""
    taken: dict[tuple[str, str], list[int]] = {}
    for p in r.series:
        if p.retracted:
            taken.setdefault((p.retracted, p.retracted_why or ""), []).append(p.n)
    return [f"evaluation(s) {number_runs(ns)} retracted"
            + (" (comparisons only)" if part == "comparisons" else "") + f": {why}"
            for (part, why), ns in taken.items()]


def record_text(r: SessionReport) -> str:
    """The log's chain in words (socratic.chain): verified, unverified, BROKEN at line N."""
    return str(r.record.get("text") or "unverified")


def imported_text(r: SessionReport) -> str:
    return f", {r.imported} imported" if r.imported else ""


def question_label(g: QuestionGain) -> str:
    return g.bank_id or f'"{one_line(g.text, 50)}"'


def _sessions(r: SessionReport) -> str:
    """The campaign's time; several sessions: their own time, and the span with the gaps."""
    if r.sessions <= 1 or r.active_s is None:
        return duration(r.duration_s)
    return (f"{r.sessions} sessions: {duration(r.active_s)} of campaign time over "
            f"{duration(r.duration_s)}")


def _from(n: int | None) -> str:
    return f" (#{n})" if n is not None else ""


def summary_lines(r: SessionReport) -> list[str]:
    """A session in a dozen lines (the default terminal output and the TUI's summary)."""
    ended = r.end_reason or "not ended"
    model = f" ({r.model})" if r.model else ""
    lines = [
        f"{r.session}: {r.task or '?'}, agent {r.agent}{model}, questions {r.questions_mode}, "
        f"{ended}",
        f"  {_sessions(r)}, {r.turns} turns, {r.tool_calls} tool calls, "
        f"{r.evaluations} evaluations ({r.evaluations_correct} correct, "
        f"{r.evaluations_incorrect} incorrect{imported_text(r)})",
        f"  best on {r.goal_set or 'the goal set'}{vs_goal(r)}: geomean {x(r.best_geomean)}"
        + _from(r.best_geomean_evaluation) + f", min {x(r.best_min)}"
        + _from(r.best_min_evaluation)
        + (f"; best evaluation (min, then geomean) #{r.best_evaluation}"
           if r.best_evaluation is not None else ""),
        *([f"  ! {r.end_detail}"] if r.end_detail else []),
        *([f"  ! confined: false ({r.confined_detail}): the agent could reach the session's "
           f"files, so the record is only as good as its honesty"] if r.confined is False else []),
        *[f"  {line}" for line in retraction_lines(r)],
        f"  {goal_text(r)}",
        f"  record: {record_text(r)}",
        *[f"  ! contradiction: {c}" for c in r.contradictions],
        *[f"  ! damaged: {d}" for d in r.damaged],
        f"  tokens {r.tokens['total']:,} (input {r.tokens['input']:,}, output "
        f"{r.tokens['output']:,}, cache read {r.tokens['cache_read']:,}, cache write "
        f"{r.tokens['cache_write']:,}), cost {cost(r)}",
        f"  questions {r.questions} (auto {r.questions_auto}, human {r.questions_human})"
        + (f", {r.tool_calls_per_question:.1f} tool calls per question"
           if r.tool_calls_per_question is not None else ""),
        f"    by trigger: {counts(r.questions_by_trigger)}",
        f"    by group: {counts(r.questions_by_group)}",
    ]
    c = r.churn
    lines.append(f"  churn {pct(c.share)}" + (
        f" ({c.readded} of {c.added} added lines had been deleted before; "
        f"{c.candidates} candidates" + (f", {c.missing} not kept" if c.missing else "") + ")"
        if c.share is not None else f" (needs 2 kept candidates; {c.candidates} found)"))
    covered = space.summary_line(r.coverage)
    if covered:
        lines.append(f"  {covered}")
    lines.append(f"  correctness failures {len(r.correctness_failures)}")
    for f in r.correctness_failures:
        lines.append(f"    #{f.n}: {f.what}")
        said = one_line(f.explanation, 100) if f.explanation else "(no words)"
        lines.append(f"      then: {said}")
    if r.question_gains:
        lines.append(f"  questions (event, source, trigger): best geomean, min up how much "
                     f"within the next {r.window} evaluations")
        for g in r.question_gains:
            lines.append(f"    {'@' + str(g.seq):<6} {g.source:<5} {g.trigger or '-':<19} "
                         f"{question_label(g)}: {pct(g.geomean_gain, True)}, "
                         f"{pct(g.min_gain, True)}")
    return lines


def cost(r: SessionReport) -> str:
    return f"${r.cost_usd:.2f}" if r.cost_known else "unknown (no priced model turns)"


def money(v: float | None) -> str:
    return f"${v:.2f}" if v is not None else "-"


DIMENSION_WORDS = {"questions_mode": "questions mode", "agent": "agent"}


def best_text(best: dict[str, Any] | None) -> str:
    if best is None:
        return "none (no correct evaluation of a campaign that counts)"
    return (f"{best['session']} (min {x(best['best_min'])}, geomean {x(best['best_geomean'])}"
            + (", goal met" if best["goal_met"] else "") + ")")


def by_lines(report: Report) -> list[str]:
    """The fleet's comparisons: by questions mode and by agent, each across the other."""
    lines = []
    for dim in DIMENSIONS:
        entries = report.by.get(dim) or []
        lines.append(f"by {DIMENSION_WORDS[dim]} (medians over the campaigns that reached "
                     f"the goal; cost over those that priced their turns)")
        for g in entries:
            m = g["medians"]
            lines.append(
                f"  {g['task']} / {g[dim]}: {g['n']} sessions, goal met {g['goal_met']}"
                + (f", no result {g['no_result']} (hooks silent or agent exited)"
                   if g["no_result"] else "")
                + f"; best {best_text(g['best'])}; to the goal: tool calls "
                f"{num(m['tool_calls_to_goal'])}, time {duration(m['time_to_goal_s'])}; cost "
                f"{money(m['cost_usd'])}" + (f" ({g['cost_known']} of {g['n']} priced)"
                                             if g["cost_known"] < g["n"] else ""))
    return lines


def comparison_lines(report: Report) -> list[str]:
    lines = ["groups (medians): task / questions / agent"]
    for g in report.groups:
        m = g["medians"]
        lines.append(f"  {g['task']} / {g['questions_mode']} / {g['agent']}: {g['n']} sessions, "
                     f"goal met {g['goal_met']}; evaluations {num(m['evaluations'])}, "
                     f"questions {num(m['questions'])}, tool calls {num(m['tool_calls'])}, "
                     f"best geomean {x(m['best_geomean'])}, best min {x(m['best_min'])}, "
                     f"churn {pct(m['churn'])}, cost {money(m['cost_usd'])}")
    return lines + by_lines(report)


def text(report: Report) -> str:
    blocks = ["\n".join([*summary_lines(r), *space.text_lines(r.coverage)]) for r in report.sessions]
    if len(report.sessions) > 1:
        blocks.append("\n".join(comparison_lines(report)))
    return "\n\n".join(blocks) + "\n"


# ---------------------------------------------------------------- Markdown

MEDIAN_LABELS = {"evaluations": "evaluations", "questions": "questions",
                 "tool_calls": "tool calls", "tool_calls_per_question": "tool calls per question",
                 "turns": "turns", "duration_s": "duration", "best_geomean": "best geomean",
                 "best_min": "best min", "time_to_goal_s": "time to goal",
                 "tool_calls_to_goal": "tool calls to goal", "churn": "churn",
                 "cost_usd": "cost"}
GROUP_HEAD = ["task", "questions mode", "agent", "sessions", "goal met"] + [
    MEDIAN_LABELS[m] for m in MEDIANS]


def group_rows(report: Report) -> list[list[Any]]:
    """One row per group: its key, then the median of each figure, formatted."""
    def fmt(name: str, v: float | None) -> str:
        if name in ("duration_s", "time_to_goal_s"):
            return duration(v)
        if name in ("best_geomean", "best_min"):
            return x(v)
        if name == "churn":
            return pct(v)
        if name == "cost_usd":
            return f"${v:.2f}" if v is not None else "-"
        return num(v)
    return [[g["task"], g["questions_mode"], g["agent"], g["n"], g["goal_met"]]
            + [fmt(m, g["medians"][m]) for m in MEDIANS] for g in report.groups]


def by_head(dim: str) -> list[str]:
    return ["task", DIMENSION_WORDS[dim], "sessions", "goal met", "no result", "best",
            "tool calls to goal", "time to goal", "cost", "priced"]


def by_rows(report: Report, dim: str) -> list[list[Any]]:
    """One row per task and value of `dim`: the best campaign on the goal's terms, medians
    of tool calls and time to the goal, cost over the campaigns that priced their turns."""
    return [[g["task"], g[dim], g["n"], g["goal_met"], g["no_result"], best_text(g["best"]),
             num(g["medians"]["tool_calls_to_goal"]), duration(g["medians"]["time_to_goal_s"]),
             money(g["medians"]["cost_usd"]), f"{g['cost_known']}/{g['n']}"]
            for g in report.by.get(dim) or []]


def _cell(v: Any) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def md_table(head: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def figure_rows(r: SessionReport) -> list[list[str]]:
    c = r.churn
    return [
        ["task", r.task or "?"], ["agent", f"{r.agent}" + (f" ({r.model})" if r.model else "")],
        ["questions mode", r.questions_mode],
        ["end", (r.end_reason or "not ended") + (f" ({r.end_detail})" if r.end_detail else "")],
        ["started", r.started or "-"], ["duration", _sessions(r)],
        ["turns", str(r.turns)], ["tool calls", str(r.tool_calls)],
        ["evaluations", f"{r.evaluations} ({r.evaluations_correct} correct, "
                        f"{r.evaluations_incorrect} incorrect{imported_text(r)})"],
        [f"best geomean ({r.goal_set or 'goal set'}{vs_goal(r)})",
         x(r.best_geomean) + _from(r.best_geomean_evaluation)],
        [f"best min ({r.goal_set or 'goal set'}{vs_goal(r)})",
         x(r.best_min) + _from(r.best_min_evaluation)],
        ["goal", goal_text(r, word="")],
        ["record", record_text(r)],
        ["contradictions", "; ".join(r.contradictions) or "none"],
        *([["damaged files", "; ".join(r.damaged)]] if r.damaged else []),
        ["tokens", f"{r.tokens['total']:,} (input {r.tokens['input']:,}, output "
                   f"{r.tokens['output']:,}, cache read {r.tokens['cache_read']:,}, "
                   f"cache write {r.tokens['cache_write']:,})"],
        ["cost", cost(r)],
        ["questions", f"{r.questions} (auto {r.questions_auto}, human {r.questions_human})"],
        ["tool calls per question", num(r.tool_calls_per_question)],
        ["questions by trigger", counts(r.questions_by_trigger)],
        ["questions by group", counts(r.questions_by_group)],
        ["churn", pct(c.share) + (f" ({c.readded} of {c.added} added lines)" if c.added else "")],
    ]


def question_rows(r: SessionReport) -> list[list[str]]:
    return [[str(g.seq), g.source, g.trigger or "-", g.bank_id or "(free text)",
             one_line(g.text, 120), f"{x(g.best_geomean_before)} → {x(g.best_geomean_after)}",
             pct(g.geomean_gain, True), f"{x(g.best_min_before)} → {x(g.best_min_after)}",
             pct(g.min_gain, True), str(g.tool_calls_after)] for g in r.question_gains]


QUESTION_HEAD = ["event", "source", "trigger", "bank id", "question", "best geomean",
                 "gain", "best min", "gain", "tool calls after"]
EVAL_HEAD = ["#", "set", "source", "correct", "geomean", "min", "best geomean", "best min",
             "tool calls", "retracted"]


def eval_rows(r: SessionReport) -> list[list[Any]]:
    return [[p.n, p.set or "-", "imported" if p.imported else (p.source or "-"),
             "yes" if p.correct else "no", x(p.geomean), x(p.min),
             x(p.best_geomean), x(p.best_min), p.tool_calls, p.retracted or ""]
            for p in r.series]


def markdown(report: Report) -> str:
    out = ["# socratic report", ""]
    if len(report.sessions) > 1:
        out += ["## Across sessions (medians)", "", md_table(GROUP_HEAD, group_rows(report)), ""]
        for dim in DIMENSIONS:
            out += [f"## By {DIMENSION_WORDS[dim]}", "",
                    md_table(by_head(dim), by_rows(report, dim)), ""]
    for r in report.sessions:
        out += [f"## {r.session}", "", md_table(["figure", "value"], figure_rows(r)), ""]
        out += [f"### Questions (best after the next {r.window} evaluations)", ""]
        out += [md_table(QUESTION_HEAD, question_rows(r)) if r.question_gains else "none", ""]
        out += ["### Correctness failures", ""]
        if not r.correctness_failures:
            out += ["none", ""]
        for f in r.correctness_failures:
            out += [f"- evaluation #{f.n} ({f.set or 'default'}): {f.what}"]
            said = " ".join((f.explanation or "(no words before the next evaluation)").split())
            out += [f"  > {said}", ""]
        out += ["### Evaluations", "", md_table(EVAL_HEAD, eval_rows(r)), ""]
        taken = retraction_lines(r)
        if taken:
            out += [f"- {line}" for line in taken] + [""]
        if r.best_scenarios:
            out += [f"### Best evaluation #{r.best_evaluation}: speedup per scenario", "",
                    *_best_scenarios_table(r.best_scenarios), ""]
        cov = space.coverage_of(r.coverage)
        if cov is not None and r.coverage is not None:
            out += [f"### {space.heading(r.coverage)}", "",
                    f"{cov.n} scenarios drawn from the task's space (seed {cov.seed}), "
                    f"{cov.n_correct}/{cov.n} correct; ratio: its time over the candidate's, "
                    "geomean and min over a cell's correct draws", "",
                    md_table(space.head(cov), space.rows(cov)), "",
                    f"Worst draws (`socratic eval {r.task or 'TASK'} --scenarios ID` runs one again):",
                    "", *[f"- {line}" for line in space.worst_lines(cov)], ""]
    if report.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    return "\n".join(out)


def _best_scenarios_table(rows: list[dict]) -> list[str]:
    """Speedup against the baseline and against each comparison timed in the same run, a
    row per scenario and their geomeans; a comparison that did not run a scenario (torch
    SDPA and a bottom-right causal mask, say) is '-' there and left out of its geomean."""
    names = list(dict.fromkeys(k for s in rows for k in s.get("vs", {})))
    table = [[s["scenario"], "yes" if s["correct"] else "no", x(s["speedup"]),
              *[x(s.get("vs", {}).get(k)) for k in names]] for s in rows]
    if names:
        table.append(["**geomean**", "", x(_geomean([s["speedup"] for s in rows])),
                      *[x(_geomean([s.get("vs", {}).get(k) for s in rows])) for k in names]])
    lines = [md_table(["scenario", "correct", "speedup", *[f"vs {k}" for k in names]], table)]
    if any(s.get("vs", {}).get(k) is None for s in rows for k in names):
        lines += ["", "(-: the comparison did not run that scenario; its geomean is over the "
                  "scenarios it ran)"]
    return lines


def _geomean(values: list) -> float | None:
    vals = [float(v) for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None
