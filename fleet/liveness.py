"""Whether a process holds a session: the campaign holds an exclusive flock on
`<session>/session.lock` for its life (the kernel drops it when the holder dies)."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

SESSION_LOCK = "session.lock"


def session_held(session: Path) -> bool | None:
    """True while a live process holds the session, False when nobody does, None when the
    session has no lock file (never started, or written by a version without one)."""
    try:
        fd = os.open(Path(session) / SESSION_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return True if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN) else None
    finally:
        os.close(fd)


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
