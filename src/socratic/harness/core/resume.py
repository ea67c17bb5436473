"""`socratic run --resume`: what a campaign's files say about where it was.

`resume_state` is a pure function of the event log and state.json; `restart_messages` of
the stored conversation and the logged tool results. The campaign rebuilds itself from
both (campaign.py); nothing here touches a file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import (
    AskCommand,
    Control,
    ControlCommand,
    EvalEnd,
    Event,
    Question,
    Retractions,
    ToolResult,
)
from socratic.harness.core.inbox import CONTROL_ACTIONS, Saved, question_of, read_commands
from socratic.logread import LogState, RuleMarks, read_log

RESTARTED = ("(The campaign process was restarted; the workspace and your notes are as you "
             "left them. Continue.)")
NOT_RUN = ("not run: the campaign process ended before this tool call finished; run it again "
           "if needed")


@dataclass
class Counters:
    """Counts over the whole campaign (resumes included)."""

    tool_calls: int = 0
    turns: int = 0          # model responses
    cost_usd: float = 0.0


@dataclass
class ResumeState:
    counters: Counters = field(default_factory=Counters)
    eval_seq: int = 0                                              # highest eval.start n
    eval_ends: list[EvalEnd] = field(default_factory=list)        # in order
    retractions: Retractions = field(default_factory=Retractions)  # eval.retract events
    results: dict[str, ToolResult] = field(default_factory=dict)  # by tool call id
    asked_ids: list[str] = field(default_factory=list)
    asked_texts: list[str] = field(default_factory=list)
    saved: Saved = field(default_factory=Saved)                   # state.json
    marks: RuleMarks = field(default_factory=RuleMarks)           # the engine's, from the log


def resume_state(events: Iterable[Event], state: Any, inbox: Path | None = None, *,
                 log: LogState | None = None) -> ResumeState:
    """The campaign's counters, evaluations, tool results and questions asked, from its
    (parsed) events; the inbox's offset, queue and flags from state.json (`state`, as
    parsed), or, when that is missing, damaged or of wrong types and the `inbox` file is
    given, rebuilt from the log and the inbox (`rebuild_saved`). `log`: the caller's reading
    of these same events, if it has one (else they are read here)."""
    events = list(events)
    saved = Saved.parse(state)
    if saved is None:
        saved = rebuild_saved(events, inbox) if inbox is not None else Saved.from_dict(state)
    if log is None:
        log = read_log(events)   # the one reading (socratic.logread)
    r = ResumeState(saved=saved, eval_seq=log.highest_n,
                    eval_ends=[e.end for e in log.evaluations], retractions=log.retractions,
                    counters=Counters(log.tool_calls, log.turns, log.cost_usd),
                    asked_ids=[q.event.bank_id for q in log.questions if q.event.bank_id],
                    asked_texts=[q.event.text for q in log.questions], marks=log.marks)
    r.results = {e.id: e for e in events if isinstance(e, ToolResult)}   # for the conversation
    return r


def rebuild_saved(events: list[Event], inbox: Path) -> Saved:
    """state.json as it must have been, from the log and the inbox: every control the log
    shows applied and every human question it shows asked is read already (the offset
    goes past the last of them, the flags as they left them); the human questions read
    but not yet asked are queued again. Notes waiting for the agent are not kept anywhere
    else and are lost."""
    applied = Counter(e.action for e in events
                      if isinstance(e, Control) and e.action in CONTROL_ACTIONS)
    asked = Counter(e.text for e in events if isinstance(e, Question) and e.source == "human")
    auto: bool | None = None
    saved = Saved()
    read: list[tuple[AskCommand, int]] = []
    for cmd, end in read_commands(inbox):
        if isinstance(cmd, ControlCommand) and applied[cmd.action] > 0:
            applied[cmd.action] -= 1
        elif isinstance(cmd, AskCommand) and asked[cmd.text] > 0:
            asked[cmd.text] -= 1
        else:
            if isinstance(cmd, AskCommand):
                read.append((cmd, end))
            continue
        saved.inbox_offset = end
        action = cmd.action if isinstance(cmd, ControlCommand) else ""
        if action in ("pause", "resume"):
            saved.paused = action == "pause"
        elif action in ("auto_on", "auto_off"):
            auto = action == "auto_on"
        # a question read before this point but not asked yet was queued: queue it again
        saved.questions += [question_of(c) for c, e in read if e <= end]
        read = [(c, e) for c, e in read if e > end]
    saved.auto_questions = auto
    return saved


def restart_messages(messages: list[dict[str, Any]], results: dict[str, ToolResult],
                     full_output: Callable[[ToolResult], str]
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the conversation to go on with, the content of the next user message).

    A user message that was written but never answered is taken off and sent again; an
    assistant message's tool calls get their logged results (`full_output` reads a result
    whose text went to a blob), or an error saying they did not finish. The agent is told
    the process restarted unless the next message already holds text.
    """
    messages = list(messages)
    pending: list[dict[str, Any]] = []
    if messages and messages[-1].get("role") == "user":
        pending = list(messages.pop()["content"])
    elif messages and messages[-1].get("role") == "assistant":
        for b in messages[-1]["content"]:
            if b.get("type") != "tool_use":
                continue
            r = results.get(b["id"])
            if r is not None:
                pending.append({"type": "tool_result", "tool_use_id": b["id"],
                                "content": full_output(r), "is_error": not r.ok})
            else:
                pending.append({"type": "tool_result", "tool_use_id": b["id"],
                                "is_error": True, "content": NOT_RUN})
    if not any(b.get("type") == "text" for b in pending):
        pending.append({"type": "text", "text": RESTARTED})
    return messages, pending
