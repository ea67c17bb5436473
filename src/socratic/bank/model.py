"""The bank's data model: Entry, Bank, BankError and the closed vocabularies.

Kept free of heavy imports: `bank.cli` (and so `socratic --help`) imports this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from socratic.errors import InputError
from socratic.eventlog import TRIGGER_KINDS

TRIGGERS: tuple[str, ...] = tuple(TRIGGER_KINDS)

# The ten core groups, in the order `socratic bank list` shows them.
GROUPS: tuple[str, ...] = (
    "measurement",   # is the number itself right: timing method, units, what was timed
    "bound",         # comparison with a bound estimate: roofline, latency, issue rate
    "validity",      # does the benchmark represent the workload; is a gain real
    "gap",           # where exactly the remaining time goes, against baseline or bound
    "correctness",   # diagnosing wrong or unstable results
    "memory",        # memory hierarchy: DRAM, L2, L1/shared memory, registers
    "instructions",  # instruction mix and pipelines
    "parallelism",   # parallelism, occupancy and scheduling
    "compiler",      # the compiler's output: registers, spills, PTX/SASS
    "strategy",      # plateaus and declared limits
)

KINDS: tuple[str, ...] = ("core", "comparison", "arch")
ARCHS: tuple[str, ...] = ("hopper", "blackwell")
PROVENANCES: tuple[str, ...] = ("trace", "public", "new")

# `level`: the part of the system an entry points the agent at.
LEVELS: tuple[str, ...] = (
    "process",       # how the campaign itself is run: plans, limits, stopping
    "measurement",   # how a number is obtained
    "workload",      # which problem sizes and inputs are measured
    "algorithm",     # the work decomposition and the amount of work
    "numerics",      # precision, accumulation order, special values
    "memory",        # data movement through the memory hierarchy
    "pipelines",     # instruction mix and execution units
    "scheduling",    # parallelism, occupancy, launch and overlap
    "compiler",      # what nvcc/ptxas produced
    "system",        # host side, launches, streams, clocks
)

KIND_ORDER = {k: i for i, k in enumerate(KINDS)}


def by_group(entries) -> dict[str, list]:
    """Entries by group, groups in GROUPS order (unknown ones after, as met); within a
    group core, then comparison, then arch entries, each in bank order. The order of
    `socratic bank list` and of the TUI's question picker."""
    out: dict[str, list] = {g: [] for g in GROUPS}
    ordered = sorted(entries, key=lambda e: KIND_ORDER.get(getattr(e, "kind", ""),
                                                           len(KIND_ORDER)))  # stable
    for e in ordered:
        out.setdefault(str(getattr(e, "group", "")), []).append(e)
    return {g: items for g, items in out.items() if items}


MAX_TEXT = 200
MAX_WHY = 200

TRACE_SOURCE_RE = re.compile(r"^[^\s#/]+#\d+$")  # <session id>#<event seq>
# a file of a recorded session: <session id>/<path inside the session folder>
SESSION_FILE_RE = re.compile(r"^[^\s#/]+(?:/[^\s#/]+)+$")


def is_trace_ref(text: str) -> bool:
    return bool(TRACE_SOURCE_RE.match(text))


def is_session_file(text: str) -> bool:
    return bool(SESSION_FILE_RE.match(text)) and ".." not in text.split("/")


class BankError(InputError):
    """A bank file is malformed; the message names file:line and the entry id."""


@dataclass(frozen=True)
class Entry:
    id: str
    group: str
    text: str
    triggers: tuple[str, ...]
    level: str
    provenance: str
    source: str
    requires_comparison: bool
    arch: str | None
    why: str
    kind: str
    file: str
    line: int
    evidence: tuple[str, ...] = ()   # traces and session files that back the entry

    @property
    def trace(self) -> str | None:
        """The recorded campaign that confirmed the entry (`<session id>#<event seq>`): its
        source when its provenance is trace, else a trace its evidence names."""
        if self.provenance == "trace":
            return self.source
        return next((e for e in self.evidence if is_trace_ref(e)), None)

    def to_dict(self) -> dict:
        return {
            "id": self.id, "group": self.group, "kind": self.kind, "text": self.text,
            "triggers": list(self.triggers), "level": self.level,
            "provenance": self.provenance, "source": self.source,
            "evidence": list(self.evidence), "trace": self.trace,
            "requires_comparison": self.requires_comparison, "arch": self.arch,
            "why": self.why, "file": self.file, "line": self.line,
        }


class Bank:
    """The loaded bank: entries in load order (shipped files, then user files)."""

    def __init__(self, entries: list[Entry], files: list[str] | None = None) -> None:
        self.entries: list[Entry] = list(entries)
        self.files: list[str] = list(files or [])
        self._by_id = {e.id: e for e in self.entries}

    def get(self, id: str) -> Entry | None:
        return self._by_id.get(id)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def stats(self) -> dict:
        """The `socratic bank stats --json` document."""
        core = [e for e in self.entries if e.kind == "core"]
        groups = {g: 0 for g in GROUPS}
        for e in core:
            groups[e.group] += 1
        arch = {a: 0 for a in ARCHS}
        for e in self.entries:
            if e.kind == "arch" and e.arch:
                arch[e.arch] += 1
        provenance = {p: 0 for p in PROVENANCES}
        for e in self.entries:
            provenance[e.provenance] += 1
        traced = sum(1 for e in self.entries if e.trace)
        by_trigger = {t: sum(1 for e in self.entries if t in e.triggers) for t in TRIGGERS}
        return {
            "core": len(core),
            "groups": groups,
            "comparison": sum(1 for e in self.entries if e.kind == "comparison"),
            "arch": arch,
            "provenance": provenance,
            "traced": traced,
            "by_trigger": by_trigger,
        }
