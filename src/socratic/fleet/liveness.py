"""Whether a process runs a campaign: the campaign holds its session
(socratic.ownership: a flock on session.lock for its life, dropped by the kernel when the
holder dies); for sessions without a lock file, the pid the runner started."""

from __future__ import annotations

import os
from pathlib import Path

from socratic.ownership import session_held

__all__ = ["pid_alive", "session_held"]


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
