"""Arguments several verbs share (`socratic bank`, `socratic report`): one definition each.

Cheap to import, like every part's cli module.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def positive_int(text: str) -> int:
    """An argparse type: a whole number above zero (bad values are one line, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a positive whole number")
    return value


def path_text(text: str) -> str:
    """An argparse type: a path as typed, never empty (Path("") is the current folder, so
    `pack ""` packed it and `inject ""` named "." as the session)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: an empty path")
    return text


def path_arg(text: str) -> Path:
    """`path_text` as a Path."""
    return Path(path_text(text))


def add_json(container: Any, *, dest: str = "json", suppress: bool = False) -> None:
    """`--json`. With `suppress`, an unset flag leaves no attribute (a subcommand's copy of
    an option its parent has too must not overwrite the parent's value)."""
    container.add_argument("--json", dest=dest, action="store_true",
                           default=argparse.SUPPRESS if suppress else False,
                           help="print one JSON document on stdout")


def add_bank_dir(container: Any, *, dest: str = "bank_dirs", suppress: bool = False) -> None:
    """`--bank-dir DIR`, repeatable: bank files loaded after the shipped and user ones."""
    container.add_argument("--bank-dir", dest=dest, action="append", type=path_arg, metavar="DIR",
                           default=argparse.SUPPRESS if suppress else None,
                           help="also load the bank files in DIR (or the file DIR); "
                           "repeatable")
