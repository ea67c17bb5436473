"""The five trigger detectors, each on its own, with their thresholds."""

from __future__ import annotations

from socratic.contracts import Comparison, Goal
from socratic.harness.core.config import TriggerConfig
from socratic.harness.core.history import Evaluation, History, judge
from socratic.harness.engine.triggers import (
    CorrectnessFailure,
    DeclaredDone,
    Detectors,
    Plateau,
    Start,
    SuspiciousGain,
    declares_limit,
)
from socratic_doubles.testing import eval_result

_n = 0


def ev(geo: float | None = 1.0, mn: float | None = None, correct: bool = True,
       bound: float = 0.3, sha: str | None = None, build_ok: bool = True) -> Evaluation:
    global _n
    _n += 1
    mn = geo if mn is None else mn
    rows = [{"id": "a", "correct": correct, "speedup": mn, "bound_fraction": bound},
            {"id": "b", "correct": True, "speedup": geo, "bound_fraction": 0.2}]
    result = eval_result(rows, build_ok=build_ok, summary={
        "all_correct": correct and build_ok, "n": 2, "n_correct": 2 if correct else 1,
        "geomean_speedup": geo, "min_speedup": mn, "worst_scenario": "a"})
    return Evaluation(_n, sha or f"sha{_n}", "bench", result, 0 if correct else 1)


def test_start_fires_once():
    s = Start()
    f = s.fire("rmsnorm", "goal")
    assert f and f.kind == "start" and "rmsnorm" in f.reason
    assert s.fire("rmsnorm", "goal") is None


def test_plateau_after_window_without_one_percent():
    p = Plateau(TriggerConfig(plateau_window=5, plateau_min_gain=0.01))
    assert p.on_eval(ev(1.0)) is None             # first correct: the reference
    assert p.on_eval(ev(1.2)) is None             # +20%: improvement resets
    fired = [p.on_eval(ev(x)) for x in (1.205, 1.19, 1.21, 1.2, 1.203)]  # all < +1%
    assert fired[:4] == [None] * 4
    assert fired[4] and fired[4].kind == "plateau" and "1.200x" in fired[4].reason
    # counter restarts: the next four do not fire again
    assert [p.on_eval(ev(1.2)) for _ in range(4)] == [None] * 4


def test_plateau_counts_failures_and_threshold_is_configurable():
    p = Plateau(TriggerConfig(plateau_window=2, plateau_min_gain=0.10))
    p.on_eval(ev(1.0))
    assert p.on_eval(ev(1.05)) is None            # +5% < 10%
    assert p.on_eval(ev(1.0, correct=False)).kind == "plateau"


def test_plateau_needs_a_correct_reference():
    p = Plateau(TriggerConfig(plateau_window=2))
    assert [p.on_eval(ev(1.0, correct=False)) for _ in range(5)] == [None] * 5


def test_suspicious_gain_one_step():
    s = SuspiciousGain(TriggerConfig(suspicious_step=0.25))
    assert s.on_eval(ev(1.0)) is None
    assert s.on_eval(ev(1.2)) is None             # +20%
    f = s.on_eval(ev(1.6))                         # +33% over the previous correct one
    assert f and f.kind == "suspicious_gain" and "+33%" in f.reason
    assert s.on_eval(ev(3.0, correct=False)) is None  # incorrect results are not gains


def test_suspicious_gain_near_bound():
    s = SuspiciousGain(TriggerConfig(suspicious_bound_fraction=0.9))
    f = s.on_eval(ev(1.0, bound=0.95))
    assert f and "a at 95% of its bound" in f.reason
    assert s.on_eval(ev(1.0, bound=0.5)) is None
    # staying near the bound is not news: reported once per scenario, not every evaluation
    assert s.on_eval(ev(1.0, bound=0.96)) is None
    assert s.on_eval(ev(1.0, bound=0.97)) is None


def test_suspicious_gain_below_bound_fires_every_time():
    s = SuspiciousGain(TriggerConfig(suspicious_bound_fraction=0.9))
    for _ in range(2):
        e = ev(1.0, bound=1.2)
        e.scenarios[0].below_bound = True
        f = s.on_eval(e)
        assert f and "a at 120% of its bound (below it)" in f.reason


def test_correctness_failure_needs_the_explanation():
    c = CorrectnessFailure(TriggerConfig(explanation_min_chars=20))
    c.on_eval(ev(1.0, correct=False))
    assert c.on_text("ok") is None                 # too short to be an explanation
    f = c.on_text("The failure comes from the tail of each row: lanes past cols read garbage.")
    assert f and f.kind == "correctness_failure" and "a" in f.reason and "tail" in f.reason
    assert c.on_text("Another long text that is not after a failure at all.") is None


def test_correctness_failure_cleared_by_a_passing_eval():
    c = CorrectnessFailure(TriggerConfig())
    c.on_eval(ev(1.0, build_ok=False))
    c.on_eval(ev(1.0))
    assert c.on_text("x" * 200) is None


def test_correctness_failure_build_failure():
    c = CorrectnessFailure(TriggerConfig(explanation_min_chars=5))
    c.on_eval(ev(1.0, build_ok=False))
    assert "build failed" in c.on_text("a missing semicolon").reason


def test_declared_done_text_and_stop_with_cooldown():
    d = DeclaredDone(TriggerConfig(declared_done_cooldown=1))
    assert d.on_text("Let me try a vectorized load next.", 1) is None
    f = d.on_text("This kernel is now memory-bound, so we are near the limit.", 1)
    assert f and f.kind == "declared_done"
    assert d.on_stop(False, 3, 1) is None          # same evaluation count: cooldown
    f = d.on_stop(False, 3, 2)
    assert f and "3 scenario(s) short" in f.reason
    assert d.on_stop(True, 0, 5) is None           # a stop with the goal met is no declaration


def test_limit_phrases():
    for s in ("I believe we have reached the hardware limit", "It can't be improved further",
              "there is no further room", "this is now near-optimal", "We're done here.",
              "The kernel is close to the DRAM roofline", "nothing left to optimize"):
        assert declares_limit(s), s
    for s in ("Let me check the bound fraction", "Next I will improve the loads",
              "RMSNorm is memory-bound, so bandwidth is what matters here.",
              "Pick the optimal block size by measuring 128 and 256 threads."):
        assert declares_limit(s) is None, s


def test_detectors_replay_fires_nothing_and_keeps_state():
    d = Detectors(TriggerConfig(plateau_window=2))
    for x in (1.0, 1.0):
        assert d.on_eval(ev(x), goal_set=True, replay=True) == []
    assert [f.kind for f in d.on_eval(ev(1.0), goal_set=True)] == ["plateau"]


def test_goal_predicate_every_scenario():
    g = Goal(min_speedup=1.1, against="baseline")
    met, failing = judge(ev(1.2, mn=1.05), g)
    assert not met and [f.scenario for f in failing] == ["a"]
    assert failing[0].speedup == 1.05 and failing[0].goal == 1.1
    met, failing = judge(ev(1.2), g)
    assert met and failing == []
    met, failing = judge(ev(2.0, correct=False), g)
    assert not met and failing[0].correct is False
    met, failing = judge(ev(2.0, build_ok=False), g)
    assert not met and failing[0].scenario == "(build)"


def test_goal_against_comparison():
    e = ev(1.5)
    for r in e.scenarios:
        r.comparisons = {"fa3": Comparison(ms=1.0, speedup=0.9)}
    met, failing = judge(e, Goal(min_speedup=1.0, against="fa3"))
    assert not met and len(failing) == 2 and failing[0].speedup == 0.9


def test_history_best_and_cache():
    h = History()
    a, b = ev(1.1, sha="x"), ev(1.3, sha="y")
    h.add(a)
    h.add(b)
    h.add(ev(5.0, correct=False, sha="z"))
    assert h.best() is b
    assert h.find("x", "bench") is a and h.find("x", "smoke") is None


def test_history_best_on_the_goals_terms():
    """Against FA3, the best evaluation is the one closest to FA3, on the goal's set: not
    the one furthest ahead of the baseline (seen in the H200 campaign: campaign.end named an
    evaluation at 0.83x FA3 as best while one at 0.87x existed)."""
    def with_fa3(e: Evaluation, ratio: float) -> Evaluation:
        for r in e.scenarios:
            r.comparisons = {"fa3": Comparison(ms=1.0, speedup=ratio)}
        return e
    h = History()
    ahead_of_baseline = with_fa3(ev(2.6, mn=1.65), 0.83)
    closer_to_fa3 = with_fa3(ev(2.7, mn=1.62), 0.87)
    smoke = with_fa3(ev(1.2), 1.5)
    smoke.set = "smoke"
    for e in (ahead_of_baseline, closer_to_fa3, smoke):
        h.add(e)
    assert h.best() is ahead_of_baseline           # no goal: against the baseline
    assert h.best(Goal(min_speedup=1.0, against="fa3"), "bench") is closer_to_fa3
    assert h.best(Goal(min_speedup=1.0, against="baseline"), "bench") is ahead_of_baseline
    assert h.best(Goal(min_speedup=1.0, against="fa3"), "full") is None


def with_vs(e: Evaluation, name: str, ratios: dict[str, float]) -> Evaluation:
    for r in e.scenarios:
        r.comparisons = {name: Comparison(ms=1.0, speedup=ratios[r.id])}
    return e


def test_plateau_on_the_goals_terms():
    """Under a goal against FA3, gains over the baseline that leave the FA3 ratio flat are a
    plateau (the H200 campaign's plateau trigger read 'best geomean 2.696x' over the
    baseline while the goal was 1.0x FA3), and a gain against FA3 resets it."""
    p = Plateau(TriggerConfig(plateau_window=3, plateau_min_gain=0.01), against="fa3")
    assert p.on_eval(with_vs(ev(2.6), "fa3", {"a": 0.85, "b": 0.87})) is None
    assert p.on_eval(with_vs(ev(2.9), "fa3", {"a": 0.85, "b": 0.872})) is None   # +11% on baseline only
    assert p.on_eval(with_vs(ev(3.0), "fa3", {"a": 0.851, "b": 0.87})) is None
    fired = p.on_eval(with_vs(ev(3.2), "fa3", {"a": 0.85, "b": 0.87}))
    assert fired and "against fa3" in fired.reason and "0.850x" in fired.reason
    assert p.on_eval(with_vs(ev(2.0), "fa3", {"a": 0.9, "b": 0.9})) is None    # +5% against fa3
    assert p.best_geo is not None and abs(p.best_geo - 0.9) < 1e-9
    # the baseline's terms, as before, without a comparison
    assert Plateau(TriggerConfig(), against="baseline").on_eval(ev(1.0)) is None


def test_suspicious_when_the_comparison_moves_and_the_candidate_does_not():
    """Seen on the H200: one scenario read 2.42x FA3 (0.89-0.91x for four siblings) with the
    same kernel time; its speedup over the baseline did not move."""
    s = SuspiciousGain(TriggerConfig(suspicious_step=0.25), against="fa3")
    assert s.on_eval(with_vs(ev(2.6, bound=0.3), "fa3", {"a": 0.9, "b": 0.9})) is None
    fired = s.on_eval(with_vs(ev(2.62, bound=0.3), "fa3", {"a": 2.42, "b": 0.91}))
    assert fired and fired.kind == "suspicious_gain"
    assert "a 0.900x -> 2.420x against fa3" in fired.reason and "fa3's time moved" in fired.reason
    # a real gain moves both ratios together: the candidate got faster, nothing to flag
    s2 = SuspiciousGain(TriggerConfig(suspicious_step=0.25), against="fa3")
    s2.on_eval(with_vs(ev(2.0, bound=0.3), "fa3", {"a": 0.8, "b": 0.8}))
    assert s2.on_eval(with_vs(ev(2.1, bound=0.3), "fa3", {"a": 0.84, "b": 0.84})) is None
    # against the baseline only, the comparison's figures are not looked at
    s3 = SuspiciousGain(TriggerConfig(suspicious_step=0.25))
    s3.on_eval(with_vs(ev(2.6, bound=0.3), "fa3", {"a": 0.9, "b": 0.9}))
    assert s3.on_eval(with_vs(ev(2.62, bound=0.3), "fa3", {"a": 2.42, "b": 0.91})) is None


def test_suspicious_step_against_the_comparison_and_retracted_figures():
    s = SuspiciousGain(TriggerConfig(suspicious_step=0.25), against="fa3")
    s.on_eval(with_vs(ev(2.0, bound=0.3), "fa3", {"a": 0.7, "b": 0.7}))
    fired = s.on_eval(with_vs(ev(2.6, bound=0.3), "fa3", {"a": 0.91, "b": 0.91}))
    assert fired and "geomean against fa3 0.700x -> 0.910x" in fired.reason
    retracted = with_vs(ev(2.7, bound=0.3), "fa3", {"a": 3.0, "b": 3.0})
    retracted.retracted = "comparisons"
    assert s.on_eval(retracted) is None   # retracted comparisons are no evidence of a gain


def test_the_firings_reason_reaches_the_suggester() -> None:
    """The bank ranks on the campaign's recent text; the trigger's reason ("fa3's time moved,
    not yours") belongs to that context, so the suggestions can speak to it."""
    from socratic.harness.engine.triggers import Fired, Triggers

    seen: list[str] = []

    class Inbox:
        auto_questions = False

        def known_bank_ids(self) -> list[str]:
            return []

    def suggester(kind: str, asked: list[str], text: str) -> list[tuple[str, str]]:
        seen.append(text)
        return []

    t = Triggers(TriggerConfig(), goal_set="bench", inbox=Inbox(), emit=lambda ev: {},  # type: ignore[arg-type]
                 suggester=suggester, against="fa3")
    t.recent_text = "v24 bench imported"
    t.fire(Fired("suspicious_gain", "d128-s1k 0.92x -> 2.42x against fa3: fa3's time moved, not yours"))
    assert seen and seen[0].startswith("v24 bench imported") and "fa3's time moved" in seen[0]


def test_plateau_under_a_comparison_goal_where_the_comparison_cannot_run():
    """A goal against FA3 on a machine without FA3: no evaluation has figures against it, and
    the plateau is heard on the baseline's terms (it stayed silent for the whole campaign)."""
    p = Plateau(TriggerConfig(plateau_window=2, plateau_min_gain=0.01), against="fa3")
    assert p.on_eval(ev(2.0)) is None
    assert p.on_eval(ev(2.005)) is None
    fired = p.on_eval(ev(2.01))
    assert fired and "against baseline" in fired.reason and "2.000x" in fired.reason
    # once FA3 is timed, its own best starts; baseline gains do not count on its terms
    assert p.on_eval(with_vs(ev(2.0), "fa3", {"a": 0.8, "b": 0.8})) is None
    assert p.on_eval(with_vs(ev(3.0), "fa3", {"a": 0.8, "b": 0.8})) is not None
    assert p.best_geo == 0.8
