"""The one door through which short-lived processes (agent hooks, the workspace's
`./evaluate`) write a session: an exclusive lock on the session, held while a process
reads and changes the session's state, and events appended through
socratic.eventlog.EventLog with `seq` continued from the log's last line.

Several hook processes may run at once (parallel tool calls) and the TUI and `socratic
inject` append to the inbox beside them; under the lock `seq` stays strictly increasing
whatever the interleaving, and a process that dies releases the lock with it (flock).
The campaign clock `t` is wall time since `campaign.start`, so the gaps between hook
calls count.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from socratic.eventlog import EVENTS_FILE, EventLog

LOCK_FILE = ".session.lock"
_TAIL_BYTES = 65536


def last_seq_t(path: Path) -> tuple[int, float]:
    """(seq, t) of the log's last complete event; (0, 0.0) for an empty or missing log."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - _TAIL_BYTES))
            lines = fh.read().split(b"\n")
    except OSError:
        return 0, 0.0
    for raw in reversed(lines):
        try:
            e = json.loads(raw)
        except ValueError:
            continue  # empty, torn or cut at the window's start
        if isinstance(e, dict) and isinstance(e.get("seq"), int):
            t = e.get("t")
            return e["seq"], float(t) if isinstance(t, (int, float)) else 0.0
    return 0, 0.0


@dataclass
class SessionLog:
    """Appends to `dir/events.jsonl` under the session lock. `start_epoch` is the wall time
    of campaign.start (None before it: t counts from the first event)."""

    dir: Path
    start_epoch: float | None = None
    _depth: int = field(default=0, repr=False)
    _fd: int | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return Path(self.dir) / EVENTS_FILE

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the session's writer lock (re-entrant within this process)."""
        if self._depth == 0:
            self._fd = os.open(Path(self.dir) / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                self._fd = None

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        with self.locked():
            seq, last_t = last_seq_t(self.path)
            now_t = time.time() - self.start_epoch if self.start_epoch else last_t
            log = EventLog(self.path, seq=seq, t0=time.monotonic() - max(now_t, last_t))
            return log.append(type_, **fields)
