"""The evaluator as a child process: `socratic eval --json` run on a candidate, its
per-scenario stderr lines read as they arrive (and its waits for the GPU), and its
`socratic.eval/1` result parsed; and the task's scenario sets it lists."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from socratic.contracts import ContractError, EvalResult, ScenarioProgress, parse_eval


def run_evaluator(argv_prefix: list[str], task_dir: Path, candidate: Path, set_name: str | None,
                  *, env: dict[str, str], timeout_s: float, cwd: Path | None = None,
                  on_scenario: Callable[[ScenarioProgress], None] | None = None,
                  on_gpu_wait: Callable[[dict[str, Any]], None] | None = None,
                  ) -> tuple[EvalResult | None, int, str, str | None]:
    """Run `<prefix> TASK_DIR --candidate FILE --json [--scenarios SET]`.

    Calls on_scenario(row) for each `{"event": "scenario"}` stderr line as it arrives (a
    line that does not parse as one is kept with the other stderr text), and
    on_gpu_wait(line) when the evaluation waits for its GPU turn (`{"event": "gpu_wait"}`):
    the wait does not count against timeout_s (the clock stops until the first scenario).
    Returns (result or None, exit code, other stderr text, error message or None); a result
    that is not `socratic.eval/1` is no result.
    """
    argv = [*argv_prefix, str(task_dir), "--candidate", str(candidate), "--json"]
    if set_name:
        argv += ["--scenarios", set_name]
    # a Python evaluator run from the agent's workspace must not import the agent's files
    # (a json.py there): the working directory stays off its sys.path (Python 3.11+)
    env = {**env, "PYTHONSAFEPATH": "1"}
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True)
    except OSError as exc:
        return None, 2, "", f"could not start the evaluator {argv_prefix!r}: {exc}"
    assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
    stdout = proc.stdout
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(stdout.read()), daemon=True)
    reader.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass

    def arm(seconds: float) -> threading.Timer:
        t = threading.Timer(seconds, kill)
        t.daemon = True
        t.start()
        return t

    timer = arm(timeout_s)
    started, left = time.monotonic(), None   # left: seconds of the budget kept while waiting
    other: list[str] = []
    try:
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    obj = None
                if isinstance(obj, dict) and obj.get("event") == "gpu_wait":
                    timer.cancel()
                    left = max(1.0, timeout_s - (time.monotonic() - started))
                    if on_gpu_wait:
                        on_gpu_wait(obj)
                    continue
                if isinstance(obj, dict) and obj.get("event") == "scenario":
                    try:
                        row = ScenarioProgress.from_dict(obj, "scenario line")
                    except ContractError:
                        row = None
                    if row is not None:
                        if left is not None:  # the turn came: the clock goes on
                            timer, started, timeout_s, left = (arm(left), time.monotonic(),
                                                               left, None)
                        if on_scenario:
                            on_scenario(row)
                        continue
            other.append(line)
            if len(other) > 400:
                del other[:200]
        proc.wait()
        reader.join()
    finally:
        timer.cancel()
    stderr_text = "\n".join(other)
    if timed_out.is_set():
        return None, -9, stderr_text, f"the evaluator ran past {timeout_s:g} s and was killed"
    raw_out = b"".join(out_chunks).decode("utf-8", "replace").strip()
    try:
        doc = json.loads(raw_out) if raw_out else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        tail = (stderr_text or raw_out)[-500:].strip().splitlines()
        return None, proc.returncode, stderr_text, (
            f"the evaluator failed to start or gave no result (exit {proc.returncode})"
            + (f": {tail[-1]}" if tail else ""))
    try:
        result = parse_eval(doc, "the evaluator's result")
    except ContractError as exc:
        return None, proc.returncode, stderr_text, f"exit {proc.returncode}: {exc}"
    return result, proc.returncode, stderr_text, None


def list_sets(argv_prefix: list[str], task_dir: Path, *, env: dict[str, str],
              timeout_s: float = 120.0) -> dict[str, list[str]] | None:
    """`<prefix> TASK_DIR --list --json` -> {set: [scenario ids]}, or None if it fails."""
    try:
        r = subprocess.run([*argv_prefix, str(task_dir), "--list", "--json"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s, check=False)
        doc = json.loads(r.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return None
    sets = doc.get("sets") if isinstance(doc, dict) else None
    if not isinstance(sets, dict):
        return None
    return {str(k): [str(i) for i in v] for k, v in sets.items() if isinstance(v, list)}


def built_libraries(argv_prefix: list[str], task_dir: Path, *, env: dict[str, str],
                    timeout_s: float = 600.0) -> dict[str, str] | None:
    """`<prefix> TASK_DIR --check-only --json` (the baseline built and checked, no GPU) ->
    the sha256 of the task's built libraries (`build.libraries`), or None where the
    evaluator says none (an older one) or fails: then nothing is pinned."""
    try:
        r = subprocess.run([*argv_prefix, str(task_dir), "--check-only", "--json"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s,
                           check=False)
        doc = json.loads(r.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return None
    libs = (doc.get("build") or {}).get("libraries") if isinstance(doc, dict) else None
    if not isinstance(libs, dict) or not all(isinstance(v, str) for v in libs.values()):
        return None
    return {str(k): v for k, v in libs.items()}
