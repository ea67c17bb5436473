"""Who holds a session: one writer process at a time (a campaign, or a short-lived
process that appends to its log), and how everyone else learns whether it is alive.

The holder keeps an exclusive `flock` on `<session>/session.lock` for as long as it
writes. The kernel drops a flock when the process that took it dies (kill -9 included),
so a dead holder's claim is simply free again: no pid guessing, no stale-lock cleanup.
The file's content (pid, host, since, role) only serves the messages; `release()`
empties it, so what a later claimant finds there was left by a holder that died.

    with SessionOwner.claim(session_dir, role="hook", wait_s=30):
        EventLog.open(session_dir).append(...)

`live_owner(dir)` answers "is a campaign running here?" without taking anything
(`socratic inject`, the TUI). Appends to events.jsonl are serialized separately, per
event, by `EventLog` (see socratic.eventlog), so `seq` stays strictly increasing even
when writers follow each other quickly.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import socket
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from socratic.errors import InputError

LOCK_FILE = "session.lock"


@dataclass(frozen=True)
class Owner:
    """What a holder wrote into the lock file when it claimed the session."""

    pid: int | None
    host: str
    since: str
    role: str = "campaign"

    def describe(self) -> str:
        pid = f"pid {self.pid}" if self.pid is not None else "pid unknown"
        return f"{self.role} {pid} on {self.host or 'an unknown host'} since {self.since or '?'}"


class SessionBusy(InputError):
    """Another live process holds the session (exit code 2, one line naming it)."""

    def __init__(self, session_dir: Path, owner: Owner) -> None:
        self.owner = owner
        super().__init__(
            f"{session_dir}: already held by a running {owner.describe()}; watch it with "
            f"`socratic watch {shlex.quote(str(session_dir))}` or end it with "
            f"`socratic inject {shlex.quote(str(session_dir))} --stop`")


def holder_record(raw: bytes) -> tuple[int | None, str, str, dict[str, Any]] | None:
    """(pid, host, since, the whole record) from the JSON a lock holder wrote into its lock
    file (a session's or a GPU's); None when it wrote nothing readable."""
    try:
        d = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(d, dict):
        return None
    pid = d.get("pid")
    return (pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            str(d.get("host") or ""), str(d.get("since") or ""), d)


def _parse(raw: bytes) -> Owner | None:
    rec = holder_record(raw)
    if rec is None:
        return None
    pid, host, since, d = rec
    return Owner(pid, host, since, str(d.get("role") or "campaign"))


def _read_owner(fd: int) -> Owner:
    """The holder's details; it writes them right after locking, so wait a moment for them."""
    for _ in range(25):
        owner = _parse(os.pread(fd, 4096, 0))
        if owner is not None:
            return owner
        time.sleep(0.02)
    return Owner(None, "", "")


def _lock_error(path: Path, exc: OSError) -> InputError:
    return InputError(f"{path}: cannot lock the session ({exc.strerror or exc})")


class SessionOwner:
    """An exclusive claim on a session, held until `release()` (or process exit)."""

    def __init__(self, session_dir: Path, fd: int, owner: Owner) -> None:
        self.dir = session_dir
        self.owner = owner
        self._fd: int | None = fd

    @classmethod
    def claim(cls, session_dir: Path, *, role: str = "campaign",
              wait_s: float = 0.0) -> SessionOwner:
        """Claim the session, or raise SessionBusy naming the live holder (after waiting up
        to `wait_s` seconds for it to let go). The directory must exist."""
        session_dir = Path(session_dir)
        path = session_dir / LOCK_FILE
        try:  # O_CLOEXEC: tools and evaluators started by the holder must not inherit it
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise _lock_error(path, exc) from None
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    os.close(fd)
                    raise _lock_error(path, exc) from None
                if time.monotonic() >= deadline:
                    owner = _read_owner(fd)
                    os.close(fd)
                    raise SessionBusy(session_dir, owner) from None
                time.sleep(0.02)
        owner = Owner(os.getpid(), socket.gethostname(),
                      datetime.now(timezone.utc).isoformat(timespec="seconds"), role)
        try:  # the record only names the holder in messages: a full disk keeps the claim
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(asdict(owner)).encode(), 0)
        except OSError:
            pass
        return cls(session_dir, fd, owner)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let go (idempotent). The emptied file tells later readers nobody died holding it."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # drops the flock

    def __enter__(self) -> SessionOwner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:  # a holder dropped without release() must not leak the claim
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)  # type: ignore[arg-type]


def live_owner(session_dir: Path) -> Owner | None:
    """The live holder of a session, or None when no process holds it (never held, ended,
    or its holder died). Takes nothing and creates nothing."""
    path = Path(session_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return _read_owner(fd)
            return None  # a filesystem without locks: nobody can hold it either
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


__all__ = ["LOCK_FILE", "Owner", "SessionBusy", "SessionOwner", "live_owner"]


def session_held(session_dir: Path) -> bool | None:
    """True while a live process holds the session, False when nobody does, None when the
    session has no lock file (never started, or written by a version without one)."""
    if not (Path(session_dir) / LOCK_FILE).exists():
        return None
    return live_owner(Path(session_dir)) is not None
