"""The judge's side of the candidate's process (evaluator.launcher): start it, ask it for
the plan of one call, keep it frozen (SIGSTOP) whenever the judge is not waiting for it,
so that it can submit no GPU work while anything is checked or timed."""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from socratic.contracts import ContractError
from socratic.evaluator.plan import Plan, PlanError, Range, parse
from socratic.evaluator.protocol import (
    LAUNCHER_REPLIES,
    LauncherFatal,
    LauncherJob,
    LauncherReady,
    Message,
    PlanReply,
    PlanRequest,
    parse_message,
)
from socratic.pyproc import clean_env, isolated_python

_NOT_FOR_CANDIDATE = ("ANTHROPIC", "OPENAI", "GEMINI", "GOOGLE", "CLAUDE", "CODEX", "SOCRATIC_", "SSH_")
MAX_REPLY = 64 << 20   # bytes in one reply line; a longer one is not a plan
START_TIMEOUT_S = 120.0
# the end of its replies: a record of the reader's own, not JSON a candidate could write
_EOF: dict[str, Any] = {"type": "end of replies"}


class CandidateProcessError(Exception):
    """The candidate's process died, hung or does not load: one line for the scenario."""


class CandidateHang(CandidateProcessError):
    """The candidate's entry did not return in time (it was killed)."""


@dataclass
class BadReply:
    """A reply of the kind waited for that does not match its declaration."""

    type: str
    why: str                    # one line naming the field


@dataclass
class Capture:
    rc: int | None
    plan: Plan | None
    error: str | None


class CandidateProcess:
    def __init__(self, library: Path, entry: str, plan_lib: Path):
        self.stderr = tempfile.TemporaryFile()
        read_fd, write_fd = os.pipe()
        # isolated: no PYTHON*/LD_* variable, nothing of the workspace on sys.path; and only
        # what CUDA needs from the environment (no API keys, no socratic settings)
        env = {k: v for k, v in clean_env().items() if not k.startswith(_NOT_FOR_CANDIDATE)}
        env["SOCRATIC_LAUNCHER_FD"] = str(write_fd)
        self.proc = subprocess.Popen(
            isolated_python("-m", "socratic.evaluator.launcher"), stdin=subprocess.PIPE,
            stdout=self.stderr, stderr=self.stderr, pass_fds=(write_fd,), env=env, cwd="/")
        os.close(write_fd)
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()   # its JSON replies
        threading.Thread(target=self._read, args=(os.fdopen(read_fd, "rb"),), daemon=True).start()
        self._send(LauncherJob(library=str(library), entry=entry, plan_lib=str(plan_lib)))
        self.sandbox: dict[str, Any] | None = None   # how it confined itself, once it is ready
        self.frozen = False

    def wait_ready(self) -> dict[str, Any]:
        """Wait for its CUDA context and confinement (started early: it must initialise CUDA
        before the judge's own sandbox is in force, which its children inherit)."""
        if self.sandbox is None:
            msg = self._wait(lambda m: m.get("type") in ("ready", "fatal"), START_TIMEOUT_S)
            if not isinstance(msg, LauncherReady):
                self.kill()
                raise CandidateProcessError(self._why(msg))
            self.sandbox = msg.sandbox
            self.freeze()
        return self.sandbox or {}

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self, fh: IO[bytes]) -> None:
        while True:
            raw = fh.readline(MAX_REPLY)
            if not raw:
                break
            try:
                msg = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(msg, dict):
                self.replies.put(msg)
        self.replies.put(_EOF)

    def _send(self, msg: LauncherJob | PlanRequest) -> None:
        try:
            assert self.proc.stdin is not None  # a PIPE
            self.proc.stdin.write((json.dumps(msg.to_dict()) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise CandidateProcessError(f"the candidate's process died: {self.stderr_tail()}") from None

    def _wait(self, want: Callable[[dict[str, Any]], bool], timeout_s: float) -> Message | BadReply:
        """The first reply `want` picks (or a fatal one), as its record; BadReply when that
        reply does not match its declaration."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                msg = self.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise CandidateHang(f"the candidate's entry did not return within {timeout_s:g} s") from None
            if msg is _EOF:
                self.proc.wait()
                self.replies.put(msg)   # every later wait sees it too
                code = self.proc.returncode
                died = f"killed by signal {-code}" if code and code < 0 else f"exit code {code}"
                raise CandidateProcessError(f"the candidate's process died ({died}): {self.stderr_tail()}".rstrip(": "))
            if msg.get("type") == "fatal" or want(msg):
                try:
                    return parse_message(msg, LAUNCHER_REPLIES, "reply")
                except ContractError as exc:
                    return BadReply(str(msg.get("type")), f"the candidate's process sent a malformed reply: {exc}")

    def capture(self, params: bytes, mirror: list[Range], timeout_s: float) -> Capture:
        """The plan of one call of the entry with `params` (the bytes of the judge's struct)."""
        self.wait_ready()
        nonce = secrets.token_hex(8)
        self.thaw()
        try:
            self._send(PlanRequest(id=nonce, params=params.hex(), mirror=[list(r) for r in mirror]))
            msg = self._wait(lambda m: m.get("type") == "plan" and m.get("id") == nonce, timeout_s)
        finally:
            if self.alive():
                self.freeze()
        if isinstance(msg, BadReply) and msg.type == "plan":   # this call's reply, malformed
            return Capture(None, None, self._why(msg))
        if not isinstance(msg, PlanReply):
            raise CandidateProcessError(self._why(msg))
        if msg.error:
            return Capture(msg.rc, None, " ".join(msg.error.split())[:600])
        try:
            return Capture(msg.rc, parse(bytes.fromhex(msg.plan or "")), None)
        except (ValueError, PlanError) as exc:
            return Capture(msg.rc, None, f"the launch plan is unreadable: {exc}")

    @staticmethod
    def _why(msg: Message | BadReply) -> str:
        """One line for a reply the judge cannot use: its fatal error, or what is malformed."""
        text = msg.error if isinstance(msg, LauncherFatal) else msg.why if isinstance(msg, BadReply) else str(msg)
        return " ".join(text.split())[:400]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def freeze(self) -> None:
        if self.alive() and not self.frozen:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.frozen = True

    def thaw(self) -> None:
        if self.alive() and self.frozen:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace").strip()
        return " | ".join(text.splitlines()[-3:])[-300:]

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()
