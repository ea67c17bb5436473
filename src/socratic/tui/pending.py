"""Questions in a session's inbox.jsonl that the harness has not logged yet (pure).

Whoever wrote them (this TUI, another TUI, `socratic inject` from another shell), the
harness logs every question it takes from the inbox as a `question` event with source
"human" and the same text, in inbox order; so each logged human question settles the
first unsettled inbox question with its text, and the rest are pending.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from socratic.contracts import AskCommand, parse_command
from socratic.tui.state import Question


def inbox_questions(commands: Iterable[Any]) -> list[dict]:
    """The question commands of an inbox the harness would take (non-empty text)."""
    return [c for c in commands if isinstance(parse_command(c), AskCommand)]


def pending_questions(inbox: list[dict], logged: list[Question]) -> list[dict]:
    unsettled: dict[str, int] = {}
    for q in logged:
        if q.source == "human":
            unsettled[q.text] = unsettled.get(q.text, 0) + 1
    pending = []
    for c in inbox:
        text = c["text"]
        if unsettled.get(text, 0) > 0:
            unsettled[text] -= 1
        else:
            pending.append(c)
    return pending
