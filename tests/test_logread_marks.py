"""The campaign engine's rule marks come from the one reading of the log (issue 44):
`LogState` keeps them as it folds the events, and `Marks.rebuilt` is made from it. The
engine's own fold, as it was before, is kept here as the oracle: for the bundled sessions'
logs and for made-up sequences, after every event, the reading's marks are the oracle's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from socratic.contracts import (
    AgentText,
    CampaignEnd,
    CampaignResume,
    EndReason,
    EvalEnd,
    Event,
    StopHook,
    ToolCall,
    Trigger,
)
from socratic.harness.attached.attached_campaign import HookState
from socratic.harness.engine.engine import MARK_FIELDS, Marks
from socratic.logread import LogReader, LogState, RuleMarks, read_log
from socratic.resources import demo_session_dir
from socratic.sessionfiles import open_session
from tests.fa3data import TRIMMED, shipped
from tests.logseq import Seq

# ------------------------------------------------------------------ the old fold (oracle)


@dataclass
class OldMarks:
    in_a_row: int = 0
    calls_since: int = 0
    blocks: int = 0
    recent_text: str = ""
    start_fired: bool = False
    declared_last_at: int | None = None
    explained_n: int = 0
    ended: EndReason | None = None


def old_fold(events: Iterable[Event]) -> Iterator[OldMarks]:
    """engine.Marks.rebuilt as it was (before the marks moved into socratic.logread),
    yielding the marks after each event."""
    m = OldMarks()
    n_evals, last_n = 0, 0
    for e in events:
        if isinstance(e, EvalEnd):
            n_evals, last_n = n_evals + 1, e.n
        elif isinstance(e, ToolCall):
            m.calls_since += 1
            m.blocks = 0
        elif isinstance(e, StopHook):
            m.in_a_row = m.in_a_row + 1 if m.calls_since == 0 and m.in_a_row else 1
            m.calls_since = 0
            m.blocks += 0 if e.met else 1
        elif isinstance(e, Trigger):
            if e.kind == "start":
                m.start_fired = True
            elif e.kind == "declared_done":
                m.declared_last_at = n_evals
            elif e.kind == "correctness_failure" and n_evals:
                m.explained_n = last_n
        elif isinstance(e, AgentText):
            m.recent_text = (m.recent_text + "\n" + e.text)[-4000:]
        elif isinstance(e, CampaignEnd):
            m.ended = e.reason
        elif isinstance(e, CampaignResume):
            m.ended, m.in_a_row, m.blocks = None, 0, 0
        yield OldMarks(**asdict(m))


def old_rebuilt(events: list[Event]) -> dict[str, Any]:
    steps = [OldMarks(), *old_fold(events)]
    return asdict(steps[-1])


def check_every_step(events: list[Event]) -> None:
    """After every event, the reading's marks are the old fold's; a checkpoint (`copy`)
    keeps its marks while the reading goes on."""
    state = LogState()
    checkpoint: tuple[LogState, dict[str, Any]] | None = None
    for i, (ev, want) in enumerate(zip(events, old_fold(events), strict=True)):
        state.apply(ev)
        assert asdict(state.marks) == asdict(want), (i, ev)
        if i % 97 == 0:
            checkpoint = (state.copy(), asdict(want))
    if checkpoint is not None:
        assert asdict(checkpoint[0].marks) == checkpoint[1]
    assert asdict(read_log(events).marks) == old_rebuilt(events)
    assert {k: v for k, v in asdict(Marks.rebuilt(events)).items()
            if k in asdict(RuleMarks())} == old_rebuilt(events)


def test_the_marks_are_the_rule_marks_and_the_inbox_requests():
    assert set(MARK_FIELDS) == {f.name for f in fields(RuleMarks)} | {"stop_requested",
                                                                       "eval_requested"}
    assert {f.name for f in fields(OldMarks)} == {f.name for f in fields(RuleMarks)}


# ------------------------------------------------------------------ the bundled logs


def _logs() -> list[tuple[str, Path]]:
    return [("demo", demo_session_dir()), ("fa3-h200", shipped()), ("fa3-trimmed", TRIMMED)]


@pytest.mark.parametrize("name,path", _logs(), ids=[n for n, _ in _logs()])
def test_the_bundled_logs_give_the_old_folds_marks(name, path):
    events = open_session(path).events().events
    assert events, name
    check_every_step(events)
    m = read_log(events).marks
    if name != "demo":   # a real campaign: its stops, triggers and words are in the marks
        assert m.start_fired and m.recent_text and m.ended is not None


def test_the_reader_polling_a_log_gives_the_same_marks(tmp_path):
    src = demo_session_dir() / "events.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    log = tmp_path / "events.jsonl"
    reader = LogReader(log)
    log.write_bytes(b"")
    for k in range(0, len(lines), 7):   # the log as it grows
        with open(log, "ab") as fh:
            fh.write(b"".join(lines[k:k + 7]))
        reader.poll()
    events = open_session(demo_session_dir()).events().events
    assert asdict(reader.state.marks) == old_rebuilt(events)


# ------------------------------------------------------------------ made-up sequences


SEQUENCES = {
    "stops in a row": lambda s: s.stop().stop().stop(met=True).stop(),
    "tool calls between": lambda s: s.stop().call().stop().stop().call().call().stop(met=True)
    .call().stop(),
    "resume after end": lambda s: s.stop().stop().end().stop().resume().stop().stop()
    .end("goal_met").resume().call(),
    "declared done": lambda s: s.trig("declared_done").evaluated(1).evaluated(2)
    .trig("declared_done").evaluated(3),
    "correctness failure": lambda s: s.trig("correctness_failure").evaluated(4, False)
    .trig("correctness_failure").evaluated(2).evaluated(7, False).say("why")
    .trig("correctness_failure").trig("correctness_failure"),
    "start and words": lambda s: s.trig("start").say("a" * 3000).say("b" * 3000).say("")
    .trig("plateau"),
    "everything": lambda s: s.demo_start().trig("start").say("go").call().stop().stop()
    .evaluated(1, False).trig("correctness_failure").call().stop(met=True).end("goal_met")
    .resume().trig("declared_done").stop().call().evaluated(2).trig("declared_done")
    .end("limit").stop().resume(),
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_made_up_sequences_give_the_old_folds_marks(name):
    events = SEQUENCES[name](Seq()).events
    check_every_step(events)


def test_the_hook_state_rebuilt_is_the_readings_marks():
    events = SEQUENCES["everything"](Seq()).events
    h = HookState.rebuilt(events)
    assert isinstance(h, HookState)
    assert {k: getattr(h, k) for k in asdict(RuleMarks())} == old_rebuilt(events)
    assert h.transcripts == {} and not h.stop_requested


def test_a_malformed_end_ends_the_reading_not_the_marks():
    """The engine's fold read typed events only: a campaign.end that does not match its
    declaration ends the reading's status, and (as before) not the rule marks."""
    s = LogState().apply_all(SEQUENCES["stops in a row"](Seq()).events)
    s.apply_malformed({"type": "campaign.end", "seq": 9, "t": 9.0, "reason": 3})
    assert s.status == "ended" and s.marks.ended is None
