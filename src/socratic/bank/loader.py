"""Load and validate bank files (TOML). Every error is one line naming file:line and id.

Files load in this order: the shipped files (bank/data/*.toml), the user config directory
($SOCRATIC_BANK_DIR, else $XDG_CONFIG_HOME/socratic/bank or ~/.config/socratic/bank), then
each extra directory (or single file) in the order given. Within a directory files load in
name order. A later file may add entries; an id that already exists is an error.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from socratic.bank.model import (
    ARCHS,
    GROUPS,
    KINDS,
    LEVELS,
    MAX_TEXT,
    MAX_WHY,
    PROVENANCES,
    TRIGGERS,
    Bank,
    BankError,
    Entry,
    is_session_file,
    is_trace_ref,
)

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
HEADER_RE = re.compile(r"^\s*\[\[\s*(?:entry|\"entry\"|'entry')\s*\]\]")
TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
TOML_END_RE = re.compile(r"\s*\(at end of document\)\s*$")

REQUIRED = ("id", "group", "text", "triggers", "level", "provenance", "why")
OPTIONAL = ("source", "evidence", "requires_comparison", "arch", "kind")
TOP_LEVEL = ("entry",)


def shipped_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def user_dir() -> Path:
    env = os.environ.get("SOCRATIC_BANK_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "socratic" / "bank"


def display_path(path: Path) -> str:
    """The path as a user would type it: relative to the cwd when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _toml_files(where: Path, *, required: bool) -> list[Path]:
    if where.is_file():
        return [where]
    if where.is_dir():
        found = sorted(p for p in where.glob("*.toml") if p.is_file())
        if required and not found:  # an explicit --bank-dir that adds nothing is a slip
            raise BankError(f"{display_path(where)}: no bank files (*.toml) in this folder")
        return found
    if required:
        raise BankError(f"{display_path(where)}: no such bank directory or file")
    return []


def bank_files(extra_dirs: Iterable[Path] | None = None, *, shipped: bool = True,
               user: bool = True) -> list[Path]:
    files: list[Path] = []
    if shipped:
        files += _toml_files(shipped_dir(), required=True)
    if user:
        files += _toml_files(user_dir(), required=False)
    for d in extra_dirs or ():
        files += _toml_files(Path(d).expanduser(), required=True)
    seen: set[Path] = set()
    unique = []
    for f in files:  # a directory named twice loads once
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def load_bank(extra_dirs: list[Path] | None = None, *, shipped: bool = True,
              user: bool = True) -> Bank:
    """Load shipped, user and extra bank files; raise BankError on the first problem."""
    entries: list[Entry] = []
    where: dict[str, Entry] = {}
    files = bank_files(extra_dirs, shipped=shipped, user=user)
    parsed = {path: parse_file(path) for path in files}
    _require_entries(extra_dirs or (), parsed)
    for path in files:
        for entry in parsed[path]:
            first = where.get(entry.id)
            if first is not None:
                raise BankError(
                    f"{entry.file}:{entry.line}: entry '{entry.id}': duplicate id, already "
                    f"defined at {first.file}:{first.line}")
            where[entry.id] = entry
            entries.append(entry)
    return Bank(entries, [display_path(f) for f in files])


def _require_entries(extra_dirs: Iterable[Path], parsed: dict[Path, list[Entry]]) -> None:
    """Each directory or file the user named adds at least one entry: one that adds none
    (an empty file, `--bank-dir kernel.cu`) was a slip, not a wish for an unchanged bank."""
    for d in extra_dirs:
        where = Path(d).expanduser()
        key = where.resolve()   # compared resolved: a folder named twice loaded once
        mine = [p for p in parsed if (p.resolve() if where.is_file() else p.resolve().parent) == key]
        if not any(parsed[p] for p in mine):
            what = ("not a bank file: it holds no [[entry]] tables" if where.is_file()
                    else "its bank files (*.toml) hold no [[entry]] tables")
            raise BankError(f"{display_path(where)}: {what}")


def _loads(text: str, shown: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else "cannot parse"
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        m = TOML_POS_RE.search(msg)
        if m:
            line, col = line or int(m.group(1)), col or int(m.group(2))
            msg = msg[: m.start()]
        elif TOML_END_RE.search(msg):
            msg = TOML_END_RE.sub("", msg) + " at end of file"
            line = line or max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        where = f"{shown}:{line or 1}"
        colpart = f" (column {col})" if col else ""
        raise BankError(f"{where}: malformed TOML: {msg}{colpart}") from None


class _Lines:
    """Finds the source line of the n-th [[entry]] table and of a field inside it."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers = [i for i, ln in enumerate(self.lines) if HEADER_RE.match(ln)]

    def entry(self, index: int, entry_id: Any, count: int) -> int:
        if len(self.headers) == count:
            return self.headers[index] + 1
        if isinstance(entry_id, str):  # e.g. inline tables: find the id line instead
            pat = re.compile(r"""\bid\s*=\s*["']""" + re.escape(entry_id) + r"""["']""")
            for i, ln in enumerate(self.lines):
                if pat.search(ln):
                    return i + 1
        return 1

    def field(self, index: int, name: str, count: int, default: int) -> int:
        if len(self.headers) != count:
            return default
        start = self.headers[index]
        end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines)
        pat = re.compile(r"^\s*[\"']?" + re.escape(name) + r"[\"']?\s*=")
        for i in range(start, end):
            if pat.match(self.lines[i]):
                return i + 1
        return default


def parse_file(path: Path) -> list[Entry]:
    """Parse and validate one bank file."""
    shown = display_path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BankError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # editors may add a BOM
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BankError(f"{shown}:{line}: not UTF-8 text") from None
    return parse_text(text, shown)


def parse_text(text: str, shown: str) -> list[Entry]:
    """Parse and validate the text of a bank file shown to the user as `shown`."""
    doc = _loads(text, shown)
    lines = _Lines(text)
    for key in doc:
        if key not in TOP_LEVEL:
            pat = re.compile(r"^\s*\[*\s*[\"']?" + re.escape(key) + r"[\"']?\s*[=.\]]")
            line = next((i + 1 for i, ln in enumerate(lines.lines) if pat.match(ln)), 1)
            raise BankError(f"{shown}:{line}: unknown top-level key '{key}' "
                            f"(bank files hold [[entry]] tables only)")
    raw_entries = doc.get("entry", [])
    if not isinstance(raw_entries, list):
        raise BankError(f"{shown}:1: 'entry' must be an array of tables ([[entry]])")
    count = len(raw_entries)
    out = []
    for index, item in enumerate(raw_entries):
        out.append(_entry(item, index, count, shown, lines))
    return out


def _entry(item: Any, index: int, count: int, shown: str, lines: _Lines) -> Entry:
    entry_id = item.get("id") if isinstance(item, dict) else None
    head = lines.entry(index, entry_id, count)
    label = f"entry '{entry_id}'" if isinstance(entry_id, str) else f"entry #{index + 1}"

    def fail(msg: str, field: str | None = None) -> BankError:
        line = lines.field(index, field, count, head) if field else head
        return BankError(f"{shown}:{line}: {label}: {msg}")

    if not isinstance(item, dict):
        raise fail("must be a table")
    for name in REQUIRED:
        if name not in item:
            raise fail(f"missing field '{name}'")
    for name in item:
        if name not in REQUIRED and name not in OPTIONAL:
            raise fail(f"unknown field '{name}' (fields: {', '.join(REQUIRED + OPTIONAL)})",
                       name)

    def string(name: str, default: str | None = None) -> str:
        value = item.get(name, default)
        if not isinstance(value, str):
            raise fail(f"field '{name}' must be a string", name)
        if "\n" in value or "\r" in value:
            raise fail(f"field '{name}' must be one line", name)
        return value.strip()

    def bounded(name: str, limit: int) -> str:
        value = string(name)
        if not value:
            raise fail(f"field '{name}' is empty", name)
        if len(value) > limit:
            raise fail(f"{name} too long ({len(value)} > {limit} characters)", name)
        return value

    def choice(name: str, allowed: tuple[str, ...], what: str) -> str:
        value = string(name)
        if value not in allowed:
            raise fail(f"unknown {what} '{value}' (one of: {', '.join(allowed)})", name)
        return value

    if not ID_RE.match(string("id")):
        raise fail("id must be lower-case letters, digits and . _ - "
                   "(starting with a letter or digit)", "id")
    group = choice("group", GROUPS, "group")
    text = bounded("text", MAX_TEXT)
    if not text.endswith("?"):
        raise fail("text must be one question ending in '?'", "text")

    triggers = item["triggers"]
    if not isinstance(triggers, list) or not triggers or not all(
            isinstance(t, str) for t in triggers):
        raise fail("field 'triggers' must be a non-empty list of strings", "triggers")
    for t in triggers:
        if t not in TRIGGERS:
            raise fail(f"unknown trigger '{t}' (one of: {', '.join(TRIGGERS)})", "triggers")
    if len(set(triggers)) != len(triggers):
        raise fail("field 'triggers' lists a trigger twice", "triggers")

    level = choice("level", LEVELS, "level")
    provenance = choice("provenance", PROVENANCES, "provenance")
    source = string("source", "")
    if provenance == "trace" and not is_trace_ref(source):
        raise fail("provenance 'trace' needs source = \"<session id>#<event seq>\"",
                   "source" if "source" in item else "provenance")
    if provenance == "public" and not source:
        raise fail("provenance 'public' needs a source naming the public document",
                   "provenance")
    if provenance == "new" and source:
        raise fail("provenance 'new' takes no source (use 'public' or 'trace')", "source")
    evidence = _evidence(item, provenance, fail)

    requires = item.get("requires_comparison", False)
    if not isinstance(requires, bool):
        raise fail("field 'requires_comparison' must be true or false", "requires_comparison")
    arch = None
    if "arch" in item:
        arch = choice("arch", ARCHS, "arch")
    why = bounded("why", MAX_WHY)

    derived = "comparison" if requires else "arch" if arch else "core"
    kind = choice("kind", KINDS, "kind") if "kind" in item else derived
    if kind == "core" and (arch or requires):
        raise fail("kind 'core' takes no arch and requires_comparison = false", "kind")
    if kind == "comparison" and not requires:
        raise fail("kind 'comparison' needs requires_comparison = true", "kind")
    if kind == "arch" and not arch:
        raise fail("kind 'arch' needs an arch (hopper or blackwell)", "kind")

    return Entry(id=item["id"], group=group, text=text, triggers=tuple(triggers), level=level,
                 provenance=provenance, source=source, requires_comparison=requires,
                 arch=arch, why=why, kind=kind, file=shown, line=head, evidence=evidence)


def _evidence(item: dict[str, Any], provenance: str, fail) -> tuple[str, ...]:
    """`evidence`: what backs the entry, each a trace `<session id>#<event seq>` or a file
    of a recorded session `<session id>/<path in it>` (`socratic bank trace --write`)."""
    if "evidence" not in item:
        return ()
    value = item["evidence"]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise fail("field 'evidence' must be a non-empty list of strings", "evidence")
    if provenance == "new":
        raise fail("provenance 'new' takes no evidence (a trace makes it 'trace')", "evidence")
    for v in value:
        if not (is_trace_ref(v) or is_session_file(v)):
            raise fail(f"evidence '{v}' is neither a trace \"<session id>#<event seq>\" nor "
                       "a session file \"<session id>/<path>\"", "evidence")
    if len(set(value)) != len(value):
        raise fail("field 'evidence' lists an item twice", "evidence")
    return tuple(value)
