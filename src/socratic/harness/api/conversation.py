"""The conversation with the model: the current context's messages, each appended to
messages.jsonl (redacted) as it is made so that `--resume` can rebuild it, and the handoff
to a fresh context seeded from the campaign state when it grows too long."""

from __future__ import annotations

import json
import os
from typing import Any

from socratic.contracts import Goal
from socratic.eventlog import read_jsonl
from socratic.harness.core.history import History
from socratic.harness.core.redaction import Redactor, redacted
from socratic.harness.core.session import Session
from socratic.harness.core.task import CampaignTask, sha256_text
from socratic.harness.engine import prompt


class Conversation:
    def __init__(self, session: Session, redact: Redactor, ctx: int = 0,
                 messages: list[dict[str, Any]] | None = None) -> None:
        self.session = session
        self.redact = redact
        self.ctx = ctx              # context number: 0, then +1 per handoff
        self.messages: list[dict[str, Any]] = list(messages or [])

    def append(self, role: str, content: list[dict[str, Any]]) -> None:
        msg = {"role": role, "content": content}
        self.messages.append(msg)
        self.session.append_message(self.ctx, redacted(msg, self.redact))

    def take_last(self) -> list[dict[str, Any]]:
        """Take the last message back (the API refused it): its content."""
        content = self.messages.pop()["content"]
        self.rewrite()
        return content

    def rewrite(self) -> None:
        """messages.jsonl with the current context's lines replaced by `messages`."""
        path = self.session.messages
        old, _ = read_jsonl(path) if path.exists() else ([], 0)
        tmp = path.with_name("messages.jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for r in old:
                if int(r.get("ctx", 0)) != self.ctx:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            for m in self.messages:
                fh.write(json.dumps({"ctx": self.ctx, "message": m}, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def new_context(self) -> None:
        self.ctx += 1
        self.messages = []


def handoff_seed(session: Session, task: CampaignTask, goal: Goal, goal_set: str | None,
                 history: History, asked: list[str], pending: list[dict[str, Any]]) -> str:
    """The first message of a fresh context: goal, best and current candidate, evaluation
    history, NOTES.md, the questions asked and what was about to be sent."""
    best = history.best(goal, goal_set)
    best_text = (f"evaluation #{best.n}, sha256 {best.sha[:12]}, saved as "
                 f"{session.candidates.name}/{best.sha[:16]}.cu (session dir), "
                 f"geomean {best.metric('geomean_speedup')}, min {best.metric('min_speedup')}"
                 if best else "none correct yet")
    cur = session.candidate.read_bytes() if session.candidate.exists() else b""
    cur_ev = history.find(sha256_text(cur), goal_set, goal.against)
    cur_text = (f"sha256 {sha256_text(cur)[:12]}, " + (
        f"last evaluated as #{cur_ev.n}" if cur_ev else "not evaluated in this form"))
    try:
        notes = session.notes.read_text(encoding="utf-8")[-12000:]
    except OSError:
        notes = "(missing)"
    pend = []
    for b in pending:
        if b.get("type") == "tool_result":
            pend.append("Result of your last tool call:\n" + str(b.get("content"))[-6000:])
        elif b.get("type") == "text":
            pend.append(b["text"])
    return prompt.handoff_seed(goal=goal, task=task, history_table=history.table(),
                               best=best_text, current=cur_text, notes=notes, questions=asked,
                               pending="\n\n".join(pend))
