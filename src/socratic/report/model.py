"""The report over one or more sessions, and how it is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.report.compare import comparisons, groups
from socratic.report.figures import DEFAULT_WINDOW, SessionReport, derive
from socratic.report.source import load_session, load_sessions

SCHEMA = "socratic.report/1"


@dataclass
class Report:
    sessions: list[SessionReport]
    groups: list[dict[str, Any]]
    window: int = DEFAULT_WINDOW
    notes: list[str] = field(default_factory=list)
    by: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # compare.comparisons

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "window": self.window,
                "sessions": [s.to_dict() for s in self.sessions],
                "groups": self.groups, "by": self.by, "notes": self.notes}


def group_lookup(bank: Any):
    """bank id -> its group, or None when the bank does not hold it."""
    def group_of(bank_id: str) -> str | None:
        entry = bank.get(bank_id) if bank is not None else None
        return entry.group if entry is not None else None
    return group_of


def _bank(bank: Any, bank_dirs: list[Path] | None) -> Any:
    if bank is not None:
        return bank
    from socratic.bank import load_bank

    return load_bank(list(bank_dirs or []))


def build_report(paths: list[Path], *, window: int = DEFAULT_WINDOW, bank: Any = None,
                 bank_dirs: list[Path] | None = None) -> Report:
    """The report over sessions and fleet folders (InputError on bad input)."""
    files, notes = load_sessions([Path(p) for p in paths])
    group_of = group_lookup(_bank(bank, bank_dirs))
    reports = [derive(f, group_of, window) for f in files]
    for r in reports:
        if r.skipped_lines:
            notes.append(f"{r.path}: {r.skipped_lines} unreadable line(s) skipped")
    return Report(reports, groups(reports), window, notes, comparisons(reports))


def session_report(path: Path, *, window: int = DEFAULT_WINDOW, bank: Any = None) -> SessionReport:
    """One session's figures (the TUI's summary key)."""
    return derive(load_session(Path(path)), group_lookup(_bank(bank, None)), window)
