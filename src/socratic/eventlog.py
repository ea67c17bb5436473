"""The campaign file contract: `events.jsonl` (harness writes, everyone reads) and
`inbox.jsonl` (TUI / `socratic inject` write, harness reads).

Both are JSON Lines, appended one object per line and flushed per line. Readers ignore
unknown types and tolerate a truncated last line: they stop before it and pick it up
once the writer has finished it (the returned offset points at its start).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from socratic import chain
from socratic.contracts import Event, InboxCommand, build_event, command_line

EVENTS_FILE = "events.jsonl"
INBOX_FILE = "inbox.jsonl"

TRIGGER_KINDS = ("start", "plateau", "declared_done", "suspicious_gain", "correctness_failure")


def read_jsonl(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete JSON-object lines of `path` from byte `offset`.

    Returns (objects, next_offset). A last line without its newline is left for the next
    call. Lines that are not JSON objects are skipped (a reader never dies of one).
    """
    records, next_offset, _ = read_jsonl_counted(path, offset)
    return records, next_offset


def read_jsonl_counted(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int, int]:
    """read_jsonl, plus how many complete, non-blank lines were not JSON objects."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    records, used, skipped = parse_jsonl(data)
    return records, offset + used, skipped


def parse_jsonl(data: bytes) -> tuple[list[dict[str, Any]], int, int]:
    """read_jsonl_counted over bytes (a packed session's log): the objects of the complete
    lines, how many bytes those lines take, and how many lines were not JSON objects."""
    records: list[dict[str, Any]] = []
    end = data.rfind(b"\n")
    if end < 0:
        return records, 0, 0
    skipped = 0
    for raw in data[: end + 1].splitlines():
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            obj = None
        if isinstance(obj, dict):
            records.append(obj)
        else:
            skipped += 1
    return records, end + 1, skipped


def append_jsonl(path: Path, record: dict[str, Any], fsync: bool = True) -> None:
    """Append one object as one line, flushed (it survives the writer being killed) and,
    unless fsync=False, fsync'd (it survives a power loss too). Appenders of one file
    take turns (flock), so two processes' lines never interleave."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # dropped when the file is closed
        # a line torn by a killed writer (a full disk) would swallow this one: both one
        # unreadable line, a question reported queued and never asked
        torn = not _ends_a_line(fh.fileno())
        fh.write((("\n" if torn else "") + line).encode("utf-8"))
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())


def _ends_a_line(fd: int) -> bool:
    """Whether the file is empty or its last byte ends a line."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _reversed_lines(fh: BinaryIO, size: int, block: int = 1 << 16) -> Iterator[bytes]:
    """The file's first `size` bytes split at newlines, last piece first (that piece is
    what follows the last newline: empty, or a line torn by a killed writer)."""
    pos, rest = size, b""
    while pos > 0:
        step = min(block, pos)
        pos -= step
        fh.seek(pos)
        lines = (fh.read(step) + rest).split(b"\n")
        rest = lines.pop(0) if pos > 0 else b""  # may start mid-line: completed next block
        yield from reversed(lines)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def log_tail(path: Path, size: int | None = None) -> tuple[int, float, bool]:
    """(last seq, last t, torn) of an event log, read from its end: cheap for a process
    that only appends. An event whose seq is damaged still counts: its successor's seq is
    one more. `torn`: the file does not end with a newline (a writer died mid-line)."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return 0, 0.0, False
    with fh:
        if size is None:
            size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return 0, 0.0, False
        fh.seek(size - 1)
        torn = fh.read(1) != b"\n"
        seq: int | None = None
        t: float | None = None
        after = 0  # complete events after the last one with a valid seq
        lines = _reversed_lines(fh, size)
        next(lines)  # what follows the last newline is not an event yet
        for raw in lines:
            try:
                e = json.loads(raw) if raw.strip() else None
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if not isinstance(e, dict):
                continue
            if t is None and _is_number(e.get("t")):
                t = float(e["t"])
            if seq is None:
                if isinstance(e.get("seq"), int) and not isinstance(e["seq"], bool):
                    seq = e["seq"] + after
                else:
                    after += 1
            if seq is not None and t is not None:
                break
    return (after if seq is None else seq), (t or 0.0), torn


@dataclass
class EventLog:
    """Appends events with increasing `seq`, `t` (seconds since campaign start) and `ts`.

    Opening an existing log (resume) continues its `seq` and its clock: `t` keeps
    growing from the last recorded value.

    Several processes may append to one log (a campaign, short-lived hook processes):
    each append locks the file (flock), and when another writer appended since this one's
    last event, continues after it: `seq` stays strictly increasing and `t` never goes
    back, whatever the interleaving. Holding the session (socratic.ownership) is a
    separate, coarser rule: who may write at all.

    Every event is flushed when appended. `fsync_every_s` = 0 also fsyncs every event; a
    positive value fsyncs at most once per that many seconds (on a slow or network disk an
    fsync costs milliseconds); `sync()` forces one.

    With the session's key (socratic.chain; `open` finds it), every line ends with its
    chain value, continued from the last line that verifies: a line another writer
    appended without the key is passed over, never chained onto.
    """

    path: Path
    seq: int = 0
    t0: float = field(default_factory=time.monotonic)
    fsync_every_s: float = 0.0
    _last_sync: float = field(default=0.0, repr=False)
    _size: int = field(default=-1, repr=False)  # file size after our last append
    _dirty: bool = field(default=False, repr=False)  # appended since the last fsync
    key: bytes | None = field(default=None, repr=False)  # the session's chain key
    _chain: str = field(default="", repr=False)       # the last valid chain value
    _chained_to: int = field(default=0, repr=False)   # bytes of the file walked for it
    _chained_lines: int = field(default=0, repr=False)
    sid: str | None = field(default=None, repr=False)   # the key's session id (its head)

    @classmethod
    def open(cls, session_dir: Path, fsync_every_s: float = 0.0) -> EventLog:
        path = Path(session_dir) / EVENTS_FILE
        log = cls(path, fsync_every_s=fsync_every_s)
        seq, t, _ = log_tail(path)  # continue seq and clock; damaged fields do not stop it
        log.seq = seq
        log.t0 = time.monotonic() - t
        log.sid, log.key = chain.session_key(Path(session_dir), _first_line(path))
        return log

    def _catch_up_chain(self, fh: BinaryIO, size: int) -> None:
        """Walk what other writers appended since our last look, to chain from the last
        line that verifies (a line appended without the key is passed over)."""
        if self.key is None or size <= self._chained_to:
            return
        fh.seek(self._chained_to)
        data = fh.read(size - self._chained_to)
        end = data.rfind(b"\n")
        if end < 0:
            return
        check = chain.walk(self.key, data[: end + 1], self._chain, self._chained_lines + 1)
        self._chain = check.last
        self._chained_to += end + 1
        self._chained_lines += data[: end + 1].count(b"\n")

    def write(self, event: Event) -> dict[str, Any]:
        """Log an event built as its record at the call site (its stamp is the log's)."""
        return self.append(event.TYPE, **event.body())

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Log one event, built through its declared class (socratic.contracts): an
        undeclared type or a field that does not match is a ContractError, and nothing is
        written. Returns the event as written."""
        with open(self.path, "ab") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # dropped when the file is closed
            size = os.fstat(fh.fileno()).st_size
            head = b""
            if size != self._size:  # someone else appended (or first append): catch up
                seq, t, torn = log_tail(self.path, size)
                self.seq = max(self.seq, seq)
                if t > time.monotonic() - self.t0:
                    self.t0 = time.monotonic() - t
                head = b"\n" if torn else b""  # end a torn line: it must not swallow ours
                with open(self.path, "rb") as rd:
                    self._catch_up_chain(rd, size)
            event = build_event(
                type_, seq=self.seq + 1, t=round(time.monotonic() - self.t0, 3),
                ts=datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **fields,
            ).to_dict()
            self.seq += 1
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            prev = self._chain
            if self.key is not None:
                line, self._chain = chain.sealed(self.key, self._chain, line)
                event[chain.CHAIN_FIELD] = self._chain
            data = head + line + b"\n"
            fh.write(data)
            fh.flush()
            now = time.monotonic()
            if self.fsync_every_s <= 0 or now - self._last_sync >= self.fsync_every_s:
                os.fsync(fh.fileno())
                self._last_sync = now
                self._dirty = False
            else:
                self._dirty = True
            self._size = size + len(data)
            if self.key is not None:
                self._chained_to = self._size
                self._chained_lines += data.count(b"\n")
                self._move_head(prev)
        return event

    def _move_head(self, prev: str) -> None:
        """The head beside the key follows the line just written (socratic.chain); a head
        that was not at `prev` (the value this line chains from) and is no value of the log
        means lines were cut off its end: the cut is carried forward."""
        if self.sid is None:
            return
        old = chain.read_head(self.sid)
        cut = old.cut if old is not None else ""
        if old is not None and not cut and old.last and old.last != prev:
            seen = chain.walk(self.key or b"", self.path.read_bytes()).seen
            if old.last not in seen:
                cut = chain.cut_message(old, self._chained_lines - 1)
        chain.write_head(self.sid, chain.Head(self._chained_lines, self._chain, cut))

    def sync_if_behind(self) -> None:
        """fsync the log if an event appended since the last fsync is not on disk yet (a
        writer that batches fsyncs calls it when idle)."""
        if self._dirty:
            self.sync()

    def sync(self) -> None:
        """fsync the log now (e.g. at the end of a campaign)."""
        if self.path.exists():
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._last_sync = time.monotonic()
        self._dirty = False


def _first_line(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.readline(1 << 20)
    except OSError:
        return None


def inject(session_dir: Path, command: InboxCommand) -> None:
    """Append one command to a session's inbox (question or control)."""
    append_jsonl(Path(session_dir) / INBOX_FILE, command_line(command))
