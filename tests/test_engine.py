"""The one engine (harness/engine/engine.py): its marks, saved by the hooks, are what the log
rebuilds; the API loop and the hooks apply the same stop rules."""

from __future__ import annotations

import json
from dataclasses import asdict

from socratic.contracts import AskCommand, read_events
from socratic.eventlog import inject, read_jsonl
from socratic.harness.api.campaign import Campaign
from socratic.harness.attached.attached_campaign import HOOK_STATE
from socratic.harness.attached.hooks import run_hook
from socratic.harness.engine.engine import MARK_FIELDS, Marks
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_KEY, fake_config, make_task
from tests.test_attach_hooks import make, stop_payload, tool_payload, write_candidate
from tests.test_harness_campaign import write

# what the inbox's requests were when the marks were saved: not in the log
REQUESTS = ("stop_requested", "eval_requested")


def saved_marks(sess) -> dict:
    data = json.loads((sess / HOOK_STATE).read_text())
    return {k: data[k] for k in MARK_FIELDS if k not in REQUESTS}


def rebuilt_marks(sess) -> dict:
    events = read_events(sess / "events.jsonl")[0].events
    return {k: v for k, v in asdict(Marks.rebuilt(events)).items() if k not in REQUESTS}


def test_the_marks_a_hook_saves_are_the_ones_the_log_rebuilds(tmp_path):
    a = make(tmp_path, "claude", wait_s=0.3)
    sess, ws = a.session.dir, a.session.workspace
    steps = [
        ("session-start", {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"}),
        ("post-tool", tool_payload("claude", ws, "ls", "candidate.cu")),
        ("stop", stop_payload("claude", ws)),                    # refused: one in a row
        ("stop", stop_payload("claude", ws, active=True)),       # two in a row
        ("post-tool", tool_payload("claude", ws, "make", "ok", tid="t-2")),  # breaks the run
        ("stop", stop_payload("claude", ws, "I am done.")),      # declared_done fires
    ]
    for event, payload in steps:
        run_hook(event, payload, session_dir=sess)
        assert saved_marks(sess) == rebuilt_marks(sess), event
    write_candidate(sess, 1.5)
    run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)  # goal met
    assert saved_marks(sess) == rebuilt_marks(sess)
    assert saved_marks(sess)["ended"] == "goal_met"
    # the attached campaign's end has the API loop's fields, from the one end rule
    end = [e for e in read_jsonl(sess / "events.jsonl")[0] if e["type"] == "campaign.end"][-1]
    assert {"reason", "evaluations", "tool_calls", "turns", "cost_usd", "best"} <= set(end)


def test_a_lost_state_file_is_rebuilt_to_the_same_marks(tmp_path):
    a = make(tmp_path, "claude", wait_s=0.3)
    sess, ws = a.session.dir, a.session.workspace
    run_hook("post-tool", tool_payload("claude", ws, "ls", "x"), session_dir=sess)
    run_hook("stop", stop_payload("claude", ws), session_dir=sess)
    before = saved_marks(sess)
    (sess / HOOK_STATE).unlink()
    run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    after = saved_marks(sess)
    # the second stop in a row, counted on the marks the log gave back
    assert before["in_a_row"] == 1 and after["in_a_row"] == 2
    assert after["blocks"] == before["blocks"] + 1


def test_a_stall_waits_for_the_engineer_in_both_adapters_and_tags_the_question(tmp_path):
    # the hooks: the third stop in a row waits; the question that comes answers the stall
    a = make(tmp_path, "claude", wait_s=1.0)
    sess, ws = a.session.dir, a.session.workspace
    for active in (False, True):
        run_hook("stop", stop_payload("claude", ws, active=active), session_dir=sess)
    inject(sess, AskCommand(text="Why stop here?"))
    out = run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    assert "Why stop here?" in out["reason"]
    q = [e for e in read_jsonl(sess / "events.jsonl")[0] if e["type"] == "question"][-1]
    assert q["trigger"] == "declared_done"

    # the API loop: the same rule (attached runs wait; the question gets the same tag)
    holder: dict = {}

    def stop_then_ask(body):
        inject(holder["dir"], AskCommand(text="Which bound?"))
        return {"text": "done"}

    task = make_task(tmp_path / "api")
    with FakeAnthropic([{"text": "done"}, {"text": "done"}, stop_then_ask,
                        {"tools": [write(1.5)]}, {"text": "done"}]) as api:
        c = Campaign.create(task, fake_config(wait_for_human=True, max_empty_stops=3),
                            session_dir=tmp_path / "s", api_key=FAKE_KEY, base_url=api.url,
                            suggester=lambda *a: [])
        holder["dir"] = c.session.dir
        assert c.run() == "goal_met"
    q = [e for e in read_jsonl(c.session.dir / "events.jsonl")[0] if e["type"] == "question"][-1]
    assert q["text"] == "Which bound?" and q["trigger"] == "declared_done"
