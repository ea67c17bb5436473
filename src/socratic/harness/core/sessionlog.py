"""How short-lived processes (agent hooks, the workspace's `./evaluate`) write a session:
through the same door as a campaign. Each holds the session (socratic.ownership: flock on
session.lock; a hook waits for another hook's turn) while it reads and changes the
session's state, and appends through socratic.eventlog.EventLog, which continues `seq` and
`t` after whoever wrote last.

The campaign clock `t` of an attached campaign is wall time since `campaign.start`, so the
gaps between hook calls count (EventLog never lets it go back).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import Event
from socratic.eventlog import EventLog
from socratic.ownership import SessionOwner

# a hook waits this long for another writer of the session (a hook evaluating, say)
CLAIM_WAIT_S = 3600.0


@dataclass
class SessionLog:
    """Appends to `dir/events.jsonl` while holding the session. `start_epoch`: wall time of
    campaign.start (None: the clock goes on from the log's last `t`)."""

    dir: Path
    start_epoch: float | None = None
    role: str = "hook"
    _depth: int = field(default=0, repr=False)
    _owner: SessionOwner | None = field(default=None, repr=False)
    _log: EventLog | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.log.path

    @property
    def log(self) -> EventLog:
        if self._log is None:
            self._log = EventLog.open(self.dir)
            if self.start_epoch is not None:
                wall = time.time() - self.start_epoch
                if wall > time.monotonic() - self._log.t0:
                    self._log.t0 = time.monotonic() - wall
        return self._log

    @contextmanager
    def locked(self, wait_s: float = CLAIM_WAIT_S) -> Iterator[None]:
        """Hold the session (re-entrant within this process); SessionBusy (one line) when
        another writer keeps it past `wait_s`."""
        if self._depth == 0:
            self._owner = SessionOwner.claim(Path(self.dir), role=self.role, wait_s=wait_s)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._owner is not None:
                self._owner.release()
                self._owner = None

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        with self.locked():
            return self.log.append(type_, **fields)

    def write(self, event: Event) -> dict[str, Any]:
        with self.locked():
            return self.log.write(event)

    def sync(self) -> None:
        self.log.sync()
