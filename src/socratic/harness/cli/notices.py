"""The lines a headless campaign prints for its user (start, each API retry, end): on
stderr, and into the session's campaign.log with a timestamp, so that every session has
its log whether it ran attached (stderr already is campaign.log) or in a terminal."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from socratic.contracts import ApiRetry, ContractError, parse_event


def _same_file(stream: TextIO, path: Path) -> bool:
    try:
        a, b = os.fstat(stream.fileno()), os.stat(path)
    except (OSError, ValueError, AttributeError):  # no file behind it (pytest capture), none yet
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class Notices:
    def __init__(self, log_path: Path, stream: TextIO | None = None) -> None:
        self.log_path = log_path
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, line: str) -> None:
        stamped = f"{datetime.now().astimezone().isoformat(timespec='seconds')} {line}\n"
        try:
            if _same_file(self.stream, self.log_path):  # a detached campaign: write it once
                self.stream.write(stamped)
                self.stream.flush()
                return
            print(line, file=self.stream, flush=True)
        except OSError:
            pass  # a closed terminal must not end the campaign
        try:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(stamped)
        except OSError:
            pass  # the event log is the record; this file is for reading

    def on_event(self, e: dict[str, Any]) -> None:
        """Campaign.on_event: one line per API retry (attempt, error, next try)."""
        try:
            ev = parse_event(e)
        except ContractError:
            return
        if isinstance(ev, ApiRetry):
            error = (ev.error.strip().splitlines() or ["?"])[0][:200]
            self(f"socratic: API retry {ev.attempt}: {error}; next try in "
                 f"{float(ev.wait_s or 0):.1f} s")
