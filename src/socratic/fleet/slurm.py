"""The Slurm executor, through submitit (facebookincubator/submitit): one job per campaign,
submitted as one job array, each job running `socratic run --headless` in the campaign's
session (fleet/launch.py: CampaignJob).

Why submitit: it is the maintained, widely used way to run Python on Slurm; it writes the
sbatch script (every sbatch option as a parameter), submits job arrays with a parallelism
cap, and handles preemption and time-outs: Slurm signals the job (USR2, `signal_delay_s`
before the limit), submitit calls our checkpoint(), which ends the campaign cleanly, and
requeues the job; the requeued job resumes the session (`socratic run --resume`). Its job
files and logs go to <fleet>/slurm/, so the fleet folder must be on a filesystem the nodes
share (as the sessions must be). Job states come from `squeue` (no accounting database
needed).

[fleet] keys `slurm_<name>` are submitit's SlurmExecutor parameters (partition, time in
minutes or [D-]HH:MM:SS, gpus_per_node, cpus_per_task, mem, account, qos, setup, ...), and
`slurm_max_num_timeout` how often a timed-out job is requeued (default 3).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from socratic.errors import InputError
from socratic.fleet.folder import Fleet, now
from socratic.fleet.launch import CampaignJob
from socratic.fleet.liveness import session_held
from socratic.fleet.spec import FleetSpec
from socratic.fleet.status import finished, session_progress

POLL_S = 2.0
DEFAULT_TIME_MIN = 24 * 60     # submitit's own default is 5 minutes: far too short


def _submitit():
    try:
        import submitit
    except ImportError:
        raise InputError("executor = \"slurm\" needs submitit: pip install '.[slurm]' from the socratic checkout "
                         "(or pip install submitit)") from None
    return submitit


def _minutes(value: Any) -> int:
    """Slurm's time formats (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]) as whole minutes."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", str(value).strip())
    if not m:
        raise ValueError(value)
    days, b, c = (int(x) if x else None for x in (m.group(1), m.group(3), m.group(4)))
    a = int(m.group(2))
    if days is None and b is None:
        total = a * 60                                  # minutes
    elif days is None and c is None:
        total = a * 60 + (b or 0)                       # MM:SS
    else:
        total = (days or 0) * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    minutes = -(-total // 60)
    if minutes < 1:
        raise ValueError(value)
    return minutes


def parameters(spec_slurm: dict[str, Any], max_parallel: int | None,
               where: str) -> tuple[dict[str, Any], int]:
    """(SlurmExecutor parameters, max_num_timeout) from the [fleet] slurm_* keys."""
    submitit = _submitit()
    valid = submitit.SlurmExecutor._valid_parameters() - {"map_count"}
    params: dict[str, Any] = {"job_name": "socratic-fleet", "time": DEFAULT_TIME_MIN}
    if max_parallel:
        params["array_parallelism"] = max_parallel
    max_timeouts = 3
    for key, value in spec_slurm.items():
        name = key[len("slurm_"):]
        if name == "max_num_timeout":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{where}: `{key}` must be a whole number >= 0 (got {value!r})")
            max_timeouts = value
            continue
        if name not in valid:
            raise InputError(f"{where}: unknown Slurm parameter `{key}` (known: "
                             f"{', '.join('slurm_' + v for v in sorted(valid))}, "
                             f"slurm_max_num_timeout)")
        if name == "time":
            try:
                value = _minutes(value)
            except ValueError:
                raise InputError(f"{where}: `{key}` must be minutes or [D-]HH:MM:SS "
                                 f"(got {value!r})") from None
        params[name] = value
    return params, max_timeouts


def check_slurm(spec: FleetSpec) -> None:
    """Before anything is created: submitit importable, sbatch on PATH, parameters known."""
    parameters(spec.slurm, spec.max_parallel, str(spec.path))
    for tool in ("sbatch", "squeue"):
        if shutil.which(tool) is None:
            raise InputError(f"{spec.path}: executor = \"slurm\" but `{tool}` is not on PATH "
                             f"(run this on a Slurm login node)")


def active_jobs(ids: list[str]) -> set[str]:
    """Which of these job ids Slurm still has (pending, running, requeued), from squeue."""
    if not ids:
        return set()
    try:
        out = subprocess.run(["squeue", "--array", "--noheader", "--format=%i"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    listed = {line.strip() for line in out.stdout.splitlines() if line.strip()}
    return {i for i in ids if i in listed}


class SlurmExecutor:
    def __init__(self, fleet: Fleet, say: Callable[[str], None] | None = None):
        self.fleet = fleet
        self.say = say or (lambda text: print(f"socratic: {text}", file=sys.stderr, flush=True))
        self.params, self.max_timeouts = parameters(fleet.slurm, fleet.max_parallel,
                                                    str(fleet.dir / "fleet.toml"))
        self.folder = fleet.dir / "slurm"

    def _submit(self, specs) -> None:
        submitit = _submitit()
        executor = submitit.SlurmExecutor(folder=self.folder, max_num_timeout=self.max_timeouts)
        executor.update_parameters(**self.params)
        jobs_for = [CampaignJob(s.to_dict(), str(self.fleet.session(s.name).resolve()),
                                sys.executable) for s in specs]
        try:
            if len(jobs_for) == 1:
                jobs = [executor.submit(jobs_for[0])]
            else:
                with executor.batch():
                    jobs = [executor.submit(j) for j in jobs_for]
        except Exception as exc:
            text = " ".join(str(exc).split())
            raise InputError(f"sbatch refused the fleet's jobs: {text[:400]}") from None
        for spec, job in zip(specs, jobs, strict=False):
            self.fleet.runs[spec.name] = {"job": str(job.job_id), "submitted": now(),
                                          "log": str(Path(job.paths.stdout))}
            self.say(f"{spec.name}: submitted as Slurm job {job.job_id}")
            self.fleet.log(f"{spec.name}: submitted as job {job.job_id}")
        self.fleet.save()

    def run(self) -> int:
        """Submit every campaign that has not ended and has no live job; wait until each
        has ended or its job has left the queue."""
        names = {c.name: c for c in self.fleet.campaigns}
        known = [str(r["job"]) for r in self.fleet.runs.values() if r.get("job")]
        active = active_jobs(known)
        todo, watching = [], []
        for c in self.fleet.campaigns:
            if finished(self.fleet.session(c.name)):
                continue
            job = str(self.fleet.runs.get(c.name, {}).get("job") or "")
            if (job and job in active) or session_held(self.fleet.session(c.name)):
                self.say(f"{c.name}: already running or queued (job {job or '?'}); left to it")
            else:
                todo.append(c)
            watching.append(c.name)
        self.say(f"fleet {self.fleet.dir}: {len(watching)} of {len(names)} campaigns to run "
                 f"on Slurm ({len(todo)} to submit); job logs in {self.folder}")
        if todo:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._submit(todo)
        seen: dict[str, str] = {}
        try:
            while watching:
                time.sleep(POLL_S)
                active = active_jobs([str(self.fleet.runs.get(n, {}).get("job"))
                                      for n in watching])
                for name in list(watching):
                    started, ended = session_progress(self.fleet.session(name))
                    job = str(self.fleet.runs.get(name, {}).get("job"))
                    if started and seen.get(name) is None:
                        seen[name] = "started"
                        self.say(f"{name}: started (job {job})")
                    if job in active:
                        continue      # running, queued or requeued (ended `interrupted`)
                    watching.remove(name)
                    if finished(self.fleet.session(name)):
                        self.say(f"{name}: ended: {ended}")
                    else:
                        self.say(f"{name}: job {job} left the queue without ending the "
                                 f"campaign (see {self.fleet.runs[name].get('log')}); "
                                 f"`socratic fleet run {self.fleet.dir}` resubmits it")
        except KeyboardInterrupt:
            self.say(f"the jobs go on in the cluster: `socratic fleet status {self.fleet.dir}` "
                     f"shows them; scancel ends them")
            return 130
        n_ended = sum(finished(self.fleet.session(c.name)) for c in self.fleet.campaigns)
        return 0 if n_ended == len(self.fleet.campaigns) else 1
