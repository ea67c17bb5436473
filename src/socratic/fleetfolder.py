"""A fleet folder as every part recognises it: a folder of campaign sessions with the
fleet's manifest beside them (written by socratic.fleet, fleet/folder.py). Here, in the
shared layer, so that the parts below the fleet (the harness's `run --resume` and `inject`)
can name a fleet folder given where one session is expected without importing the fleet."""

from __future__ import annotations

import shlex
from pathlib import Path

MANIFEST = "fleet.json"


def is_fleet(path: Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def session_hint(path: Path) -> str:
    """What to add when a fleet folder is given where one session is expected."""
    if not is_fleet(path):
        return ""
    names = sorted(p.name for p in Path(path).iterdir() if (p / "events.jsonl").is_file())
    one = f", e.g. {shlex.quote(str(Path(path) / names[0]))}" if names else ""
    return (f" (a fleet folder: each of its campaigns is a session in it{one}; "
            f"`socratic watch {shlex.quote(str(path))}` shows them all)")
