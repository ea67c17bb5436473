"""Does the built library export the task's entry point? Read from its dynamic symbol
table (no GPU, no loading), so that `--check-only` rejects a candidate that cannot be
called: an empty file, a misspelt name, a C++ (mangled) name without `extern "C"`."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

FUNCTION_TYPES = "TWi"  # nm: text, weak, indirect function; data of that name is no entry


def exported_functions(library: Path) -> list[str] | str:
    """The library's exported (dynamic, defined) function names, or why they cannot be read."""
    nm = shutil.which("nm")
    if nm is None:
        return "nm (binutils) not found"
    proc = subprocess.run([nm, "-D", "--defined-only", str(library)], capture_output=True,
                          text=True, errors="replace", timeout=60)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or [f"nm exit {proc.returncode}"])[-1]
    names = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-2] in FUNCTION_TYPES:
            names.append(parts[-1].split("@", 1)[0])
    return names


def missing_entry(library: Path, entry: str) -> str | None:
    """None when `entry` is an exported function, else one line saying what is wrong."""
    names = exported_functions(library)
    if isinstance(names, str):  # fail closed: an entry we cannot see is not there
        return f'cannot read the exported symbols of the built library ({names})'
    if entry in names:
        return None
    want = f'the library does not export the entry point `extern "C" int {entry}(...)`'
    mangled = [n for n in names if n.startswith(f"_Z{len(entry)}{entry}")]
    if mangled:
        return f"{want}: it has the C++ name {mangled[0]}; declare it extern \"C\""
    if not names:
        return f"{want}: it exports no function at all"
    close = difflib.get_close_matches(entry, names, n=3, cutoff=0.6)
    shown = close or names[:3]
    return f"{want}; it exports {', '.join(shown)}" + (", ..." if len(names) > len(shown) else "")
