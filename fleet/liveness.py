"""Whether a process runs a campaign: the campaign holds its session
(socratic.ownership: a flock on session.lock for its life, dropped by the kernel when the
holder dies); for sessions without a lock file, the pid the runner started."""

from __future__ import annotations

import os
from pathlib import Path

from socratic.ownership import LOCK_FILE, live_owner


def session_held(session: Path) -> bool | None:
    """True while a live process holds the session, False when nobody does, None when the
    session has no lock file (never started, or written by a version without one)."""
    if not (Path(session) / LOCK_FILE).exists():
        return None
    return live_owner(Path(session)) is not None


def pid_alive(pid: int) -> bool:
    """A process with this pid exists on this host and is not a zombie (an orphaned child
    whose parent died may wait unreaped where nothing reaps orphans)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]
