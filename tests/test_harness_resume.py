"""Resume state alone: pure functions of the event log, state.json and the conversation."""

from __future__ import annotations

from socratic.contracts import ToolResult, parse_events
from socratic.harness.core.resume import NOT_RUN, RESTARTED, Counters, restart_messages, resume_state


def _usage(cost):
    return {"type": "usage", "input_tokens": 10, "output_tokens": 1, "cache_read": 0,
            "cache_write": 0, "cost_usd": cost}


def test_resume_state_from_events_and_state():
    events = [
        {"type": "campaign.start"},                      # damaged: skipped by the reader
        _usage(0.25),
        {"type": "tool.call", "id": "t1", "name": "bash", "input": {}},
        {"type": "tool.result", "id": "t1", "ok": True, "output": "hi"},
        {"type": "question", "text": "Bank?", "bank_id": "b.q", "source": "auto"},
        {"type": "question", "text": "Mine?", "bank_id": None, "source": "human"},
        {"type": "eval.start", "n": 1, "candidate_sha": "a"},
        {"type": "eval.end", "n": 1, "summary": {"all_correct": False}, "result": "evals/0001.json"},
        _usage(0.0),
        {"type": "eval.start", "n": 2, "candidate_sha": "b"},  # cut by a kill: no eval.end
        {"type": "something.new"},                       # unknown types are ignored
    ]
    for i, e in enumerate(events):
        e.update(seq=i + 1, t=float(i), ts="2026-12-01T00:00:00.000+00:00")
    parsed = parse_events(events)
    assert parsed.skipped == 1 and parsed.ignored == 1
    state = {"inbox_offset": 42, "questions": [{"text": "Q?", "source": "human"}],
             "notes": ["n"], "paused": True, "auto_questions": True}
    r = resume_state(parsed.events, state)
    assert r.counters == Counters(tool_calls=1, turns=2, cost_usd=0.25)
    assert r.eval_seq == 2 and [e.n for e in r.eval_ends] == [1]
    assert r.results["t1"].output == "hi"
    assert r.asked_ids == ["b.q"] and r.asked_texts == ["Bank?", "Mine?"]
    assert r.saved.inbox_offset == 42 and r.saved.paused and r.saved.auto_questions is True
    assert resume_state([], {}).saved.auto_questions is None


def test_restart_after_an_unanswered_user_message():
    msgs = [{"role": "user", "content": [{"type": "text", "text": "Begin."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": "Question from ..."}]}]
    kept, pending = restart_messages(msgs, {}, lambda r: "")
    assert kept == msgs[:2] and pending == [{"type": "text", "text": "Question from ..."}]
    assert len(msgs) == 3                                  # the caller's list is untouched


def test_restart_after_tool_calls_gives_their_logged_results():
    msgs = [{"role": "user", "content": [{"type": "text", "text": "Begin."}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {}}]}]
    results = {"t1": ToolResult(seq=3, t=0.0, ts="", id="t1", ok=False, output="short",
                                blob="blobs/t1.txt")}
    kept, pending = restart_messages(msgs, results, lambda r: "full text of " + r.id)
    assert kept == msgs
    assert pending == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "full text of t1",
         "is_error": True},
        {"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": NOT_RUN},
        {"type": "text", "text": RESTARTED}]


def test_restart_with_no_conversation_says_so():
    assert restart_messages([], {}, str) == ([], [{"type": "text", "text": RESTARTED}])
