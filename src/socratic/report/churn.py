"""Churn: how much of what the agent added it had deleted before.

Over the evaluated candidates in evaluation order (repeats of the same source dropped),
each step's added and deleted lines come from a line diff. A line added that an earlier
step had deleted is churn; the share is churned / added. Lines are compared without their
surrounding whitespace; blank lines and lines of punctuation only (`}`, `});`) are left out,
since every edit moves some of them and they say nothing about undone work.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

_WORDY = re.compile(r"[A-Za-z0-9_]")


def _lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()]


def _counts(line: str) -> bool:
    return bool(_WORDY.search(line))


@dataclass
class Churn:
    share: float | None        # churned / added; None when nothing was added or < 2 sources
    added: int                 # lines added over all steps
    readded: int               # of those, lines an earlier step had deleted
    deleted: int               # lines deleted over all steps
    candidates: int            # distinct evaluated candidates read
    missing: int               # evaluated candidates whose source was not kept

    def to_dict(self) -> dict:
        return {"share": self.share, "added": self.added, "readded": self.readded,
                "deleted": self.deleted, "candidates": self.candidates,
                "missing": self.missing}


def churn(sources: list[str | None]) -> Churn:
    """`sources`: the evaluated candidates in evaluation order (None: not kept). A step is
    taken between consecutive kept sources; a missing one is skipped over."""
    kept = [s for s in sources if s is not None]
    steps = [s for i, s in enumerate(kept) if i == 0 or s != kept[i - 1]]
    deleted_before: Counter[str] = Counter()
    added = readded = deleted = 0
    for old, new in zip(steps, steps[1:], strict=False):
        a, b = _lines(old), _lines(new)
        ins: list[str] = []
        dels: list[str] = []
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                dels.extend(x for x in a[i1:i2] if _counts(x))
            if tag in ("replace", "insert"):
                ins.extend(x for x in b[j1:j2] if _counts(x))
        for line in ins:
            added += 1
            if deleted_before[line] > 0:
                readded += 1
                deleted_before[line] -= 1  # one deletion answers one re-addition
        deleted += len(dels)
        deleted_before.update(dels)
    share = readded / added if added else None
    return Churn(share, added, readded, deleted, len(set(kept)),
                 sum(1 for s in sources if s is None))
