"""The engineer's side of a campaign: commands read from inbox.jsonl, questions and harness
notes waiting for the next user message, the questions already asked, and the controls
(pause, stop, evaluate now, auto-questions).

What must survive a restart (the inbox offset, the queue, pause and auto-questions) is kept
in state.json, written after every change; the questions asked are rebuilt from the event
log instead (resume.py). Stop and evaluate requests act once and are not kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import CONTROL_ACTIONS, AskCommand, ControlCommand, Question, parse_command
from socratic.eventlog import read_jsonl
from socratic.harness.core.atomicwrite import write_json_atomic

__all__ = ["CONTROL_ACTIONS", "Inbox", "Saved", "Taken", "question_of", "read_commands"]


def question_of(cmd: AskCommand) -> Question:
    """The engineer's question from the inbox, as the record the log will hold."""
    return Question(text=cmd.text, bank_id=cmd.bank_id, trigger=cmd.trigger, source="human")


def _from_state(d: dict[str, Any]) -> Question:
    """A queued question as state.json keeps it (tolerant: what is not a string is
    dropped; `Saved.parse` checked the text)."""
    def opt(key: str) -> str | None:
        v = d.get(key)
        return v if isinstance(v, str) else None
    source = d.get("source")
    return Question(text=str(d.get("text", "")), bank_id=opt("bank_id"), trigger=opt("trigger"),
                    source=source if isinstance(source, str) else "human")


def _to_state(q: Question) -> dict[str, Any]:
    """A queued question for state.json, in the keys and order it has always had."""
    return {"text": q.text, "bank_id": q.bank_id, "trigger": q.trigger, "source": q.source}


@dataclass
class Saved:
    """state.json: what the inbox keeps across a restart."""

    inbox_offset: int = 0
    questions: list[Question] = field(default_factory=list)   # unstamped: not logged yet
    notes: list[str] = field(default_factory=list)
    paused: bool = False
    auto_questions: bool | None = None  # None: not saved yet (the config decides)

    @classmethod
    def from_dict(cls, data: Any) -> Saved:
        """Tolerant: a missing or damaged field takes its default."""
        d = data if isinstance(data, dict) else {}
        offset = d.get("inbox_offset", 0)
        auto = d.get("auto_questions")
        notes = d.get("notes")
        return cls(inbox_offset=offset if isinstance(offset, int) else 0,
                   questions=[_from_state(q) for q in _list(d.get("questions"))
                              if isinstance(q, dict)],
                   notes=[str(n) for n in _list(notes)],
                   paused=bool(d.get("paused", False)),
                   auto_questions=bool(auto) if auto is not None else None)

    @classmethod
    def parse(cls, data: Any) -> Saved | None:
        """Strict: None unless every field present has its type (a state file that is
        damaged or of wrong types is rebuilt from the log, `resume.rebuild_saved`)."""
        if not isinstance(data, dict):
            return None
        checks = {"inbox_offset": lambda v: isinstance(v, int) and not isinstance(v, bool)
                  and v >= 0,
                  "questions": lambda v: isinstance(v, list) and all(
                      isinstance(q, dict) and isinstance(q.get("text"), str) for q in v),
                  "notes": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
                  "paused": lambda v: isinstance(v, bool),
                  "auto_questions": lambda v: v is None or isinstance(v, bool)}
        if any(k in data and not ok(data[k]) for k, ok in checks.items()):
            return None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: Path) -> Saved | None:
        """state.json; None when it is missing, damaged or of wrong types."""
        try:
            return cls.parse(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def read_commands(path: Path) -> list[tuple[AskCommand | ControlCommand, int]]:
    """Every complete command line of an inbox file that the harness acts on, each with
    the offset just after it."""
    out: list[tuple[AskCommand | ControlCommand, int]] = []
    try:
        data = path.read_bytes()
    except OSError:
        return out
    pos = 0
    while (end := data.find(b"\n", pos)) >= 0:
        try:
            c = parse_command(json.loads(data[pos:end]))
        except (ValueError, UnicodeDecodeError):
            c = None
        if c is not None:
            out.append((c, end + 1))
        pos = end + 1
    return out


@dataclass
class Taken:
    """Notes and questions handed to an answer that is still being written."""

    notes: list[str]
    questions: list[Question]


class Inbox:
    """Reads inbox.jsonl from where it left off; holds the question queue, the notes and
    the control flags. Questions and notes wait until `delivered()`."""

    def __init__(self, path: Path, state_file: Path, *, auto_questions: bool,
                 saved: Saved | None = None, asked_ids: list[str] | None = None,
                 asked_texts: list[str] | None = None) -> None:
        saved = saved or Saved()
        self.path = path
        self.state_file = state_file
        self.offset = saved.inbox_offset
        self.questions: list[Question] = list(saved.questions)  # delivered next
        self.notes: list[str] = list(saved.notes)                      # harness notes, next
        self.paused = saved.paused
        self.auto_questions = auto_questions
        self.stop_requested = False
        self.eval_requested = False
        self.asked_ids: list[str] = list(asked_ids or [])
        self.asked_texts: list[str] = list(asked_texts or [])
        self._out: set[int] = set()   # ids of what is taken, not settled (`take`)
        self._written: dict[str, Any] | None = None   # what save() last wrote

    # -------------------------------------------------------------- reading commands
    def poll(self, on_control: Callable[[str], object] | None = None) -> list[str]:
        """Apply the commands appended since the last poll; returns the control actions
        applied, in order. `on_control(action)` runs before each is applied (the campaign
        logs it: the event comes before its effect)."""
        if not self.path.exists():
            return []
        cmds, offset = read_jsonl(self.path, self.offset)
        if offset == self.offset:
            return []
        self.offset = offset
        actions = []
        for c in map(parse_command, cmds):
            if isinstance(c, AskCommand):
                self.questions.append(question_of(c))
            elif isinstance(c, ControlCommand):
                if on_control is not None:
                    on_control(c.action)
                self.control(c.action)
                actions.append(c.action)
        self.save()
        return actions

    def control(self, action: str) -> None:
        if action in ("auto_on", "auto_off"):
            self.auto_questions = action == "auto_on"
        elif action == "pause":
            self.paused = True
        elif action == "resume":
            self.paused = False
        elif action == "stop":
            self.stop_requested = True
        elif action == "evaluate":
            self.eval_requested = True

    # -------------------------------------------------------------- questions and notes
    def ask(self, question: Question) -> None:
        """Queue a question for the next user message (logged as it is once delivered)."""
        self.questions.append(question)
        self.save()

    def note(self, text: str) -> None:
        """Queue a harness note for the next user message."""
        self.notes.append(text)
        self.save()

    def has_human_question(self) -> bool:
        return any(q.source == "human" for q in self.questions)

    def known_bank_ids(self) -> list[str]:
        """Bank ids asked or queued: a trigger does not suggest them again."""
        return self.asked_ids + [q.bank_id for q in self.questions if q.bank_id]

    def delivered(self) -> None:
        """The queued notes and questions went out (their events are logged): the
        questions count as asked."""
        self.settle(Taken(list(self.notes), list(self.questions)), delivered=True)

    def take(self) -> Taken:
        """The notes and questions due, for an answer not yet written (a hook's): they stay
        queued (and saved) but are not taken again until `settle`d. Each is known by the
        object queued (the record the log will get), not by its value: the same question
        typed twice is two questions."""
        taken = Taken([n for n in self.notes if id(n) not in self._out],
                      [q for q in self.questions if id(q) not in self._out])
        self._out |= {id(x) for x in (*taken.notes, *taken.questions)}
        return taken

    def settle(self, taken: Taken, delivered: bool) -> None:
        """What `take` gave out went out (`delivered`: the questions count as asked) or
        did not (they are due again)."""
        mine = {id(x) for x in (*taken.notes, *taken.questions)}
        self._out -= mine
        if not delivered:
            return
        for q in taken.questions:
            if q.bank_id:
                self.asked_ids.append(q.bank_id)
            self.asked_texts.append(q.text)
        self.questions = [q for q in self.questions if id(q) not in mine]
        self.notes = [n for n in self.notes if id(n) not in mine]
        self.save()

    # -------------------------------------------------------------- state.json
    def saved(self) -> Saved:
        return Saved(self.offset, self.questions, self.notes, self.paused, self.auto_questions)

    def save(self) -> None:
        # written and flushed before the next step, not fsync'd: the event log is the record
        s = self.saved()
        data = {"inbox_offset": s.inbox_offset, "questions": [_to_state(q) for q in s.questions],
                "notes": s.notes,
                "paused": s.paused, "auto_questions": s.auto_questions}
        if data == self._written and self.state_file.exists():
            return  # unchanged since our last write (a hook server saves after every hook)
        write_json_atomic(self.state_file, data, fsync=False)
        self._written = json.loads(json.dumps(data))  # a copy: the queue changes in place
