"""What a report reads: which folders are sessions, and a session's files.

A path is a session when it holds `events.jsonl` or is a pack of one (`NAME.socratic`,
socratic.sessionfiles); a folder without one whose subfolders (or packs) are sessions is a
fleet (every such member, in name order). Everything else is bad input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.chain import UNVERIFIED, ChainCheck
from socratic.contracts import SCHEMA, CampaignStart, ContractError, EvalResult, Event, parse_eval
from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE
from socratic.resources import PACK_SUFFIX
from socratic.sessionfiles import SessionReader, is_pack, open_session

FLEET_MANIFEST = "fleet.json"  # written by `socratic fleet run` (fleet/folder.py)


def read_events(session: SessionReader) -> tuple[list[Event], int, ChainCheck]:
    """The log's typed events that its chain vouches for (socratic.chain: all of them when
    this machine holds no key for the session), how many lines were skipped (not JSON, or
    an event that does not match its declaration), and the chain's verdict; events of types
    this version does not know are ignored, as every reader ignores them."""
    try:
        parsed, check = session.trusted()
    except OSError as exc:
        raise InputError(f"{session.where(EVENTS_FILE)}: cannot read ({exc.strerror or exc})") from None
    return parsed.events, parsed.skipped, check


def read_result(session: SessionReader, rel: str) -> EvalResult | None:
    """A saved evaluator result (evals/NNNN.json), or None when absent or not a
    `socratic.eval/1` document: the event log holds what the report needs; the file only
    adds detail."""
    try:
        return parse_eval(session.read_json(rel), session.where(rel))
    except (OSError, ValueError, ContractError):
        return None


@dataclass
class SessionFiles:
    dir: Path   # the session folder, or its pack file
    events: list[Event]
    skipped: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    fleet: dict[str, Any] = field(default_factory=dict)  # its campaign in the fleet's manifest
    reader: SessionReader | None = None   # None: the folder `dir`
    record: ChainCheck = field(default_factory=lambda: ChainCheck(UNVERIFIED))
    damaged: list[str] = field(default_factory=list)   # files that are there but unreadable
    _results: dict[str, EvalResult | None] = field(default_factory=dict, repr=False)   # read once

    @property
    def files(self) -> SessionReader:
        return self.reader if self.reader is not None else open_session(self.dir)

    @property
    def name(self) -> str:
        return self.files.name

    def candidate(self, sha: str) -> str | None:
        """An evaluated candidate's source, kept by the harness as candidates/<sha[:16]>.cu."""
        for name in (f"{sha[:16]}.cu", f"{sha}.cu"):
            try:
                return self.files.read_text(f"candidates/{name}")
            except OSError:
                continue
        return None

    def eval_result(self, rel: str) -> EvalResult | None:
        if rel and rel not in self._results:
            self._results[rel] = read_result(self.files, rel)
        return self._results.get(rel) if rel else None

    def result_problem(self, rel: str) -> str | None:
        """What is wrong with a saved result the log names (evals/NNNN.json): None when it
        reads, or is absent (the log holds the figures). A file that looks whole (a JSON
        object of the result's schema) is read in full only where the report reads it."""
        if not rel:
            return None
        where = self.files.where(rel)
        try:
            data = self.files.read_bytes(rel)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{where}: cannot read ({_why(exc)})"
        head, tail = data[:400].lstrip(), data[-64:].rstrip()
        if head.startswith(b"{") and tail.endswith(b"}") and SCHEMA.encode() in head:
            return None
        try:
            doc = json.loads(data)
        except ValueError as exc:
            return f"{where}: not readable JSON ({_why(exc)})"
        try:
            parse_eval(doc, where)
        except (ValueError, ContractError) as exc:
            return f"{where}: not an evaluator result ({_why(exc).removeprefix(where + ': ')})"
        return None


def _why(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def load_session(path: Path) -> SessionFiles:
    """A session's events (and config.json when present), from its folder or its pack;
    InputError when it has none."""
    session = open_session(path)
    events, skipped, record = read_events(session)
    if not events:
        log = session.where(EVENTS_FILE)
        what = ("empty" if not session.read_bytes(EVENTS_FILE) else
                f"no readable event ({skipped} line(s) not JSON or not matching the event contract)"
                if skipped else "no event of a known type")
        raise InputError(f"{log}: {what}")
    if not any(isinstance(e, CampaignStart) for e in events):
        raise InputError(f"{session.where(EVENTS_FILE)}: no readable campaign.start event: not a "
                         "campaign log")
    config: dict[str, Any] = {}
    damaged: list[str] = []
    # optional: only the questions mode of an attached campaign comes from it; damaged,
    # the report says so (and reads the mode from the log)
    where = session.where("config.json")
    try:
        doc = session.read_json("config.json")
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
            config = doc["config"]
        else:
            damaged.append(f"{where}: no `config` table (the log's settings are used)")
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        damaged.append(f"{where}: not readable JSON ({_why(exc)}; the log's settings are used)")
    return SessionFiles(path, events, skipped, config, fleet_record(path, session.name), session,
                        record, damaged)


def fleet_record(session: Path, name: str) -> dict[str, Any]:
    """This session's campaign in its fleet's manifest (`<fleet>/fleet.json`, campaigns
    named by their session folder): the questions mode and agent the fleet ran it with."""
    try:
        doc = json.loads((session.parent / FLEET_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    campaigns = doc.get("campaigns") if isinstance(doc, dict) else None
    for c in campaigns if isinstance(campaigns, list) else []:
        if isinstance(c, dict) and c.get("name") == name:
            return c
    return {}


def session_dirs(paths: list[Path]) -> list[Path]:
    """The session folders named by `paths`: sessions as given, fleets expanded."""
    from socratic.resources import resolve_session_dir, unknown_session_hint

    out: list[Path] = []
    for path in map(resolve_session_dir, paths):  # a bundled campaign's name too
        if not path.exists():
            raise InputError(f"{path}: no such file or folder{unknown_session_hint(path)}")
        if is_pack(path) or (path / EVENTS_FILE).is_file():
            out.append(path)
            continue
        if not path.is_dir():
            raise InputError(f"{path}: not a folder or a pack (give a session folder, a "
                             f"{PACK_SUFFIX} file or a folder of sessions)")
        members = sorted(p for p in path.iterdir() if (p / EVENTS_FILE).is_file() or is_pack(p))
        if not members:
            raise InputError(f"{path}: not a session (no {EVENTS_FILE}) and no session "
                             "folders in it")
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
