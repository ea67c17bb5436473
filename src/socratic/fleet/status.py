"""One row per campaign of a fleet, from its manifest and its sessions' files, read
incrementally (each poll reads only what was appended since the last): `socratic fleet
status` reads once, the fleet screen polls.

States: `queued` (no session yet, the fleet's runner or Slurm job will start it), `not
started` (no session and nothing will start it: `socratic fleet run DIR` does), `starting`,
`running`, `paused`, `waiting` (for a human question), `ended` (with the campaign's reason)
and `stopped` (no campaign.end and no process: killed or lost; `socratic fleet run DIR`
resumes it).
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from socratic.contracts import AskCommand, parse_command
from socratic.endreasons import counts_as_met, end_detail
from socratic.eventlog import EVENTS_FILE, INBOX_FILE
from socratic.fleet.folder import Fleet, runner_alive
from socratic.logread import LogReader, LogState

SQUEUE_EVERY_S = 10.0


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else None


@dataclass
class CampaignRow:
    name: str
    session: str
    task: str
    agent: str
    questions: str
    state: str = "queued"
    reason: str | None = None          # why it ended (or stopped)
    detail: str = ""                   # an unproven end (hooks_silent, agent_exited) in words
    evaluations: int = 0
    best_geomean: float | None = None
    best_min: float | None = None
    goal: float | None = None
    against: str = "baseline"
    met: bool = False
    last_trigger: str | None = None
    pending: int = 0                   # questions in the inbox not yet delivered
    cost_usd: float = 0.0
    gpu: str | None = None             # CUDA_VISIBLE_DEVICES given by the local executor
    job: str | None = None             # Slurm job id
    gpu_waiting: bool = False          # an evaluation is waiting for its GPU turn now
    gpu_wait_s: float = 0.0            # total time its evaluations waited for the GPU
    started: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("started")
        return d


@dataclass
class _Tail:
    """New complete lines of a JSON Lines file since the last read."""

    path: Path
    offset: int = 0
    inode: int | None = None

    def read(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if self.inode is not None and (st.st_ino != self.inode or st.st_size < self.offset):
                    self.offset = 0   # replaced: read it again
                self.inode = st.st_ino
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1   # a line still being written waits for its newline
        self.offset += end
        out = []
        for raw in data[:end].splitlines():
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(obj, dict):
                out.append(obj)
        return out


@dataclass
class _Watch:
    events: LogReader
    inbox: _Tail
    inbox_questions: int = 0


def _alive(session: Path, run: dict[str, Any], slurm_active: set[str] | None) -> bool:
    """Whether a process still runs the campaign: its session lock (a held flock), else
    the pid the local runner started, else its Slurm job."""
    from socratic.fleet.liveness import pid_alive, session_held

    held = session_held(session)
    if held is not None:
        return held
    pid = run.get("pid")
    if isinstance(pid, int) and run.get("host") in (None, os.uname().nodename) \
            and pid_alive(pid):
        return run.get("exit_code") is None
    job = run.get("job")
    return bool(job and slurm_active is not None and str(job) in slurm_active)


class FleetStatus:
    """Rows of a fleet, kept current by poll()."""

    def __init__(self, path: Path):
        self.fleet = Fleet.load(path)
        self.watches = {c.name: _Watch(LogReader(self.fleet.session(c.name) / EVENTS_FILE),
                                       _Tail(self.fleet.session(c.name) / INBOX_FILE))
                        for c in self.fleet.campaigns}
        self._squeue: tuple[float, set[str]] | None = None

    def poll(self) -> list[CampaignRow]:
        try:  # the runner rewrites the manifest's runs (GPU, pid, job, exit)
            self.fleet.runs = Fleet.load(self.fleet.dir).runs
        except Exception:
            pass
        runner = runner_alive(self.fleet.dir)
        slurm_active = None
        if self.fleet.executor == "slurm":
            slurm_active = self._slurm_jobs()
        return [self._row(c, runner, slurm_active) for c in self.fleet.campaigns]

    def _slurm_jobs(self) -> set[str]:
        """The fleet's jobs Slurm still has; squeue is asked at most every SQUEUE_EVERY_S
        (the fleet screen polls far more often than a controller should be asked)."""
        from socratic.fleet.slurm import active_jobs

        now = time.monotonic()
        if self._squeue is None or now - self._squeue[0] >= SQUEUE_EVERY_S:
            jobs = [str(r["job"]) for r in self.fleet.runs.values() if r.get("job")]
            self._squeue = (now, active_jobs(jobs))
        return self._squeue[1]

    def _row(self, c, runner: bool, slurm_active: set[str] | None) -> CampaignRow:
        w = self.watches[c.name]
        w.events.poll()
        w.inbox_questions += sum(1 for cmd in w.inbox.read()
                                 if isinstance(parse_command(cmd), AskCommand))
        s, run = w.events.state, self.fleet.runs.get(c.name, {})
        row = CampaignRow(c.name, str(self.fleet.session(c.name)), c.task_name, c.agent,
                          c.questions, gpu=run.get("gpu"), job=run.get("job"))
        _fill(row, s)
        row.pending = max(0, w.inbox_questions - sum(1 for q in s.questions
                                                     if q.event.source != "auto"))
        if not s.started:
            if slurm_active is not None:
                active = bool(run.get("job")) and str(run.get("job")) in slurm_active
            else:
                active = runner
            row.state = "queued" if active else "not started"
            return row
        if s.end is not None:
            row.state, row.reason = "ended", s.end.reason or "ended"
            row.detail = end_detail(row.reason, {**s.end.extra, **vars(s.end)})
            row.met = row.met and counts_as_met(row.reason)   # its goal checks do not stand
            return row
        if not _alive(self.fleet.session(c.name), run, slurm_active):
            row.state, row.reason = "stopped", "no process (killed?); `socratic fleet run` resumes it"
            return row
        # a stop asked for runs on until the campaign ends it: the fleet shows it running
        row.state = "running" if s.status in ("stopping", "starting") else s.status
        row.gpu_waiting = s.gpu_wait is not None
        return row


def _fill(row: CampaignRow, s: LogState) -> None:
    """A row's figures: the one reading of its log (socratic.logread)."""
    row.started = s.started
    row.evaluations = len(s.evaluations)
    if s.start is not None:
        row.goal, row.against = _num(s.start.goal.min_speedup), s.terms
    row.met = bool(s.met_stops) or any(e == "goal_met" for e in s.end_reasons)
    best = s.best()
    if best is not None:
        row.best_geomean, row.best_min = s.figures(best)
    row.last_trigger = (s.last_trigger.kind or None) if s.last_trigger else None
    row.cost_usd = round(s.cost_usd, 4)
    row.gpu_wait_s = round(s.gpu_wait_s, 1)


def fleet_rows(path: Path) -> list[CampaignRow]:
    return FleetStatus(path).poll()


def session_progress(session: Path) -> tuple[bool, str | None]:
    """(started, end reason or None) of a session, from its events."""
    reader = LogReader(Path(session) / EVENTS_FILE)
    reader.poll()
    s = reader.state
    return s.started, (s.end.reason or "ended") if s.end is not None else None


def finished(session: Path) -> bool:
    """The campaign has ended for good: any end but `interrupted` (a stopped fleet, a
    preempted job), which a rerun resumes."""
    return session_progress(session)[1] not in (None, "interrupted")
