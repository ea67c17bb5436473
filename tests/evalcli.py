"""Drive the real evaluator CLI the way a user (or the harness) does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
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


def socratic(*args: str, timeout: float = 600, env: dict | None = None, cwd: Path | None = None,
             script: bool = False) -> CliResult:
    """`python -m socratic ARGS` from the checkout; with `script`, the installed `socratic`
    command beside this interpreter, as a user types it (`-m` would put cwd on sys.path)."""
    cmd = [str(Path(sys.executable).parent / "socratic")] if script else [sys.executable, "-m", "socratic"]
    t0 = time.monotonic()
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=env)
    res = CliResult(proc.returncode, proc.stdout, proc.stderr)
    _keep_evidence(args, res, time.monotonic() - t0)
    return res


def _keep_evidence(args: tuple[str, ...], res: CliResult, seconds: float) -> None:
    """With SOCRATIC_EVIDENCE set (a folder), every evaluation a GPU test runs is kept there as
    TEST.json: the device runs' record (benchmarks/judge_h200/collect.py) is the tests' own."""
    folder = os.environ.get("SOCRATIC_EVIDENCE")
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    if not folder or not test or not args or args[0] != "eval":
        return
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", test.split("::", 1)[-1]).strip("_")
    try:
        doc = json.loads(res.stdout)
    except ValueError:
        doc = None
    path = Path(folder) / f"{label}.json"
    n = 1
    while path.exists():
        n += 1
        path = Path(folder) / f"{label}.{n}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"test": test, "args": list(args), "exit_code": res.code, "seconds": round(seconds, 2),
                               "doc": doc, "stderr_tail": res.stderr[-600:]}, indent=1))
