"""What a report reads: which folders are sessions, and a session's files.

A path is a session when it holds `events.jsonl`; a folder without one whose subfolders
hold one is a fleet (every such subfolder, in name order). Everything else is bad input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE, read_jsonl


def read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The log's events and how many complete lines were skipped as unreadable.

    The one place the report reads events (an adapter: the typed contracts replace it)."""
    try:
        events, end = read_jsonl(path)
        with open(path, "rb") as fh:
            lines = sum(1 for raw in fh.read(end).splitlines() if raw.strip())
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    good = [e for e in events if isinstance(e.get("type"), str)]
    return good, lines - len(good)


def read_eval(path: Path) -> dict[str, Any] | None:
    """A saved evaluator result (evals/NNNN.json), or None when absent or unreadable: the
    event log holds what the report needs; the file only adds detail."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


@dataclass
class SessionFiles:
    dir: Path
    events: list[dict[str, Any]]
    skipped: int = 0
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.dir.name

    def candidate(self, sha: str) -> str | None:
        """An evaluated candidate's source, kept by the harness as candidates/<sha[:16]>.cu."""
        for name in (f"{sha[:16]}.cu", f"{sha}.cu"):
            path = self.dir / "candidates" / name
            try:
                return path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        return None

    def eval_result(self, rel: str) -> dict[str, Any] | None:
        if not rel or rel.startswith("/") or ".." in Path(rel).parts:
            return None  # only files inside the session
        return read_eval(self.dir / rel)


def load_session(path: Path) -> SessionFiles:
    """A session's events (and config.json when present); InputError when it has none."""
    log = path / EVENTS_FILE
    events, skipped = read_events(log)
    if not events:
        what = "empty" if log.stat().st_size == 0 else "no JSON events (not a JSON Lines log)"
        raise InputError(f"{log}: {what}")
    if not any(e["type"] == "campaign.start" for e in events):
        raise InputError(f"{log}: no campaign.start event: not a campaign log")
    config: dict[str, Any] = {}
    try:
        doc = json.loads((path / "config.json").read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
            config = doc["config"]
    except (OSError, ValueError):
        pass  # optional: only the questions mode of an attached campaign comes from it
    return SessionFiles(path, events, skipped, config)


def session_dirs(paths: list[Path]) -> list[Path]:
    """The session folders named by `paths`: sessions as given, fleets expanded."""
    out: list[Path] = []
    for path in paths:
        if not path.exists():
            raise InputError(f"{path}: no such file or folder")
        if not path.is_dir():
            raise InputError(f"{path}: not a folder (give a session folder or a folder of sessions)")
        if (path / EVENTS_FILE).is_file():
            out.append(path)
            continue
        members = sorted(p for p in path.iterdir() if (p / EVENTS_FILE).is_file())
        if not members:
            raise InputError(f"{path}: not a session (no {EVENTS_FILE}) and no session folders in it")
        out.extend(members)
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def load_sessions(paths: list[Path]) -> tuple[list[SessionFiles], list[str]]:
    """Every session named by `paths`, and notes on fleet members left out.

    A session named directly must be readable (InputError otherwise); a fleet member with
    no events yet (a queued campaign) is left out with a note."""
    direct = {p.resolve() for p in paths}
    sessions, notes = [], []
    for d in session_dirs(paths):
        try:
            sessions.append(load_session(d))
        except InputError as exc:
            if d.resolve() in direct:
                raise
            notes.append(f"left out: {exc}")
    if not sessions:
        raise InputError("no readable session in " + ", ".join(str(p) for p in paths)
                         + (f" ({notes[0]})" if notes else ""))
    return sessions, notes
