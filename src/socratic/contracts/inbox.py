"""inbox.jsonl: what the TUI and `socratic inject` append and the harness reads, one command
per line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from socratic.contracts.common import Record

CONTROL_ACTIONS = ("pause", "resume", "stop", "evaluate", "auto_on", "auto_off")


@dataclass(kw_only=True)
class AskCommand(Record):
    """`{"type": "question", "text", "bank_id"?, "trigger"?}`: a question for the agent."""

    TYPE: ClassVar[str] = "question"
    text: str
    bank_id: str | None = None
    trigger: str | None = None      # "declared_done": it answers a stall's stop attempts


@dataclass(kw_only=True)
class ControlCommand(Record):
    """`{"type": "control", "action"}`: one of CONTROL_ACTIONS."""

    TYPE: ClassVar[str] = "control"
    action: str


InboxCommand = AskCommand | ControlCommand


def command_line(command: InboxCommand) -> dict[str, Any]:
    """The command as its inbox line."""
    return {"type": command.TYPE, **command.to_dict()}


def parse_command(data: Any) -> InboxCommand | None:
    """One inbox line as the command the harness acts on; None for anything else (a line
    it skips). A question's text is what counts: a bank id or trigger of another type is
    dropped, not the question."""
    if not isinstance(data, dict):
        return None
    if data.get("type") == "question":
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            return None
        bank_id, trigger = data.get("bank_id"), data.get("trigger")
        return AskCommand(text=text, bank_id=bank_id if isinstance(bank_id, str) else None,
                          trigger=trigger if isinstance(trigger, str) else None)
    if data.get("type") == "control" and data.get("action") in CONTROL_ACTIONS:
        return ControlCommand(action=str(data["action"]))
    return None
