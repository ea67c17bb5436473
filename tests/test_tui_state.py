"""The state model without a screen: the reducer, tolerance, the checkpointed timeline."""

from __future__ import annotations

import random
import time

from socratic.tui.state import CampaignState, Timeline, fold
from tests.test_tui_support import generator, stamped, start_event, tiny_events

TS = "2026-11-01T08:00:30.000+00:00"


def test_tiny_campaign_folds_to_expected_state():
    s = fold(tiny_events())
    assert s.task == "rmsnorm" and s.goal == 1.0 and s.status == "ended"
    assert [r.id for r in s.rows_in_order()] == ["r1-c4096", "r4096-c8192"]
    r1 = s.rows["r1-c4096"]
    assert r1.speedup == 1.25 and r1.best == 1.25 and r1.correct
    r2 = s.rows["r4096-c8192"]
    # eval 1 was incorrect for r2, so its best is only the correct eval-2 speedup
    assert r2.best == 1.1
    assert [e.n for e in s.evals] == [1, 2]
    assert s.evals[0].all_correct is False and s.evals[1].comparisons == (("fa3", 0.5),)
    assert s.tool_calls == 1 and s.input_tokens == 1000 and abs(s.cost_usd - 0.01) < 1e-9
    assert s.asked == {"correctness.masking"}
    assert s.last_trigger.kind == "correctness_failure"
    kinds = [b.kind for b in s.blocks]
    assert kinds == ["start", "trigger", "text", "tool", "eval", "trigger", "question",
                     "eval", "stophook", "end"]
    text = s.blocks[2]
    assert text.text == "Let me look at the kernel."
    tool = s.blocks[3]
    assert tool.done and tool.ok and tool.duration == 0.2 and tool.detail == "ls -la"
    assert s.missing_goal() == []


def test_rows_missing_goal_and_error_ratio():
    s = fold(tiny_events()[:11])
    assert s.missing_goal() == ["r1-c4096", "r4096-c8192"]
    assert s.rows["r4096-c8192"].err_ratio == 250.0
    assert s.rows["r1-c4096"].meets(1.0) is False


def test_unknown_types_ignored_and_malformed_events_skipped_and_counted():
    good = tiny_events()
    evs = stamped([
        good[0],
        {"type": "something.new", "x": 1},                   # unknown type: ignored
        {"type": "api.retry", "attempt": 1, "error": "529", "wait_s": 1.0},  # known, not shown
        {"no": "type"},                                      # no type: malformed
        {"type": "eval.scenario", "n": 1, "scenario": "a", "speedup": "fast", "correct": "yes"},
        {"type": "eval.scenario", "n": 1},                   # no scenario id
        {"type": "eval.end", "n": 1, "summary": "oops", "result": "evals/0001.json"},
        {"type": "usage", "input_tokens": None, "output_tokens": 1, "cache_read": 0,
         "cache_write": 0, "cost_usd": 0.0},
        {"type": "tool.result", "id": "never-called", "ok": True, "output": 42},
        {"type": "trigger", "kind": "start", "reason": "r", "suggestions": "x"},
        {"type": "question"},
        {"type": "stophook", "met": False, "failing": [1, {"scenario": "a"}]},
        {"type": "control"},
        {"type": "agent.text", "text": None},
    ])
    evs.append("not a dict")
    evs.append({**good[2], "seq": "3"})                      # seq not an int
    s = fold(evs)
    assert s.n_events == 2 and s.n_malformed == 13 and s.n_ignored == 14  # + the unknown type
    assert "a" not in s.rows and not s.evals                 # nothing half-applied
    assert s.input_tokens == 0 and s.tool_calls == 0 and [b.kind for b in s.blocks] == ["start"]
    assert s.retry is not None and s.retry.attempt == 1      # api.retry is shown (status line)


def test_control_states_and_auto():
    s = fold(stamped([start_event(["a"], auto_questions=True),
                      {"type": "control", "action": "pause"}]))
    assert s.status == "paused" and s.auto is True

    def apply(ev):
        s.apply(stamped([ev])[0])

    apply({"type": "control", "action": "resume"})
    assert s.status == "running"
    apply({"type": "control", "action": "auto_off"})
    assert s.auto is False
    apply({"type": "control", "action": "wait"})
    assert s.status == "waiting"
    apply({"type": "question", "text": "q", "source": "human"})
    assert s.status == "running"
    apply({"type": "control", "action": "wait"})
    apply({"type": "control", "action": "stop"})
    assert s.status == "stopping"
    apply({"type": "campaign.end", "reason": "stopped"})
    assert s.status == "ended" and s.end_reason == "stopped"


def test_copy_is_independent():
    evs = tiny_events()
    s = fold(evs[:4])
    c = s.copy()
    s.apply_all(evs[4:])
    assert len(c.blocks) == 3 and c.blocks[2].text == "Let me look at the kernel."
    assert c.tool_calls == 0 and not c.evals


def _signature(s: CampaignState):
    return (s.status, s.t, s.tool_calls, s.input_tokens, round(s.cost_usd, 6),
            [(r.id, r.speedup, r.best, r.correct, s.is_stale(r)) for r in s.rows_in_order()],
            [(e.n, e.geomean) for e in s.evals], s.asked, [(b.kind, b.text, b.output, b.ok)
                                                          for b in s.blocks])


def test_timeline_state_at_equals_fold_of_prefix():
    events = generator().make_events(3000, seed=5)
    tl = Timeline(events, every=128)
    rng = random.Random(0)
    for i in [0, 1, 127, 128, 129, len(events) - 1, len(events)] + rng.sample(range(len(events)), 20):
        assert _signature(tl.state_at(i)) == _signature(fold(events[:i])), i


def test_timeline_seek_is_fast_and_positions():
    events = generator().make_events(25_000, seed=1)
    tl = Timeline(events)
    t = time.perf_counter()
    for i in (len(events), len(events) - 1, len(events) // 2, 17, 24_000):
        tl.state_at(i)
    assert (time.perf_counter() - t) / 5 < 0.05
    ends = tl.positions("eval")
    assert ends and all(events[p - 1]["type"] == "eval.end" for p in ends)
    assert tl.next_position("eval", 0) == ends[0]
    assert tl.prev_position("eval", ends[1]) == ends[0]
    qs = tl.positions("question")
    assert qs and events[qs[0] - 1]["type"] == "question"


def _scenario(n, sid, speedup, **kw):
    return {"type": "eval.scenario", "n": n, "scenario": sid, "correct": True,
            "speedup": speedup, **kw}


def test_evaluations_of_another_set_get_their_own_rows():
    evs = stamped([
        start_event(["a", "b"]),
        {"type": "eval.start", "n": 1, "candidate_sha": "x", "set": "bench"},
        _scenario(1, "a", 1.5),
        {"type": "eval.end", "n": 1, "set": "bench", "summary": {"all_correct": True},
         "result": "evals/0001.json"},
        {"type": "eval.start", "n": 2, "candidate_sha": "x", "set": "full"},
        _scenario(2, "x", 0.5, index=0),
        _scenario(2, "a", 2.0, index=1),
    ])
    s = fold(evs)
    assert s.table_set == "full" and [r.id for r in s.rows_in_order()] == ["x", "a"]
    assert s.sets["bench"]["a"].speedup == 1.5
    c = s.copy()
    assert c.rows is c.sets["full"] and c.rows is not s.rows
    s.apply(stamped([{"type": "eval.start", "n": 3, "candidate_sha": "x", "set": "bench"}])[0])
    assert s.table_set == "bench" and sorted(s.rows) == ["a", "b"] and s.is_stale(s.rows["a"])
    # no set named at the start: the first evaluated set takes the start's scenarios
    s = fold(stamped([start_event(["a"], set_name=None),
                      {"type": "eval.start", "n": 1, "candidate_sha": "x", "set": "bench"}]))
    assert s.goal_set == "bench" and list(s.rows) == ["a"]


def test_goal_against_a_comparison():
    s = fold(stamped([
        start_event(["a", "b", "c"], goal={"min_speedup": 1.0, "against": "fa3"}),
        {"type": "eval.start", "n": 1, "candidate_sha": "x"},
        _scenario(1, "a", 3.0, comparisons={"fa3": {"ms": 1.0, "speedup": 0.8}}),
        _scenario(1, "b", 0.5, comparisons={"fa3": {"ms": 1.0, "speedup": 1.2}}),
        _scenario(1, "c", 0.5),
    ]))
    # judged on the speedup against fa3; without that number only correctness counts
    assert s.missing_goal() == ["a"]
    assert s.rows["b"].goal_speedup("fa3") == 1.2 and s.rows["c"].meets(1.0, "fa3") is True


def test_api_retry_shows_retrying_and_campaign_time_runs_on():
    # issue 10 item 2: an api.retry is not ignored: it moves the campaign clock and
    # says which attempt failed with what, and when the next try is
    s = fold(tiny_events()[:7])
    t0 = s.t
    s.apply({"type": "api.retry", "seq": 8, "t": t0 + 30.0, "ts": TS, "attempt": 3,
             "error": "529 overloaded_error", "wait_s": 8.0})
    assert s.t == t0 + 30.0 and s.status == "running"
    assert s.retry is not None and s.retry.attempt == 3 and s.retry.wait_s == 8.0
    assert "overloaded" in s.retry.error and s.retry.t == t0 + 30.0
    # a warning logged as api.retry with attempt 0 (bank.suggest failed) is no API retry
    s.apply({"type": "api.retry", "seq": 9, "t": t0 + 31.0, "ts": TS, "attempt": 0,
             "error": "x", "wait_s": 0})
    assert s.retry.attempt == 3 and s.t == t0 + 31.0
    s.apply({"type": "usage", "seq": 10, "t": t0 + 40.0, "ts": TS, "input_tokens": 5,
             "output_tokens": 1, "cache_read": 0, "cache_write": 0, "cost_usd": 0.0})
    assert s.retry is None  # the API answered


def test_unknown_event_types_still_move_the_clock():
    s = fold(tiny_events()[:3])
    s.apply({"type": "context.handoff", "seq": 4, "t": 500.0, "ts": TS, "ctx": 2,
             "reason": "context at 170000 tokens", "tokens": 170000})
    assert s.t == 500.0


def test_a_malformed_eval_end_is_no_evaluation():
    # issue 10 item 14: it was counted as an evaluation and drew a blank plot bar
    evs = tiny_events()
    bad = [dict(evs[10], summary="oops"), dict(evs[10], summary={"geomean_speedup": 0.79}),
           dict(evs[10], n="first")]
    for ev in bad:
        s = fold(evs[:10] + [ev])
        assert s.evals == [] and s.goal_evals() == [] and s.n_malformed == 1
        assert not s.eval_running  # the evaluation did end, only its record is broken
        block = s.blocks[s.eval_index[1]]
        assert block.done and "malformed" in block.get("error")
    s = fold(evs[:10] + bad + evs[11:])
    assert [e.n for e in s.evals] == [2] and s.n_malformed == 3


def test_tool_summaries_say_something_useful():
    # issue 10 item 18: the collapsed tool call showed the output's last line (`→ ]`)
    from socratic.tui.tool_summary import summarize_output

    json_out = '{\n  "rows": [\n    1,\n    2\n  ]\n}\n\n[exit code 0]'
    assert summarize_output(json_out) == "exit 0 · 6 lines · 32 B · \"rows\": ["
    assert summarize_output("wrote 563 bytes to NOTES.md") == "wrote 563 bytes to NOTES.md"
    assert summarize_output("[exit code 0]") == "exit 0 · no output"
    assert summarize_output("") == "no output"
    failed = "9:seeds = 3\nno saved evaluation yet\n\n[exit code 1]"
    assert summarize_output(failed) == "exit 1 · 2 lines · 35 B · 9:seeds = 3"
    big = "evaluation #5  set=full\n" + "row\n" * 500 + "[... full text in blob]"
    assert summarize_output(big).startswith("501+ lines · 2.0+ kB · evaluation #5  set=full")
    # the reducer keeps the summary of the whole output, before it clips it
    s = fold(tiny_events()[:6] + [dict(tiny_events()[6], output="x\n" * 5000 + "[exit code 3]")])
    tool = s.blocks[3]
    assert tool.get("summary") == "exit 3 · 5000 lines · 10.0 kB · x"


def test_api_errors_are_shortened_to_their_gist():
    from socratic.tui.widgets.status_line import short_error

    raw = ("Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', "
           "'message': 'Overloaded'}}")
    assert short_error(raw) == "529 overloaded_error"
    # the cause, not the exception's class (which cut it off at 80 columns, issue 43)
    assert short_error("APIConnectionError: Connection refused") == "Connection refused"
    assert short_error("Error code: 529 overloaded_error") == "529 overloaded_error"
    assert short_error("something else") == "something else"


def test_a_problem_shows_in_the_transcript():
    from socratic.tui.widgets.event_block import render_block

    s = fold(stamped([start_event(["a"]),
                      {"type": "problem", "where": "bank.suggest", "error": "BankError: bad file x.toml"}]))
    (block,) = [b for b in s.blocks if b.kind == "problem"]
    assert s.status == "running" and block.title == "bank.suggest"
    assert "⚠ problem in bank.suggest: BankError: bad file x.toml" in render_block(block).plain


def test_best_is_on_the_goals_terms():
    """A campaign against FA3 shows its best geomean against FA3, on the goal's set: not the
    best against the baseline (the H200 campaign read "best 2.70x" with a goal of 1.0x FA3)."""
    from pathlib import Path

    from socratic.resources import resolve_session_dir
    from socratic.sessionfiles import open_session

    events = open_session(resolve_session_dir(Path("fa3-h200"))).event_records()[0]
    s = fold(events)
    assert s.goal_against == "fa3"
    best_fa3 = max(dict(e.comparisons)["fa3"] for e in s.evals
                   if e.all_correct and e.set == "bench" and e.shows("fa3"))   # not retracted
    assert s.best_geomean == best_fa3 and s.best_geomean < 1.0
