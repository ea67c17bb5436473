"""Record a campaign's trace in the bank file that holds the entry (`socratic bank trace
--write`).

The edit is textual and minimal: only the entry's `provenance`, `source` and `evidence`
lines change (a missing one is added after the one before it), so comments, order and
layout of a hand-written file stay. The edited text is parsed again before it replaces the
file: the entry must read back as intended and every other entry unchanged.

What is recorded:
- an entry of provenance `new` becomes `trace`: `source = "<session>#<seq>"`, `evidence`
  the two evaluations compared (`<session>/evals/NNNN.json`);
- an entry of provenance `public` keeps its provenance and source (the public document
  stays its origin); the trace goes first in its `evidence`, then the evaluations;
- evidence already there (written by hand) stays, after the recorded items;
- an entry that already names a trace keeps it (the first recorded trace stays); recording
  the same trace again changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from socratic.bank.loader import HEADER_RE, parse_text
from socratic.bank.model import BankError, Entry

FIELDS = ("provenance", "source", "evidence")  # the order they are written in


@dataclass
class Change:
    id: str
    file: str
    action: str          # trace | evidence | unchanged | kept
    trace: str           # the trace asked to be recorded
    detail: str = ""


def plan(entry: Entry, trace: str, files: list[str]) -> tuple[str, dict[str, str | list[str]]]:
    """What recording `trace` (backed by the session `files`) does to `entry`: the action
    and the fields to write."""
    if entry.trace and entry.trace != trace:
        return "kept", {}
    items = [trace, *files] if entry.provenance == "public" else list(files)
    items += [e for e in entry.evidence if e not in items]  # evidence written by hand stays
    if entry.provenance == "public":
        want: dict[str, str | list[str]] = {"evidence": items}
        action = "evidence"
    else:
        want = {"provenance": "trace", "source": trace, "evidence": items}
        action = "trace"
        if not items:
            del want["evidence"]  # no saved evaluation to name: the source alone
    now: dict[str, str | list[str]] = {"provenance": entry.provenance, "source": entry.source,
                                       "evidence": list(entry.evidence)}
    if all(now[k] == v for k, v in want.items()):
        return "unchanged", {}
    return action, want


def record(entries: list[tuple[Entry, str, list[str]]]) -> list[Change]:
    """Record each (entry, trace, files); files are edited once each, atomically."""
    changes: list[Change] = []
    by_file: dict[str, list[tuple[Entry, dict[str, str | list[str]]]]] = {}
    for entry, trace, files in entries:
        action, fields = plan(entry, trace, files)
        detail = f"already traced to {entry.trace}" if action == "kept" else ""
        changes.append(Change(entry.id, entry.file, action, trace, detail))
        if fields:
            by_file.setdefault(entry.file, []).append((entry, fields))
    from socratic import resources
    from socratic.errors import InputError

    for file in by_file:  # all checked before any is written
        if resources.installed(Path(file)):
            raise InputError(f"{file}: the bank installed with socratic, not written (it is "
                             f"replaced on upgrade); record traces from a checkout installed "
                             f"with `pip install -e .`; nothing recorded")
    for file, edits in by_file.items():
        _rewrite(Path(file), edits)
    return changes


def _rewrite(path: Path, edits: list[tuple[Entry, dict[str, str | list[str]]]]) -> None:
    shown = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BankError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    text = raw.decode("utf-8").removeprefix("\ufeff")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    for entry, fields in edits:
        lines = edit_entry(lines, entry.id, fields, newline, shown)
    new_text = "".join(lines)
    _check(text, new_text, edits, shown)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(bom + new_text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        raise BankError(f"{shown}: cannot write: {exc.strerror or exc}") from None


def _check(old: str, new: str, edits: list[tuple[Entry, dict[str, str | list[str]]]],
           shown: str) -> None:
    """The edited text reads back as intended: the edited fields, nothing else."""
    def comparable(e: Entry) -> dict:
        d = e.to_dict()
        for k in ("file", "line", "trace"):
            d.pop(k)
        return d
    before = {e.id: comparable(e) for e in parse_text(old, shown)}
    try:
        after = {e.id: comparable(e) for e in parse_text(new, shown)}
    except BankError as exc:
        raise BankError(f"{shown}: the edit would not load ({exc}); edit it by hand") from None
    for entry, fields in edits:
        expected = dict(before[entry.id])
        expected.update({k: list(v) if isinstance(v, list) else v for k, v in fields.items()})
        before[entry.id] = expected
    if before != after:
        changed = sorted(k for k in before.keys() | after.keys()
                         if before.get(k) != after.get(k))
        raise BankError(f"{shown}: entry '{changed[0]}' would not read back as intended; "
                        "edit it by hand")


def _value(v: str | list[str]) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a TOML basic string
    return "[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in v) + "]"


def _key_re(name: str) -> re.Pattern[str]:
    return re.compile(r"^(\s*)[\"']?" + re.escape(name) + r"[\"']?\s*=\s*")


def _block(lines: list[str], entry_id: str, shown: str) -> tuple[int, int]:
    """The [[entry]] table holding `id = "<entry_id>"`: [start, end) line indexes."""
    heads = [i for i, ln in enumerate(lines) if HEADER_RE.match(ln)]
    id_re = re.compile(r"""^\s*["']?id["']?\s*=\s*["']""" + re.escape(entry_id) + r"""["']""")
    for k, start in enumerate(heads):
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        if any(id_re.match(ln) for ln in lines[start:end]):
            return start, end
    raise BankError(f"{shown}: entry '{entry_id}' is not a plain [[entry]] table with an "
                    "`id = ...` line: record the trace by hand")


def _value_end(lines: list[str], i: int, col: int) -> tuple[int, int]:
    """Where the string or array value starting at lines[i][col] ends: (line, column after)."""
    depth, quote = 0, ""
    j, c = i, col
    while j < len(lines):
        ln = lines[j]
        while c < len(ln):
            ch = ln[c]
            if quote:
                if ch == "\\" and quote == '"':
                    c += 1
                elif ch == quote:
                    quote = ""
                    if depth == 0:
                        return j, c + 1
            elif ch in "\"'":
                quote = ch
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return j, c + 1
            elif ch == "#" and depth:
                break  # a comment inside a multi-line array
            c += 1
        j, c = j + 1, 0
    return i, len(lines[i].rstrip("\r\n"))


def edit_entry(lines: list[str], entry_id: str, fields: dict[str, str | list[str]],
               newline: str, shown: str) -> list[str]:
    """The lines with the entry's `fields` set; other lines untouched."""
    lines = list(lines)
    start, end = _block(lines, entry_id, shown)
    anchor = None  # the line after which a missing field goes
    for name in FIELDS:
        pat = _key_re(name)
        at = next((i for i in range(start, end) if pat.match(lines[i])), None)
        if name not in fields:
            if at is not None:
                anchor = at
            continue
        value = _value(fields[name])
        if at is not None:
            m = pat.match(lines[at])
            assert m is not None
            j, c = _value_end(lines, at, m.end())
            lines[at:j + 1] = [lines[at][: m.end()] + value + lines[j][c:]]
            end -= j - at
            anchor = at
            continue
        if anchor is None:
            anchor = next((i for i in range(start, end) if _key_re("provenance").match(lines[i])),
                          end - 1)
        if not lines[anchor].endswith("\n"):
            lines[anchor] += newline
        line = lines[anchor]
        indent = line[: len(line) - len(line.lstrip())] if line.strip() else ""
        lines.insert(anchor + 1, f"{indent}{name} = {value}{newline}")
        anchor += 1
        end += 1
    return lines
