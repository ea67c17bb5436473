"""Reading events.jsonl for the TUI: `socratic.eventlog.read_jsonl`, plus how many
complete lines were skipped because they are not JSON objects (the screens say so)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic import chain
from socratic.eventlog import EVENTS_FILE, parse_jsonl, read_jsonl_counted
from socratic.sessionfiles import SessionReader


@dataclass
class Chunk:
    events: list[dict[str, Any]] = field(default_factory=list)
    offset: int = 0    # where the next read starts (a last line without its newline waits)
    skipped: int = 0   # complete, non-blank lines that are not JSON objects
    record: chain.ChainCheck | None = None   # the chain's verdict (a whole session's read)


def read_events(path: Path, offset: int = 0) -> Chunk:
    """Complete lines of `path` from byte `offset`, as read_jsonl reads them."""
    events, next_offset, skipped = read_jsonl_counted(path, offset)
    return Chunk(events=events, offset=next_offset, skipped=skipped)


def read_session_events(session: SessionReader) -> Chunk:
    """A finished session's whole log (a folder's or a pack's), as read_events reads it,
    without the lines its chain disowns (socratic.chain: written without the session's
    key); `record` says what the chain found."""
    data = session.read_bytes(EVENTS_FILE)
    check = session.record(data)
    events, _, skipped = parse_jsonl(chain.without_lines(data, check.bad))
    return Chunk(events=events, skipped=skipped, record=check)


def describe_empty(path: Path | str, skipped: int) -> str:
    """What to say about a log with no event in it."""
    if skipped:
        s = "s" if skipped != 1 else ""
        return (f"{path}: no socratic event in it ({skipped} line{s} skipped: not JSON "
                "objects); is it a session's events.jsonl?")
    return f"{path} is empty: nothing to replay"
