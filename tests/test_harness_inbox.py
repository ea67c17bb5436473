"""The inbox and controls alone: no model, no campaign loop."""

from __future__ import annotations

import json

from socratic.contracts import AskCommand, ControlCommand, Question
from socratic.eventlog import inject
from socratic.harness.core.inbox import Inbox, Saved


def make(tmp_path, **kw) -> Inbox:
    return Inbox(tmp_path / "inbox.jsonl", tmp_path / "state.json",
                 auto_questions=kw.pop("auto_questions", False), **kw)


def test_poll_queues_questions_and_applies_controls_in_order(tmp_path):
    box = make(tmp_path)
    assert box.poll() == []                                  # no inbox file yet
    inject(tmp_path, AskCommand(text="Which bound?", bank_id="bound.x"))
    inject(tmp_path, AskCommand(text="   "))   # empty: ignored
    for action in ("pause", "bogus", "auto_on", "evaluate", "resume", "stop"):
        inject(tmp_path, ControlCommand(action=action))
    seen = []
    assert box.poll(on_control=lambda a: seen.append((a, box.paused))) == [
        "pause", "auto_on", "evaluate", "resume", "stop"]
    # the callback runs before each action takes effect (its event comes first in the log)
    assert seen[0] == ("pause", False) and seen[-2] == ("resume", True)
    # the engineer's question as the record the log will hold
    assert box.questions == [Question(text="Which bound?", bank_id="bound.x", source="human")]
    assert box.stop_requested and box.eval_requested and box.auto_questions and not box.paused
    assert box.poll() == [] and len(box.questions) == 1      # nothing read twice


def test_a_torn_last_line_waits_for_its_end(tmp_path):
    box = make(tmp_path)
    line = json.dumps({"type": "control", "action": "pause"})
    (tmp_path / "inbox.jsonl").write_text(line[:10])
    assert box.poll() == [] and box.offset == 0
    (tmp_path / "inbox.jsonl").write_text(line + "\n")
    assert box.poll() == ["pause"]


def test_state_survives_a_restart_but_stop_and_evaluate_do_not(tmp_path):
    box = make(tmp_path)
    inject(tmp_path, AskCommand(text="Q1?"))
    inject(tmp_path, ControlCommand(action="pause"))
    inject(tmp_path, ControlCommand(action="stop"))
    box.poll()
    box.note("a harness note")
    again = make(tmp_path, saved=Saved.load(tmp_path / "state.json"))
    assert again.offset == box.offset and again.paused and again.notes == ["a harness note"]
    assert [q.text for q in again.questions] == ["Q1?"]
    # state.json keeps the queue in the keys and order it always had
    assert json.loads((tmp_path / "state.json").read_text())["questions"] == [
        {"text": "Q1?", "bank_id": None, "trigger": None, "source": "human"}]
    assert not again.stop_requested and not again.eval_requested
    assert again.poll() == []                                # the old commands are not re-run


def test_delivered_questions_count_as_asked(tmp_path):
    box = make(tmp_path, asked_ids=["old.q"], asked_texts=["Old?"])
    box.ask(Question(text="Auto?", bank_id="auto.q", trigger="plateau", source="auto"))
    box.ask(Question(text="Mine?", source="human"))
    assert box.known_bank_ids() == ["old.q", "auto.q"] and box.has_human_question()
    box.delivered()
    assert box.questions == [] and box.notes == []
    assert box.asked_ids == ["old.q", "auto.q"] and box.asked_texts == ["Old?", "Auto?", "Mine?"]
    assert json.loads((tmp_path / "state.json").read_text())["questions"] == []


def test_saved_state_is_read_tolerantly():
    assert Saved.from_dict(None) == Saved()
    s = Saved.from_dict({"inbox_offset": "x", "questions": [1, {"text": "Q?"}], "notes": None,
                         "paused": 1, "auto_questions": False})
    assert s == Saved(0, [Question(text="Q?", source="human")], [], True, False)
    assert Saved.from_dict({}).auto_questions is None        # not saved: the config decides
