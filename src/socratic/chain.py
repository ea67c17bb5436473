"""The event log's chain: each line of events.jsonl ends with `"chain": HEX`, an
HMAC-SHA256 keyed by the session's secret over the previous valid line's chain value and
the line's own bytes without that field. Whoever lacks the key (the agent: the key folder
is out of its reach) cannot write a line that verifies, nor rewrite one.

- The key: `$XDG_STATE_HOME/socratic/keys/<session-id>.key` (default
  `~/.local/state/socratic/keys/`; folder 0700, file 0600), made when the session is laid
  out; `<session-id>` is random and recorded in campaign.start (`session_id`). An index
  file `keys/path-<sha256 of the session folder's real path>` names the id too, so a log
  rewritten wholesale (another id, or none) still meets its key.
- A line that does not verify is skipped and the chain goes on from the last valid value:
  the harness's own later lines still verify, and readers drop exactly the foreign ones.
- A session with no key on this machine (an old session, a pack opened elsewhere, the
  bundled demo) is `unverified`, never an error.
- The head: `keys/<session-id>.head` (beside the key, as far out of the agent's reach)
  holds the log's last chain value and line count, rewritten after every keyed append. The
  chain vouches for each line's predecessors, not for how many follow: a log whose last
  valid value is not the head's had lines cut off its end (`TRUNCATED`). A writer that
  finds the head ahead of the log carries the cut forward (`cut`), so appending after a
  truncation does not hide it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from socratic.contracts import Parsed, parse_event_lines

CHAIN_FIELD = "chain"
# what the writer appends before the line's closing brace: `,"chain":"<64 hex>"}`
_TAIL = re.compile(rb',"chain":"([0-9a-f]{64})"\}$')
_ID = re.compile(r"^[0-9a-f]{32}$")

VERIFIED, UNVERIFIED, BROKEN = "verified", "unverified", "broken"
NO_KEY = "no key on this machine for this session"


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                            ".local", "state")
    return Path(base) / "socratic"


def key_dir() -> Path:
    return state_home() / "keys"


def _path_index(session_dir: Path) -> Path:
    real = str(Path(session_dir).resolve())
    return key_dir() / ("path-" + hashlib.sha256(real.encode()).hexdigest()[:32])


def _private_folder(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def new_session_key(session_dir: Path) -> str:
    """Make a fresh session id and its key (and the path index); returns the id."""
    sid = secrets.token_hex(16)
    _private_folder(key_dir())
    _write_private(key_dir() / f"{sid}.key", secrets.token_hex(32).encode())
    _write_private(_path_index(session_dir), sid.encode())
    return sid


def load_key(sid: str | None) -> bytes | None:
    if not sid or not _ID.match(sid):
        return None
    try:
        return bytes.fromhex((key_dir() / f"{sid}.key").read_text().strip())
    except (OSError, ValueError):
        return None


def indexed_id(session_dir: Path) -> str | None:
    """The session id this machine gave the session at this path, if any."""
    try:
        sid = _path_index(session_dir).read_text().strip()
    except OSError:
        return None
    return sid if _ID.match(sid) else None


def logged_id(first_line: bytes) -> str | None:
    """`session_id` of a log's first line (campaign.start), None when it names none."""
    try:
        obj = json.loads(first_line)
    except (ValueError, UnicodeDecodeError):
        return None
    sid = obj.get("session_id") if isinstance(obj, dict) else None
    return sid if isinstance(sid, str) and _ID.match(sid) else None


def session_key(session_dir: Path, first_line: bytes | None = None) -> tuple[str | None, bytes | None]:
    """(session id, key) for a session on this machine: the path index first (a log
    rewritten under another id still meets its key), then the id its campaign.start names
    (a session folder moved); (None, None) when this machine holds no key for it."""
    sid = indexed_id(session_dir)
    key = load_key(sid)
    if key is None and first_line is not None:
        sid = logged_id(first_line)
        key = load_key(sid)
    return (sid, key) if key is not None else (None, None)


def link(key: bytes, prev: str, body: bytes) -> str:
    """The chain value of a line whose bytes without the field are `body`."""
    return hmac.new(key, prev.encode() + b"\n" + body, hashlib.sha256).hexdigest()


def sealed(key: bytes, prev: str, line: bytes) -> tuple[bytes, str]:
    """`line` (one JSON object, no newline) with its chain value; and that value."""
    value = link(key, prev, line)
    return line[:-1] + b',"chain":"' + value.encode() + b'"}', value


def split(line: bytes) -> tuple[bytes, str | None]:
    """(the line's bytes without the chain field, the value) or (line, None)."""
    m = _TAIL.search(line)
    if m is None:
        return line, None
    return line[: m.start()] + b"}", m.group(1).decode()


@dataclass
class ChainCheck:
    """What the chain says of a log: `status` verified | unverified | broken; the first bad
    line (1-based) and why in one line; the lines that failed (their numbers)."""

    status: str
    lines: int = 0
    first_bad: int | None = None
    why: str = ""
    bad: list[int] = field(default_factory=list)
    last: str = ""               # the last valid chain value (a writer continues from it)
    session_id: str | None = None
    seen: set[str] = field(default_factory=set, repr=False)   # every valid chain value

    def describe(self) -> str:
        if self.status == VERIFIED:
            return f"verified ({self.lines} lines chained with the session's key)"
        if self.status == UNVERIFIED:
            return f"unverified ({self.why})" if self.why else "unverified"
        more = f"; {len(self.bad) - 1} more line(s) after it" if len(self.bad) > 1 else ""
        return f"BROKEN at line {self.first_bad}: {self.why}{more}"


def walk(key: bytes, data: bytes, prev: str = "", start_line: int = 1) -> ChainCheck:
    """Verify the complete lines of `data` (a log, or its part from a line on) from `prev`.
    A line that is not JSON (torn by a killed writer) is passed over; a JSON line whose
    value does not follow is bad and the chain goes on from the last valid value."""
    out = ChainCheck(VERIFIED, last=prev)
    end = data.rfind(b"\n")
    for i, raw in enumerate(data[: end + 1].split(b"\n")[:-1] if end >= 0 else []):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        body, value = split(line)
        try:
            obj = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            continue  # torn: no event, nothing to trust or forge
        out.lines += 1
        if value is not None and hmac.compare_digest(value, link(key, out.last, body)):
            out.last = value
            out.seen.add(value)
            continue
        n = start_line + i
        out.bad.append(n)
        if out.first_bad is None:
            out.first_bad = n
            kind = obj.get("type") if isinstance(obj, dict) else None
            what = f" ({kind})" if isinstance(kind, str) else ""
            out.why = (f"line {n}{what} carries no chain value: written without the "
                       f"session's key" if value is None else
                       f"line {n}{what}: its chain value does not follow the line before: "
                       f"written or changed without the session's key")
    if out.bad:
        out.status = BROKEN
    return out


def verify(session_dir: Path | None, data: bytes) -> ChainCheck:
    """The chain of a log's bytes, with this machine's key for the session at
    `session_dir` (None: a pack or a copy without a place: unverified)."""
    first = data.split(b"\n", 1)[0]
    if session_dir is None:
        return ChainCheck(UNVERIFIED, why=NO_KEY)
    sid, key = session_key(session_dir, first)
    if key is None:
        return ChainCheck(UNVERIFIED, why=NO_KEY)
    head = read_head(sid)   # before any re-read of the log: the head never runs ahead of it
    check = walk(key, data)
    check.session_id = sid
    if sid is not None:
        _check_head(check, head, session_dir)
    named = logged_id(first)
    if named != sid and check.status == VERIFIED and check.lines:
        # every line verified under this path's key, yet the start names another id
        check.status, check.first_bad = BROKEN, 1
        check.bad = [1]
        check.why = "line 1 (campaign.start) names another session id than its key's"
    return check


@dataclass(frozen=True)
class Head:
    """What the last keyed writer left beside the key: the log's line count, its last chain
    value, and a cut found earlier ("" when none)."""

    lines: int
    last: str
    cut: str = ""


def head_path(sid: str) -> Path:
    return key_dir() / f"{sid}.head"


def read_head(sid: str | None) -> Head | None:
    if not sid or not _ID.match(sid):
        return None
    try:
        d = json.loads(head_path(sid).read_text())
        return Head(int(d["lines"]), str(d["last"]), str(d.get("cut") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None


HEAD_BYTES = 1024   # the head is rewritten in place, padded: one write, no rename (a hook's latency)


def write_head(sid: str, head: Head) -> None:
    """Best effort: a writer that cannot write the key folder (it could not seal either).
    No fsync: a head lost in a crash lags the log, which is no cut."""
    data = json.dumps({"lines": head.lines, "last": head.last, "cut": head.cut[:800]}).encode()
    try:
        fd = os.open(head_path(sid), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, data.ljust(HEAD_BYTES), 0)
        finally:
            os.close(fd)
    except OSError:
        pass


def cut_message(head: Head, lines: int) -> str:
    return (f"TRUNCATED: the log ends at line {lines}, the session's head (kept beside its "
            f"key) says it reached line {head.lines} (chain {head.last[:12]}): lines were "
            f"cut off its end")


def _check_head(check: ChainCheck, head: Head | None, session_dir: Path) -> None:
    """A log whose valid values do not reach the head's is cut (or the cut is on record)."""
    if head is None or not head.last:
        return
    why = head.cut
    if not why and head.last not in check.seen:
        try:  # `data` may be older than the head: what the file holds now decides
            now = walk(check_key(session_dir, check.session_id),
                       (Path(session_dir) / "events.jsonl").read_bytes())
            if head.last in now.seen:
                return
        except (OSError, ValueError):
            pass
        why = cut_message(head, check.lines)
    if not why:
        return
    check.status = BROKEN
    if check.first_bad is None:
        check.first_bad, check.why = check.lines + 1, why
    else:
        check.why = f"{check.why}; {why}"


def check_key(session_dir: Path, sid: str | None) -> bytes:
    key = load_key(sid)
    if key is None:
        raise ValueError(NO_KEY)
    return key


def without_lines(data: bytes, bad: list[int]) -> bytes:
    """The log's bytes with the lines numbered `bad` (1-based) left out."""
    if not bad:
        return data
    drop = set(bad)
    parts = data.split(b"\n")
    return b"\n".join(p for i, p in enumerate(parts, 1) if i not in drop or i == len(parts))


def read_trusted(session_dir: Path, data: bytes | None = None,
                 place: Path | None = None) -> tuple[Parsed, ChainCheck]:
    """The typed events of a session's log that its chain vouches for (every event when
    the session has no key here), and the chain's verdict. `data`: the log's bytes when
    already read (a pack's); `place`: the folder whose key applies (None with `data`:
    unverified)."""
    path = Path(session_dir) / "events.jsonl"
    if data is None:
        data = path.read_bytes()
        place = Path(session_dir)
    check = verify(place, data)
    parsed, _ = parse_event_lines(without_lines(data, check.bad), str(path))
    return parsed, check
