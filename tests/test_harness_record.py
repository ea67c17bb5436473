"""The small pieces a campaign writes with, alone: the redacting recorder, the streamed-text
merger, the conversation and its handoff seed; and the test doubles kept apart from them."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources

from socratic.contracts import ToolResult
from socratic.eventlog import EventLog, read_jsonl
from socratic.harness.api.conversation import Conversation, handoff_seed
from socratic.harness.core.history import Evaluation, History
from socratic.harness.core.record import Recorder, TextStream
from socratic.harness.core.redaction import Redactor, redacted
from socratic.harness.core.session import Session
from socratic.harness.core.task import CampaignTask, sha256_text
from socratic_doubles.testing import (
    FAKE_KEY,
    eval_result,
    fake_config,
    make_task,
)


def test_recorder_redacts_every_field_before_logging(tmp_path):
    log = EventLog.open(tmp_path)
    emit = Recorder(log, Redactor([FAKE_KEY]))
    e = emit(ToolResult(id="t1", ok=True, output=f"key={FAKE_KEY}",
                        extra={"nested": {"x": [FAKE_KEY]}}))
    assert e["output"] == "key=[redacted]" and e["nested"] == {"x": ["[redacted]"]}
    assert FAKE_KEY not in (tmp_path / "events.jsonl").read_text()
    clean = {"a": [1, {"b": "c"}]}
    assert redacted(clean, Redactor([FAKE_KEY])) is clean       # no copy when nothing to hide


def test_text_stream_merges_pieces_between_flushes():
    seen = []
    text = TextStream(lambda ev: seen.append((ev.TYPE, ev.body())), flush_s=3600)
    for piece in ("Let ", "me ", "look."):
        text(piece)
    assert seen == []
    text.flush()
    text.flush()                                                 # nothing more: no event
    assert seen == [("agent.text", {"text": "Let me look."})]
    eager = TextStream(lambda ev: seen.append(ev.text), flush_s=0)
    eager("a")
    eager("b")
    assert seen[-2:] == ["a", "b"]


def session(tmp_path) -> tuple[Session, CampaignTask]:
    s, _ = Session.create(CampaignTask.load(make_task(tmp_path)), fake_config(), tmp_path / "s")
    return s, CampaignTask.load(s.task_dir)


def test_conversation_is_stored_redacted_and_rewritten(tmp_path):
    s, _ = session(tmp_path)
    c = Conversation(s, Redactor([FAKE_KEY]))
    c.append("user", [{"type": "text", "text": "Begin."}])
    c.append("assistant", [{"type": "text", "text": f"found {FAKE_KEY}"}])
    assert c.messages[1]["content"][0]["text"] == f"found {FAKE_KEY}"  # the model's own words
    assert FAKE_KEY not in s.messages.read_text()
    c.append("user", [{"type": "text", "text": "too long"}])
    assert c.take_last() == [{"type": "text", "text": "too long"}]
    assert s.load_messages() == (0, c.messages) and len(c.messages) == 2
    c.new_context()
    c.append("user", [{"type": "text", "text": "seed"}])
    assert s.load_messages() == (1, [{"role": "user", "content": [{"type": "text",
                                                                   "text": "seed"}]}])
    assert len(read_jsonl(s.messages)[0]) == 3                 # the old context stays on file


def test_handoff_seed_carries_the_campaign_state(tmp_path):
    s, task = session(tmp_path)
    s.notes.write_text("# Notes\nTried vector loads.\n")
    src = s.candidate.read_bytes()
    result = eval_result([{"id": "a", "correct": True, "speedup": 1.1}])
    history = History()
    history.add(Evaluation(1, sha256_text(src), "bench", result, 0))
    seed = handoff_seed(s, task, task.goal(None), "bench", history, ["Which bound?"],
                        [{"type": "tool_result", "content": "last output"},
                         {"type": "text", "text": "Question from the engineer: why?"}])
    assert "Tried vector loads." in seed and "- Which bound?" in seed
    assert "evaluation #1" in seed and "last evaluated as #1" in seed
    assert "Result of your last tool call:\nlast output" in seed and "why?" in seed


def test_the_shipped_harness_does_not_import_the_doubles():
    code = ("import sys, socratic.harness.api.campaign, socratic.harness.cli, socratic.tui.app; "
            "print([m for m in sys.modules if m.startswith('socratic_doubles')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_demo_kernels_are_cuda_files_in_the_package():
    from socratic_doubles import demo

    files = resources.files("socratic_doubles") / "demo_kernels"
    assert sorted(p.name for p in files.iterdir() if p.name.endswith(".cu")) == [
        "v1.cu", "v2.cu", "v3.cu"]
    assert demo.KERNELS["v3"]() == (files / "v3.cu").read_text()
    assert "__global__" not in resources.files("socratic_doubles").joinpath(
        "demo.py").read_text()
