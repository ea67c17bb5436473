"""A campaign's evaluations as records: one `Evaluation` (its number, candidate, set and
result), the `History` of them, the goal predicate judged on one, and the compact table
the agent sees. Running the evaluator is evaluator_process.py's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from socratic.contracts import (
    EvalResult,
    Failing,
    Goal,
    RetractPart,
    ScenarioResult,
    retracted_on,
)


@dataclass
class Evaluation:
    n: int
    sha: str
    set: str | None
    result: EvalResult | None
    exit_code: int
    path: str = ""                       # saved result, relative to the session
    error: str | None = None             # the evaluator did not produce a result
    seconds: float = 0.0
    stderr_tail: str = ""
    notes: list[str] = field(default_factory=list)  # harness notes shown with the table
    retracted: RetractPart | None = None         # eval.retract's part (all | comparisons), if any
    result_sha: str = ""                 # sha256 of the saved result's bytes (eval.end)
    imported: bool = False               # recorded by `hook evaluate --import`

    @property
    def scenarios(self) -> list[ScenarioResult]:
        return self.result.scenarios if self.result else []

    @property
    def build_ok(self) -> bool:
        return self.result is not None and self.result.build.ok

    @property
    def bans_ok(self) -> bool:
        return self.result is None or self.result.bans.ok

    @property
    def all_correct(self) -> bool:
        if self.result is None or not self.build_ok or not self.bans_ok:
            return False
        return self.result.summary.all_correct and bool(self.scenarios)

    @property
    def failed_check(self) -> bool:
        """The candidate failed a check (build, ban, or a scenario's correctness); an
        evaluator that gave no result at all (it failed to start) says nothing of it."""
        return self.result is not None and not self.all_correct

    def counts_on(self, against: str) -> bool:
        """Its figures against `against` (baseline or a comparison) may be used: it is not
        retracted on those terms."""
        return not retracted_on(self.retracted, against)

    def on_terms(self, against: str) -> tuple[float | None, float | None]:
        """(min, geomean) speedup against the baseline or a comparison timed in the same
        evaluation: what a goal against it judges; (None, None) where those figures are
        missing or retracted."""
        if self.result is None or not self.counts_on(against):
            return None, None
        if against == "baseline":
            return self.metric("min_speedup"), self.metric("geomean_speedup")
        return self.result.min_and_geomean(against)

    def metric(self, key: str) -> float | None:
        """`geomean_speedup` or `min_speedup` of the summary."""
        v = getattr(self.result.summary, key) if self.result else None
        return float(v) if isinstance(v, (int, float)) else None

    def summary(self) -> dict[str, Any]:
        """eval.end's summary (socratic.contracts.EvalSummary): the evaluator's, with the
        harness's verdict."""
        s = self.result.summary.to_dict() if self.result else {}
        s["all_correct"] = self.all_correct
        s["build_ok"] = self.build_ok
        s["bans_ok"] = self.bans_ok
        s["exit_code"] = self.exit_code
        if self.error:
            s["error"] = self.error
        return s

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n, "sha": self.sha, "set": self.set, "path": self.path,
                "exit_code": self.exit_code, "summary": self.summary()}


def judge(ev: Evaluation, goal: Goal) -> tuple[bool, list[Failing]]:
    """The goal predicate over every scenario: (met, failing rows)."""
    failing: list[Failing] = []

    def short(what: str, detail: str) -> Failing:   # a whole-evaluation reason, not a scenario's
        return Failing(scenario=what, correct=False, speedup=None, goal=goal.min_speedup, detail=detail)
    if ev.result is None:
        failing.append(short("(evaluator)", "the evaluator failed (no result; not the candidate's "
                                            f"fault): {ev.error or 'no result'}"))
        return False, failing
    if not ev.build_ok:
        failing.append(short("(build)", ev.result.build.error or "build failed"))
    if not ev.bans_ok:
        failing.append(short("(bans)", "; ".join(f"{h.library} at {h.where}"
                                                  for h in ev.result.bans.hits[:3]) or "banned library"))
    if not ev.scenarios and not failing:
        failing.append(short("(none)", "no scenarios were measured"))
    gone = comparison_unavailable(ev, goal)
    if gone:
        failing.append(short(f"({goal.against})", gone))
    for row in ev.result.hidden or []:   # correct always; fast too under a goal with hidden = true
        shape = ", ".join(f"{k}={v}" for k, v in row.params.items() if k in _SHAPE_KEYS or len(row.params) < 8)
        if not row.correct:
            failing.append(Failing(scenario=row.id, correct=False, speedup=None, goal=goal.min_speedup,
                                   detail=f"INCORRECT on a hidden scenario ({shape}): "
                                          f"{(row.failures or ['failed'])[0][:200]} (the next evaluation draws "
                                          "other hidden shapes)"))
        elif goal.hidden and not gone:
            slow = hidden_too_slow(row, goal, shape)
            if slow:
                failing.append(slow)
    for row in ev.scenarios:
        sp = row.speedup_against(goal.against)
        if gone and row.correct:
            continue  # one line above says why no scenario has the comparison's number
        if not row.correct or sp is None or sp < goal.min_speedup:
            detail = None
            if row.correct and sp is None and goal.against != "baseline":
                detail = (f"correct, but {goal.against} was not timed on this scenario "
                          f"(the goal needs its time)")
            failing.append(Failing(scenario=row.id, correct=row.correct, speedup=sp,
                                   goal=goal.min_speedup, detail=detail))
    return not failing, failing


def hidden_too_slow(row: ScenarioResult, goal: Goal, shape: str) -> Failing | None:
    """A correct hidden draw below a goal that holds on hidden draws (`hidden = true`):
    named with its shape and ratio, and the reminder that the draws change every time."""
    sp = row.speedup_against(goal.against)
    if sp is not None and sp >= goal.min_speedup:
        return None
    vs = "the baseline" if goal.against == "baseline" else goal.against
    ratio = (f"{sp:.3f}x vs {vs} (goal >= {goal.min_speedup:g}x)" if sp is not None
             else f"not timed against {vs} (the goal needs its time)")
    return Failing(scenario=row.id, correct=True, speedup=sp, goal=goal.min_speedup,
                   detail=f"too slow on a hidden scenario ({shape}): {ratio}. Hidden draws "
                          "change every evaluation, so the goal is met only by a kernel fast "
                          "across the task's whole space, not by tuning this one shape "
                          "(an evaluation of the set `space:64` shows where it is slow)")


def standing_failures(ev: Evaluation, goal: Goal) -> list[Failing]:
    """What an evaluation found against its source that a later evaluation of the same source
    does not undo: a scenario it got wrong (listed or hidden), and a hidden draw below the
    goal (`hidden = true`). Each later draw is another shape of the space, so a pass there
    answers none of these; a listed scenario's speed is measured again, so the latest counts."""
    if ev.result is None:
        return []
    hidden = {row.id for row in ev.result.hidden or []}
    failing = [f for f in judge(ev, goal)[1]   # wrong somewhere (not a whole-evaluation reason), or a slow draw
               if (not f.correct and not f.scenario.startswith("(")) or (f.correct and f.scenario in hidden)]
    return [Failing(scenario=f.scenario, correct=f.correct, speedup=f.speedup, goal=f.goal,
                    detail=f"in evaluation {ev.n} of this same source: {f.detail or 'below the goal'}")
            for f in failing]


# the values that name a hidden scenario's shape in a refusal (the rest are derived)
_SHAPE_KEYS = ("batch", "seqlen_q", "seqlen_k", "heads_q", "heads_kv", "head_dim", "causal", "rows", "cols")


def comparison_unavailable(ev: Evaluation, goal: Goal) -> str | None:
    """Why the goal's comparison could not run in this evaluation (one line), or None."""
    if goal.against == "baseline" or ev.result is None:
        return None
    reason = (ev.result.comparisons_unavailable or {}).get(goal.against)
    if reason is None:
        return None
    return (f"the goal is judged against {goal.against}, which could not run on this machine "
            f"({str(reason).splitlines()[0][:200] if str(reason).strip() else 'no reason given'}): "
            f"no scenario can meet it here; install it, or continue with `socratic run "
            f"--resume SESSION --goal-against baseline --goal-min-speedup X`")


def describe_failing(failing: list[Failing], goal: Goal) -> str:
    vs = "baseline" if goal.against == "baseline" else goal.against
    lines = []
    for f in failing:
        if f.detail:
            lines.append(f"- {f.scenario}: {f.detail}")
            continue
        sp_s = f"{f.speedup:.3f}x" if f.speedup is not None else "n/a"
        state = "correct" if f.correct else "INCORRECT"
        lines.append(f"- {f.scenario}: {state}, speedup {sp_s} vs {vs} "
                     f"(goal >= {goal.min_speedup:g}x)")
    return "\n".join(lines)


def _fmt(v: Any, spec: str, none: str = "-") -> str:
    return format(v, spec) if isinstance(v, (int, float)) else none


def compact_table(ev: Evaluation, goal: Goal, max_rows: int = 60) -> str:
    """What the agent sees: one line per scenario, then the summary and the goal verdict."""
    head = f"evaluation #{ev.n}  set={ev.set or 'default'}  candidate sha256={ev.sha[:12]}"
    if ev.result is None:
        tail = ev.stderr_tail.strip()
        extra = f"\n{tail[-2000:]}" if tail and tail not in (ev.error or "") else ""
        return f"{head}\nthe evaluator produced no result (exit {ev.exit_code}): {ev.error}{extra}"
    r = ev.result
    build = r.build
    lines = [head]
    lines.append(f"build: {'ok' if build.ok else 'FAILED'}"
                 + (" (cached)" if build.cached else "")
                 + f"   bans: {'ok' if ev.bans_ok else 'HIT'}")
    for res in build.resources[:4]:
        lines.append(f"  kernel {res.kernel}: {res.registers} regs, "
                     f"{res.spill_stores}/{res.spill_loads} spill st/ld, "
                     f"{res.shared_bytes} B smem")
    if build.error:
        lines.append(f"build error: {build.error}")
    elif not build.ok:
        lines.append("build log (tail):\n" + build.log[-3000:])
    if not ev.bans_ok:
        for h in r.bans.hits[:5]:
            lines.append(f"  ban: {h.library} ({h.layer}) at {h.where}: {h.detail}")
    rows = ev.scenarios
    if rows:
        w = max(8, min(28, max(len(x.id) for x in rows)))
        # the ratio column is the goal's: against the baseline, or against a comparison
        vs = "x base" if goal.against == "baseline" else f"x {goal.against}"[:8]
        lines.append(f"{'scenario':<{w}}  ok   max_err   err/base  base_ms    cand_ms    "
                     f"{vs:<7}  +-      bound%")
        for row in rows[:max_rows]:
            sp = row.speedup_against(goal.against)
            bf = row.bound_fraction
            lines.append(
                f"{row.id:<{w}}  {'yes' if row.correct else 'NO ':<3}  "
                f"{_fmt(row.err, '.2e'):<8}  {_fmt(row.err_ratio, '.2f'):<8}  "
                f"{_fmt(row.baseline_ms, '.4f'):<9}  {_fmt(row.candidate_ms, '.4f'):<9}  "
                f"{_fmt(sp, '.3f'):<7}  {_fmt(row.spread, '.3f'):<6}  "
                f"{_fmt(bf * 100 if bf is not None else None, '.0f'):<4}"
                + ("  BELOW BOUND" if row.below_bound else ""))
            for f in row.failures[:3]:
                lines.append(f"    failure: {f}"[:300])
            if row.error:
                lines.append(f"    error: {row.error}"[:300])
        if len(rows) > max_rows:
            lines.append(f"... {len(rows) - max_rows} more scenarios (full result saved)")
    s = r.summary
    vs_others = "".join(f", {_fmt(v, '.3f')}x vs {name}"
                        for name, v in sorted((s.geomean_vs or {}).items()))
    lines.append(
        f"summary: {s.n_correct}/{s.n} correct, geomean {_fmt(s.geomean_speedup, '.3f')}x vs "
        f"baseline (min {_fmt(s.min_speedup, '.3f')}x, worst {s.worst_scenario})"
        + (f"; geomean{vs_others[1:]}" if vs_others else ""))
    if r.hidden_summary:
        hs = r.hidden_summary
        lines.append(f"hidden scenarios (drawn for this evaluation, shown now): {hs.n_correct}/{hs.n} correct"
                     + (f", geomean {hs.geomean_speedup:.3f}x" if hs.geomean_speedup else ""))
        for row in r.hidden or []:
            sp = row.speedup_against(goal.against) if goal.hidden and row.correct else None
            lines.append(f"  {row.id}: {'correct' if row.correct else 'INCORRECT'}"
                         + ("" if row.correct else f": {(row.failures or ['failed'])[0][:200]}")
                         + (f", {sp:.3f}x vs {goal.against}" if sp is not None else "")
                         + (f" ▼ below the goal ({goal.min_speedup:g}x)"
                            if sp is not None and goal.min_speedup is not None
                            and sp < goal.min_speedup else ""))
    if r.coverage is not None:   # a space evaluation: the kernel over the task's space
        from socratic.coverage import lines as coverage_lines

        lines += coverage_lines(r.coverage)
    met, failing = judge(ev, goal)
    lines.append(f"goal ({goal.describe()}): " + ("MET" if met else f"not met, {len(failing)} "
                                                   "scenario(s) short"))
    if ev.path:
        lines.append(f"full result: {ev.path}")
    return "\n".join(lines)


@dataclass
class History:
    """Every evaluation of the campaign, in order, and the cache by (sha, set)."""

    evals: list[Evaluation] = field(default_factory=list)

    def add(self, ev: Evaluation) -> None:
        self.evals.append(ev)

    def find(self, sha: str, set_name: str | None,
             against: str = "baseline") -> Evaluation | None:
        """The latest evaluation of this source on this set, unless retracted on the terms of
        `against` (the goal check then needs a fresh one)."""
        for ev in reversed(self.evals):
            if ev.sha == sha and ev.set == set_name and ev.result is not None \
                    and ev.counts_on(against):
                return ev
        return None

    def all_of(self, sha: str, set_name: str | None, against: str = "baseline") -> list[Evaluation]:
        """Every evaluation of this source on this set with a result, oldest first (those
        retracted on the terms of `against` left out)."""
        return [ev for ev in self.evals if ev.sha == sha and ev.set == set_name and ev.result is not None
                and ev.counts_on(against)]

    def best(self, goal: Goal | None = None, goal_set: str | None = None) -> Evaluation | None:
        """The best correct evaluation: highest min speedup, then geomean. With a goal,
        on the goal's terms: its scenario set only, and speedups against what the goal is
        judged against (a campaign against FA3 is best where it is closest to FA3, not
        where it is furthest ahead of the baseline). A retracted evaluation is not a best on
        the terms it was retracted on."""
        against = goal.against if goal is not None else "baseline"
        good = [e for e in self.evals if e.all_correct and e.counts_on(against)
                and (goal_set is None or e.set == goal_set)]
        if not good:
            return None

        def on_goal(e: Evaluation) -> tuple[float, float]:
            mn, geo = e.on_terms(against)
            return mn or 0.0, geo or 0.0
        return max(good, key=on_goal)

    def __len__(self) -> int:
        return len(self.evals)

    def table(self, last: int = 25) -> str:
        lines = ["#    sha           set        correct  geomean  min"]
        for e in self.evals[-last:]:
            lines.append(f"{e.n:<4} {e.sha[:12]}  {e.set or 'default'!s:<9}  "
                         f"{'yes' if e.all_correct else 'no ':<7}  "
                         f"{_fmt(e.metric('geomean_speedup'), '.3f'):<7}  "
                         f"{_fmt(e.metric('min_speedup'), '.3f')}"
                         + (f"  (retracted: {e.retracted})" if e.retracted else ""))
        return "\n".join(lines)

