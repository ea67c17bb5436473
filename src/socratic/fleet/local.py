"""The local executor: a fleet's campaigns as separate processes on this node, spread over
its GPUs (CUDA_VISIBLE_DEVICES per campaign, to the GPU running the fewest), at most
max_parallel at once, the rest queued. Campaigns that share a GPU take turns for their
evaluations' GPU work (socratic.gpulock), so their timings stay clean.

Ctrl-C (or SIGTERM) ends the running campaigns cleanly (campaign.end `interrupted`) and
starts no more; `socratic fleet run DIR` continues: ended campaigns stay ended, the others
resume, queued ones start. A campaign another process already runs (its session is held)
is left to it, counted as running, and resumed here only if it stops without an end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from socratic.fleet.folder import Fleet, now
from socratic.fleet.launch import interrupt, kill, start_campaign
from socratic.fleet.liveness import pid_alive, session_held
from socratic.fleet.spec import CampaignSpec
from socratic.fleet.status import finished, session_progress
from socratic.gpuinfo import visible_gpus

POLL_S = 0.2
STOP_GRACE_S = 60.0   # a campaign told to stop that has not ended by then is killed


@dataclass
class _Running:
    spec: CampaignSpec
    gpu: str | None
    proc: subprocess.Popen | None = None      # None: another process runs it (adopted)
    pid: int | None = None


class LocalExecutor:
    def __init__(self, fleet: Fleet, env: dict[str, str] | None = None,
                 say: Callable[[str], None] | None = None):
        self.fleet = fleet
        self.env = dict(os.environ if env is None else env)
        self.say = say or (lambda text: print(f"socratic: {text}", file=sys.stderr, flush=True))
        gpus = fleet.gpus
        self.gpus: list[str] = (visible_gpus(self.env) if gpus == "all" else
                                [] if gpus == "none" else list(gpus))
        self.max_parallel = fleet.max_parallel or max(1, len(self.gpus))
        self.stopping = False

    def _gpu_for(self, running: dict[str, _Running]) -> str | None:
        if not self.gpus:
            return None
        load = {g: 0 for g in self.gpus}
        for r in running.values():
            if r.gpu in load:
                load[r.gpu] += 1
        return min(self.gpus, key=lambda g: (load[g], self.gpus.index(g)))

    def _start(self, spec: CampaignSpec, running: dict[str, _Running]) -> None:
        gpu = self._gpu_for(running)
        env = dict(self.env)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        session = self.fleet.session(spec.name)
        try:
            proc = start_campaign(spec, session, env)
        except OSError as exc:  # e.g. the fleet folder became unwritable: say so, go on
            self.say(f"{spec.name}: could not start ({exc.strerror or exc}); "
                     f"`socratic fleet run {self.fleet.dir}` tries again")
            self.fleet.log(f"{spec.name}: could not start: {exc}")
            return
        running[spec.name] = _Running(spec, gpu, proc, proc.pid)
        self.fleet.runs[spec.name] = {"gpu": gpu, "pid": proc.pid, "host": os.uname().nodename,
                                      "started": now(), "exit_code": None}
        self.fleet.save()
        where = f" on GPU {gpu}" if gpu is not None else ""
        self.say(f"{spec.name}: started{where} (pid {proc.pid})")
        self.fleet.log(f"{spec.name}: started{where} pid {proc.pid}: {' '.join(map(str, cast(list, proc.args)))}")

    def _adopted_alive(self, r: _Running) -> bool:
        held = session_held(self.fleet.session(r.spec.name))
        if held is not None:
            return held
        return r.pid is not None and pid_alive(r.pid)

    def run(self) -> int:
        """Run every campaign that has not ended (an `interrupted` one resumes); returns 0
        when all have ended."""
        todo: list[CampaignSpec] = []
        running: dict[str, _Running] = {}
        for spec in self.fleet.campaigns:
            if finished(self.fleet.session(spec.name)):
                continue
            started, _ = session_progress(self.fleet.session(spec.name))
            run = self.fleet.runs.get(spec.name, {})
            pid = run.get("pid") if run.get("host") == os.uname().nodename else None
            held = session_held(self.fleet.session(spec.name))
            if started and (held or (held is None and pid and pid_alive(pid))):
                running[spec.name] = _Running(spec, run.get("gpu"), None, pid)
                self.say(f"{spec.name}: already running in another process; left to it")
            else:
                todo.append(spec)
        total = len(todo) + len(running)
        gpus = ", ".join(self.gpus) if self.gpus else "none (CUDA_VISIBLE_DEVICES left as is)"
        self.say(f"fleet {self.fleet.dir}: {total} of {len(self.fleet.campaigns)} campaigns "
                 f"to run, at most {self.max_parallel} at once; GPUs: {gpus}")
        self.fleet.log(f"runner pid {os.getpid()}: {total} campaigns to run")
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        terminated: float | None = None
        try:
            while (todo and not self.stopping) or running:
                while todo and not self.stopping and len(running) < self.max_parallel:
                    self._start(todo.pop(0), running)
                time.sleep(POLL_S)
                if self.stopping and terminated is None:
                    terminated = time.monotonic()
                    for name, r in list(running.items()):
                        if r.proc is None:
                            del running[name]     # not ours to stop
                        else:
                            self.say(f"{name}: stopping (the campaign ends `interrupted`)")
                            interrupt(r.proc, r.spec.attached)
                if terminated is not None and time.monotonic() - terminated > STOP_GRACE_S:
                    for r in running.values():
                        if r.proc is not None:
                            kill(r.proc)
                for name, r in list(running.items()):
                    if r.proc is None:
                        if not self._adopted_alive(r):
                            del running[name]
                            if not finished(self.fleet.session(name)):
                                todo.insert(0, r.spec)   # it stopped without an end: resume
                        continue
                    if r.proc.poll() is None:
                        continue
                    del running[name]
                    self._finished(name, r.proc.returncode)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        ended = sum(finished(self.fleet.session(c.name)) for c in self.fleet.campaigns)
        self.fleet.log(f"runner pid {os.getpid()}: done, {ended}/{len(self.fleet.campaigns)} "
                       f"ended")
        if self.stopping:
            return 130
        return 0 if ended == len(self.fleet.campaigns) else 1

    def _finished(self, name: str, code: int) -> None:
        _, reason = session_progress(self.fleet.session(name))
        run = self.fleet.runs.setdefault(name, {})
        run.update(exit_code=code, ended=now())
        self.fleet.save()
        if reason is None:
            log = self.fleet.session(name) / "campaign.log"
            last = _last_line(log)
            self.say(f"{name}: exited with code {code} without ending its campaign"
                     + (f": {last}" if last else f" (see {log})"))
        else:
            self.say(f"{name}: ended: {reason}")
        self.fleet.log(f"{name}: exit code {code}, end {reason}")

    def _on_signal(self, signum: int, frame) -> None:
        if not self.stopping:
            self.say("stopping the fleet: running campaigns end cleanly, queued ones wait "
                     f"(`socratic fleet run {self.fleet.dir}` continues)")
        self.stopping = True


def _last_line(path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""
