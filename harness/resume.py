"""`socratic run --resume`: what a campaign's files say about where it was.

`resume_state` is a pure function of the event log and state.json; `restart_messages` of
the stored conversation and the logged tool results. The campaign rebuilds itself from
both (campaign.py); nothing here touches a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from socratic.contracts import (
    EvalEnd,
    EvalRetract,
    EvalStart,
    Event,
    Question,
    Retractions,
    ToolCall,
    ToolResult,
    Usage,
)
from socratic.harness.inbox import Saved

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


def resume_state(events: Iterable[Event], state: Any) -> ResumeState:
    """The campaign's counters, evaluations, tool results and questions asked, from its
    (parsed) events; the inbox's offset, queue and flags from state.json (`state`, as
    parsed)."""
    r = ResumeState(saved=Saved.from_dict(state))
    for e in events:
        if isinstance(e, ToolCall):
            r.counters.tool_calls += 1
        elif isinstance(e, Usage):
            r.counters.turns += 1
            r.counters.cost_usd += e.cost_usd
        elif isinstance(e, ToolResult):
            r.results[e.id] = e
        elif isinstance(e, Question):
            if e.bank_id:
                r.asked_ids.append(e.bank_id)
            r.asked_texts.append(e.text)
        elif isinstance(e, EvalStart):
            r.eval_seq = max(r.eval_seq, e.n)
        elif isinstance(e, EvalEnd):
            r.eval_ends.append(e)
        elif isinstance(e, EvalRetract):
            r.retractions.add(e)
    return r


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
