"""A campaign's directory: creation at start, and the small state kept beside the event log.

    sessions/<date-time-task>/
      events.jsonl      the truth (socratic.eventlog.EventLog)
      inbox.jsonl       commands from the TUI / `socratic inject`
      config.json       the campaign's settings and task source (read again by --resume)
      task/             frozen snapshot of the task (the evaluator runs on this copy)
      workspace/        the agent's cwd: candidate.cu, NOTES.md, task/ (read-only copies)
      evals/NNNN.json   full evaluator results
      candidates/       every evaluated candidate, by sha256 prefix
      blobs/            full text of tool outputs too long for the event log
      messages.jsonl    the conversation, one message per line (replayed by --resume)
      state.json        inbox offset and questions not yet delivered
      campaign.log      the campaign's own lines (start, retries, end) and, detached, its output
      session.lock      held (flock) by the process writing the session (socratic.ownership)
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from socratic import chain
from socratic.contracts import ContractError, SessionSettings
from socratic.eventlog import EVENTS_FILE, INBOX_FILE, append_jsonl, read_jsonl
from socratic.harness.core.atomicwrite import write_json_atomic
from socratic.harness.core.config import Config
from socratic.harness.core.task import CampaignTask, snapshot
from socratic.ownership import LOCK_FILE, SessionOwner

CANDIDATE = "candidate.cu"
NOTES = "NOTES.md"

NOTES_TEMPLATE = """# Notes

Keep this file current: what you tried, what you measured, what you believe and why,
and what you would try next. A fresh context starts from it.
"""


def session_id(task_name: str, now: datetime | None = None) -> str:
    now = now or datetime.now()
    return f"{now:%Y%m%d-%H%M%S}-{task_name}"


def repair_tail(path: Path) -> bool:
    """End a file torn by a crash mid-line with a newline, so that the next append starts a
    line of its own (readers skip the torn line). Returns whether it was torn."""
    try:
        with open(path, "rb+") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return False
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            return True
    except FileNotFoundError:
        return False


@dataclass
class Session:
    dir: Path
    owner: SessionOwner | None = field(default=None, compare=False, repr=False)

    # -- ownership: only the holder writes ----------------------------------------------
    def claim(self, role: str = "campaign") -> None:
        """Hold the session until release() or process exit; SessionBusy (exit code 2,
        naming the live holder) when another process holds it."""
        if self.owner is None or not self.owner.held:
            self.owner = SessionOwner.claim(self.dir, role=role)

    def release(self) -> None:
        if self.owner is not None:
            self.owner.release()

    # -- paths ------------------------------------------------------------------------
    @property
    def events(self) -> Path:
        return self.dir / EVENTS_FILE

    @property
    def inbox(self) -> Path:
        return self.dir / INBOX_FILE

    @property
    def workspace(self) -> Path:
        return self.dir / "workspace"

    @property
    def candidate(self) -> Path:
        return self.workspace / CANDIDATE

    @property
    def notes(self) -> Path:
        return self.workspace / NOTES

    @property
    def task_dir(self) -> Path:
        return self.dir / "task"

    @property
    def workspace_task(self) -> Path:
        return self.workspace / "task"

    @property
    def evals(self) -> Path:
        return self.dir / "evals"

    @property
    def candidates(self) -> Path:
        return self.dir / "candidates"

    @property
    def blobs(self) -> Path:
        return self.dir / "blobs"

    @property
    def messages(self) -> Path:
        return self.dir / "messages.jsonl"

    @property
    def state_file(self) -> Path:
        return self.dir / "state.json"

    @property
    def config_file(self) -> Path:
        return self.dir / "config.json"

    @property
    def log_file(self) -> Path:
        return self.dir / "campaign.log"

    @property
    def session_id(self) -> str | None:
        """The id this machine gave the session (its chain key's name), if any."""
        return chain.indexed_id(self.dir)

    def private_dir(self) -> Path:
        """A folder of this session's outside the session folder and the workspace (the
        state dir; out of the agent's reach when it runs confined): the sources evaluated
        are copied here first, so the bytes judged are the bytes hashed."""
        import hashlib

        real = str(self.dir.resolve()).encode()
        return chain.state_home() / "sessions" / hashlib.sha256(real).hexdigest()[:24]

    # -- creation ---------------------------------------------------------------------
    @classmethod
    def create(cls, task: CampaignTask, config: Config, session_dir: Path | None = None,
               root: Path | None = None) -> tuple[Session, dict[str, str]]:
        """Lay out a new session; returns it and the frozen task's file hashes."""
        if session_dir is None:
            session_dir = Path(root or "sessions") / session_id(task.name)
        session_dir = Path(session_dir)
        from socratic.errors import InputError

        s = cls(session_dir)
        try:
            s.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{session_dir}: cannot create the session directory "
                             f"({exc.strerror or exc})") from None
        s.claim()  # first: a live campaign is named; two starts on one new directory race here
        if s.events.exists():
            s.release()
            raise InputError(f"{session_dir}: already holds a campaign (use --resume)")
        # a folder of other files (a project, $HOME) would have its config.json, task/ and
        # workspace/ overwritten; campaign.log and the lock are `socratic run`'s own, first,
        # and an inbox may hold questions queued before the start (benchmarks/record_demo.py)
        own = ("campaign.log", LOCK_FILE, INBOX_FILE)
        others = sorted(p.name for p in s.dir.iterdir() if p.name not in own)
        if others and not s.killed_start():  # a start cut short is started again
            s.release()
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise InputError(f"{session_dir}: not empty and no campaign ({shown}); give a new "
                             f"or empty --session-dir")
        for d in (s.workspace, s.evals, s.candidates, s.blobs):
            d.mkdir(parents=True, exist_ok=True)
        # the log's chain key, out of the agent's reach (socratic.chain): before any event
        chain.new_session_key(s.dir)
        hashes = snapshot(task, s.task_dir)
        snapshot(task, s.workspace_task)
        if not s.candidate.exists():
            shutil.copyfile(task.dir / task.baseline, s.candidate)
            s.candidate.chmod(0o644)
        if not s.notes.exists():
            s.notes.write_text(NOTES_TEMPLATE, encoding="utf-8")
        s.inbox.touch()
        s.save_config(SessionSettings(config=config.to_dict(), task_source=str(task.dir.resolve()),
                                      task_hashes=hashes))
        return s, hashes

    def load_config(self) -> SessionSettings:
        """config.json as written by create(); InputError (one line) when it is not."""
        from socratic.errors import InputError

        try:
            data = json.loads(self.config_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{self.config_file}: cannot read the campaign's settings "
                             f"({exc})") from None
        try:
            return SessionSettings.from_dict(data, str(self.config_file))
        except ContractError as exc:
            raise InputError(f"{exc} (not a campaign's settings)") from None

    def save_config(self, settings: SessionSettings) -> None:
        write_json_atomic(self.config_file, settings.to_dict())

    def killed_start(self) -> bool:
        """A session whose start was cut short before anything was recorded: laid out
        (config.json) but no event, no evaluation and no message. Starting it again loses
        nothing."""
        layout = {"config.json", "workspace", "task", "evals", "candidates", "blobs",
                  "inbox.jsonl", "state.json", "attach.json", "events.jsonl", "messages.jsonl",
                  "campaign.log", "session.lock", "hookserver.log", "config.json.tmp"}
        if not self.config_file.is_file() or not self.dir.is_dir() or \
                any(p.name not in layout and not p.name.endswith(".tmp")
                    for p in self.dir.iterdir()):
            return False  # a folder of other files is not a session
        try:
            saved = json.loads(self.config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not (isinstance(saved, dict) and isinstance(saved.get("config"), dict)
                and isinstance(saved.get("task_source"), str)):
            return False
        if self.events.exists() and self.events.stat().st_size > 0:
            return False
        if any(self.evals.glob("*.json")) if self.evals.is_dir() else False:
            return False
        return not (self.messages.exists() and self.messages.stat().st_size > 0)

    # -- state ------------------------------------------------------------------------
    def load_state(self) -> Any:
        """state.json as the inbox saved it (inbox.py), None when missing or damaged (the
        caller rebuilds it from the log: resume.resume_state)."""
        try:
            return json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    # Messages survive the campaign process being killed (written and flushed before the
    # next step); they are not fsync'd per step: the event log is the record.
    def append_message(self, ctx: int, message: dict[str, Any]) -> None:
        append_jsonl(self.messages, {"ctx": ctx, "message": message}, fsync=False)

    def load_messages(self) -> tuple[int, list[dict[str, Any]]]:
        """The current context's messages (the last handoff wins)."""
        if not self.messages.exists():
            return 0, []
        records, _ = read_jsonl(self.messages)
        if not records:
            return 0, []
        records = [r for r in records if isinstance(r.get("message"), dict)
                   and isinstance(r.get("ctx", 0), int)]  # a damaged line is skipped
        if not records:
            return 0, []
        ctx = max(r.get("ctx", 0) for r in records)
        return ctx, [r["message"] for r in records if r.get("ctx", 0) == ctx]
