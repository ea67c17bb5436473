"""Drive the real evaluator CLI the way a user (or the harness) does."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def doc(self) -> dict:
        return json.loads(self.stdout)

    def row(self, sid: str) -> dict:
        return next(r for r in self.doc["scenarios"] if r["id"] == sid)


def socratic(*args: str, timeout: float = 600, env: dict | None = None) -> CliResult:
    proc = subprocess.run([sys.executable, "-m", "socratic", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)
