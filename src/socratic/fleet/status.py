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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import retracted_on
from socratic.endreasons import counts_as_met, end_detail
from socratic.eventlog import EVENTS_FILE, INBOX_FILE
from socratic.fleet.folder import Fleet, runner_alive

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
class _Summary:
    """What a row needs from a session's events."""

    started: bool = False
    ended: str | None = None
    end_fields: dict[str, Any] = field(default_factory=dict)   # the campaign.end's
    status: str = "starting"
    evaluations: int = 0
    best: tuple[float, float] | None = None    # (min, geomean) of the best correct evaluation
    goal: float | None = None
    against: str = "baseline"
    goal_set: str | None = None
    met: bool = False
    trigger: str | None = None
    questions_logged: int = 0
    cost: float = 0.0
    gpu_waiting: bool = False
    gpu_wait_s: float = 0.0
    correct: dict[int, tuple[float, float]] = field(default_factory=dict)  # n -> (min, geomean)

    def feed(self, e: dict[str, Any]) -> None:
        kind = e.get("type")
        if kind == "campaign.start":
            self.started, self.status = True, "running"
            g = e.get("goal")
            goal: dict[str, Any] = g if isinstance(g, dict) else {}
            self.goal = _num(goal.get("min_speedup"))
            self.against = str(goal.get("against") or "baseline")
            scen = e.get("scenarios")
            sc: dict[str, Any] = scen if isinstance(scen, dict) else {}
            self.goal_set = sc.get("set")
        elif kind == "campaign.resume":
            self.ended, self.status = None, "running"
        elif kind == "campaign.end":
            self.ended, self.status = str(e.get("reason") or "ended"), "ended"
            self.end_fields = e
            self.met = self.met or self.ended == "goal_met"
            self.gpu_waiting = False
        elif kind == "eval.start":
            self.gpu_waiting = False
        elif kind == "eval.wait":
            self.gpu_waiting = True
        elif kind == "eval.end":
            self.evaluations += 1
            self.gpu_waiting = False
            self.gpu_wait_s += _num(e.get("gpu_wait_s")) or 0.0
            summ = e.get("summary")
            s: dict[str, Any] = summ if isinstance(summ, dict) else {}
            gm, mn = _num(s.get("geomean_speedup")), _num(s.get("min_speedup"))
            same_set = self.goal_set is None or e.get("set") in (None, self.goal_set)
            if s.get("all_correct") is True and same_set and gm is not None and mn is not None:
                n = e.get("n")
                if isinstance(n, int):
                    self.correct[n] = (mn, gm)
                if self.best is None or (mn, gm) > self.best:
                    self.best = (mn, gm)
        elif kind == "eval.retract" and retracted_on(e.get("part"), "baseline"):
            evals = e.get("evals")
            for n in evals if isinstance(evals, list) else []:   # taken back: no best
                self.correct.pop(n, None)
            self.best = max(self.correct.values(), default=None)
        elif kind == "stophook":
            self.met = self.met or e.get("met") is True
        elif kind == "trigger":
            self.trigger = str(e.get("kind") or "") or None
        elif kind == "question":
            self.questions_logged += e.get("source") != "auto"
            if self.status == "waiting":
                self.status = "running"
        elif kind == "usage":
            self.cost += _num(e.get("cost_usd")) or 0.0
        elif kind == "control" and self.status != "ended":
            action = e.get("action")
            if action == "pause":
                self.status = "paused"
            elif action == "resume":
                self.status = "running"
            elif action == "wait":
                self.status = "waiting"
        elif kind in ("tool.call", "agent.text") and self.status == "waiting":
            self.status = "running"


@dataclass
class _Watch:
    events: _Tail
    inbox: _Tail
    summary: _Summary = field(default_factory=_Summary)
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
        self.watches = {c.name: _Watch(_Tail(self.fleet.session(c.name) / EVENTS_FILE),
                                       _Tail(self.fleet.session(c.name) / INBOX_FILE))
                        for c in self.fleet.campaigns}
        self._squeue: tuple[float, set[str]] | None = None

    def poll(self) -> list[CampaignRow]:
        try:  # the runner rewrites the manifest's runs (GPU, pid, job, exit)
            self.fleet.runs = Fleet.load(self.fleet.dir).runs
        except Exception:  # noqa: BLE001 - a manifest being replaced: last known runs
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
        for e in w.events.read():
            w.summary.feed(e)
        w.inbox_questions += sum(1 for cmd in w.inbox.read() if cmd.get("type") == "question")
        s, run = w.summary, self.fleet.runs.get(c.name, {})
        row = CampaignRow(c.name, str(self.fleet.session(c.name)), c.task_name, c.agent,
                          c.questions, gpu=run.get("gpu"), job=run.get("job"))
        row.started = s.started
        row.evaluations, row.goal, row.against, row.met = s.evaluations, s.goal, s.against, s.met
        if s.best:
            row.best_min, row.best_geomean = s.best
        row.last_trigger, row.cost_usd = s.trigger, round(s.cost, 4)
        row.pending = max(0, w.inbox_questions - s.questions_logged)
        row.gpu_wait_s = round(s.gpu_wait_s, 1)
        if not s.started:
            if slurm_active is not None:
                active = bool(run.get("job")) and str(run.get("job")) in slurm_active
            else:
                active = runner
            row.state = "queued" if active else "not started"
            return row
        if s.ended is not None:
            row.state, row.reason = "ended", s.ended
            row.detail = end_detail(s.ended, s.end_fields)
            row.met = row.met and counts_as_met(s.ended)   # its goal checks do not stand
            return row
        if not _alive(self.fleet.session(c.name), run, slurm_active):
            row.state, row.reason = "stopped", "no process (killed?); `socratic fleet run` resumes it"
            return row
        row.state, row.gpu_waiting = s.status, s.gpu_waiting
        return row


def fleet_rows(path: Path) -> list[CampaignRow]:
    return FleetStatus(path).poll()


def session_progress(session: Path) -> tuple[bool, str | None]:
    """(started, end reason or None) of a session, from its events."""
    s = _Summary()
    for e in _Tail(Path(session) / EVENTS_FILE).read():
        s.feed(e)
    return s.started, s.ended


def finished(session: Path) -> bool:
    """The campaign has ended for good: any end but `interrupted` (a stopped fleet, a
    preempted job), which a rerun resumes."""
    return session_progress(session)[1] not in (None, "interrupted")
