"""The campaign file contract: `events.jsonl` (harness writes, everyone reads) and
`inbox.jsonl` (TUI / `socratic inject` write, harness reads).

Both are JSON Lines, appended one object per line and flushed per line. Readers ignore
unknown types and tolerate a truncated last line: they stop before it and pick it up
once the writer has finished it (the returned offset points at its start).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

EVENTS_FILE = "events.jsonl"
INBOX_FILE = "inbox.jsonl"

EVENT_TYPES = (
    "campaign.start", "agent.text", "tool.call", "tool.result", "eval.start",
    "eval.scenario", "eval.end", "trigger", "question", "stophook", "usage",
    "control", "campaign.end",
)
TRIGGER_KINDS = ("start", "plateau", "declared_done", "suspicious_gain", "correctness_failure")


def read_jsonl(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete JSON-object lines of `path` from byte `offset`.

    Returns (objects, next_offset). A last line without its newline is left for the next
    call. Lines that are not JSON objects are skipped (a reader never dies of one).
    """
    records: list[dict[str, Any]] = []
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    end = data.rfind(b"\n")
    if end < 0:
        return records, offset
    for raw in data[: end + 1].splitlines():
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(obj, dict):
            records.append(obj)
    return records, offset + end + 1


def append_jsonl(path: Path, record: dict[str, Any], fsync: bool = True) -> None:
    """Append one object as one line, flushed (it survives the writer being killed) and,
    unless fsync=False, fsync'd (it survives a power loss too)."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())


@dataclass
class EventLog:
    """Appends events with increasing `seq`, `t` (seconds since campaign start) and `ts`.

    Opening an existing log (resume) continues its `seq` and its clock: `t` keeps
    growing from the last recorded value.

    Every event is flushed when appended. `fsync_every_s` = 0 also fsyncs every event; a
    positive value fsyncs at most once per that many seconds (on a slow or network disk an
    fsync costs milliseconds); `sync()` forces one.
    """

    path: Path
    seq: int = 0
    t0: float = field(default_factory=time.monotonic)
    fsync_every_s: float = 0.0
    _last_sync: float = field(default=0.0, repr=False)

    @classmethod
    def open(cls, session_dir: Path, fsync_every_s: float = 0.0) -> "EventLog":
        path = Path(session_dir) / EVENTS_FILE
        log = cls(path, fsync_every_s=fsync_every_s)
        if path.exists():
            events, _ = read_jsonl(path)
            if events:  # continue seq and clock; a damaged field must not stop a resume
                seqs = [e["seq"] for e in events if isinstance(e.get("seq"), int)]
                log.seq = max(seqs + [len(events)])
                ts = [e["t"] for e in events if isinstance(e.get("t"), (int, float))
                      and not isinstance(e.get("t"), bool) and e["t"] == e["t"]]
                log.t0 = time.monotonic() - float(ts[-1] if ts else 0.0)
        return log

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        event = {
            "seq": self.seq,
            "t": round(time.monotonic() - self.t0, 3),
            "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "type": type_,
            **fields,
        }
        now = time.monotonic()
        sync = self.fsync_every_s <= 0 or now - self._last_sync >= self.fsync_every_s
        append_jsonl(self.path, event, fsync=sync)
        if sync:
            self._last_sync = now
        return event

    def sync(self) -> None:
        """fsync the log now (e.g. at the end of a campaign)."""
        if self.path.exists():
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._last_sync = time.monotonic()


def inject(session_dir: Path, command: dict[str, Any]) -> None:
    """Append one command to a session's inbox (question or control)."""
    append_jsonl(Path(session_dir) / INBOX_FILE, command)
