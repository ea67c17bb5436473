"""GPU turns: evaluations that would run on the same GPU take turns for their GPU part.

Two evaluations timing kernels on one GPU at once spoil each other's numbers without
saying so. Every evaluator (the real one and the fake one), whoever started it (a fleet,
`socratic run`, an attached agent's hook, a plain `socratic eval`), holds an exclusive
`flock` on one file per GPU while its GPU work runs:

    $SOCRATIC_CACHE/gpu-locks/<key>.lock      (default ~/.cache/socratic/gpu-locks)

or under $SOCRATIC_GPU_LOCKS when set (users who share a node point it at one folder that
all of them can write, e.g. a mode-1777 /tmp/socratic-gpu-locks; tests isolate with it).

The key is the GPU's UUID where the evaluator can read it (the same physical GPU has one
key whatever CUDA_VISIBLE_DEVICES says), else `index-N` from CUDA_VISIBLE_DEVICES. The
kernel drops a flock when its holder dies, so a killed evaluation never leaves a stale
lock. The holder writes who it is into the file (pid, host, since, what) for the waiters'
messages; the time spent waiting is reported beside the measurement, never inside it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from socratic.ownership import holder_record

LOCKS = "gpu-locks"


def cache_base() -> Path:
    """$SOCRATIC_CACHE, else $XDG_CACHE_HOME/socratic, else ~/.cache/socratic."""
    root = os.environ.get("SOCRATIC_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "socratic"


def locks_dir() -> Path:
    explicit = os.environ.get("SOCRATIC_GPU_LOCKS")
    return Path(explicit) if explicit else cache_base() / LOCKS


def visible_gpu_key(env: dict[str, str] | None = None) -> str:
    """The key of the first visible GPU when its UUID cannot be read: the first entry of
    CUDA_VISIBLE_DEVICES (an index, or a UUID as nvidia-smi prints it), else index 0."""
    value = (os.environ if env is None else env).get("CUDA_VISIBLE_DEVICES", "")
    first = value.split(",")[0].strip()
    if first.upper().startswith(("GPU-", "MIG-")):
        return first
    return f"index-{first if first.isdigit() else '0'}"


def format_uuid(raw: bytes) -> str:
    """16 UUID bytes as nvidia-smi spells them (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)."""
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _file_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", key) + ".lock"


@dataclass(frozen=True)
class Holder:
    """Who holds a GPU's turn, as the holder wrote it."""

    pid: int | None
    host: str
    since: str
    what: str

    def describe(self) -> str:
        pid = f"pid {self.pid}" if self.pid is not None else "pid ?"
        what = f"{self.what}, " if self.what else ""
        return f"{what}{pid} on {self.host or '?'} since {self.since or '?'}"


def _parse(raw: bytes) -> Holder | None:
    rec = holder_record(raw)
    if rec is None:
        return None
    pid, host, since, d = rec
    return Holder(pid, host, since, str(d.get("what") or ""))


def _read_holder(fd: int) -> Holder | None:
    """The holder writes its details right after locking: give it a moment."""
    for _ in range(10):
        holder = _parse(os.pread(fd, 4096, 0))
        if holder is not None:
            return holder
        time.sleep(0.01)
    return None


@dataclass
class GpuTurn:
    key: str
    path: Path
    wait_s: float = 0.0      # how long this evaluation waited for its turn
    waited_for: Holder | None = None


@contextmanager
def gpu_turn(key: str, what: str = "",
             on_wait: Callable[[str, Holder | None], None] | None = None) -> Iterator[GpuTurn]:
    """Hold the GPU `key` for the block. When another process holds it, calls
    on_wait(key, holder) once and blocks until the turn comes; the wait is in `wait_s`.
    A lock directory that cannot be created or locked (read-only cache, a filesystem
    without flock) is not a reason to refuse the evaluation: the block runs unguarded."""
    d = locks_dir()
    path = d / _file_name(key)
    turn = GpuTurn(key, path)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        yield turn
        return
    try:
        t0 = time.monotonic()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                yield turn  # no locks on this filesystem
                return
            turn.waited_for = _read_holder(fd)
            if on_wait:
                on_wait(key, turn.waited_for)
            fcntl.flock(fd, fcntl.LOCK_EX)
            turn.wait_s = time.monotonic() - t0
        me = Holder(os.getpid(), socket.gethostname(),
                    datetime.now(timezone.utc).isoformat(timespec="seconds"), what)
        try:  # the record only names the holder: a full disk keeps the turn
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(asdict(me)).encode(), 0)
        except OSError:
            pass
        try:
            yield turn
        finally:
            os.ftruncate(fd, 0)  # an empty file: nobody holds it (a dead holder leaves text)
    finally:
        os.close(fd)  # drops the flock


def current_holder(key: str) -> Holder | None:
    """The live holder of a GPU's turn, or None. Takes nothing and creates nothing."""
    try:
        fd = os.open(locks_dir() / _file_name(key), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return _read_holder(fd) or Holder(None, "", "", "")
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
