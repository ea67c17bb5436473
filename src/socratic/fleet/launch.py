"""How one campaign of a fleet runs: `socratic run --headless` in its session folder
(`--resume` once the session has started), or for an outside agent (claude, codex, gemini)
`socratic attach --headless` (`attach DIR --resume --headless` once started), its output
appended to campaign.log. The local executor starts it as a child process; a Slurm job runs
it through CampaignJob. Either verb ends its campaign `interrupted` on SIGTERM (attach
stops its agent first), so preemption and Ctrl-C work alike."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.fleet.spec import CampaignSpec
from socratic.fleet.status import session_progress


def campaign_argv(spec: CampaignSpec, session: Path, python: str | None = None) -> list[str]:
    started, _ = session_progress(session)
    return [python or sys.executable, "-m", "socratic", *spec.argv(session, resume=started)]


def start_campaign(spec: CampaignSpec, session: Path, env: dict[str, str],
                   python: str | None = None) -> subprocess.Popen:
    """The campaign as a child in its own session (a Ctrl-C in the fleet's terminal reaches
    only the runner, which ends its campaigns cleanly), output to campaign.log."""
    session.mkdir(parents=True, exist_ok=True)
    argv = campaign_argv(spec, session, python)
    with open(session / "campaign.log", "ab") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                env=env, start_new_session=True,
                                # Slurm's preemption/timeout signal is for the job's
                                # submitit process, which ends the campaign cleanly
                                preexec_fn=_ignore_usr2)


def _ignore_usr2() -> None:
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)


def interrupt(proc: subprocess.Popen, attached: bool) -> None:
    """Ask a campaign to end `interrupted`: SIGTERM to its process group for `socratic
    run`; for `socratic attach --headless` to the attach process alone, which stops its
    agent (and the agent's hooks) itself before it logs the end."""
    if proc.poll() is not None:
        return
    try:
        if attached:
            os.kill(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        pass


def kill(proc: subprocess.Popen) -> None:
    """The campaign's whole process group (its agent, hooks, evaluator): it did not end."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def stop(proc: subprocess.Popen, grace_s: float = 60.0, attached: bool = False) -> int:
    """interrupt() (the campaign logs campaign.end `interrupted`; `--resume` continues it),
    then kill() if it has not ended within grace_s. Polls rather than blocking in wait():
    it may run in a signal handler that interrupted a wait on the same process."""
    deadline = time.monotonic() + grace_s
    interrupt(proc, attached)
    while proc.poll() is None:
        if time.monotonic() > deadline:
            kill(proc)
            deadline = float("inf")
        time.sleep(0.1)
    return proc.returncode


@dataclass
class CampaignJob:
    """What a Slurm job runs (pickled by submitit): the campaign, as a child process.
    On preemption or time-out submitit calls checkpoint() in the job: the campaign is ended
    cleanly and the job requeued with a fresh CampaignJob, which resumes the session."""

    spec: dict[str, Any]
    session: str
    python: str
    _proc: subprocess.Popen | None = field(default=None, repr=False, compare=False)

    def __call__(self) -> int:
        env = dict(os.environ)
        self._proc = start_campaign(CampaignSpec.from_dict(self.spec), Path(self.session), env,
                                    self.python)
        while self._proc.poll() is None:  # not wait(): checkpoint() may interrupt it
            time.sleep(0.5)
        return self._proc.returncode

    def checkpoint(self, *args: Any, **kwargs: Any):
        import submitit

        if self._proc is not None:
            stop(self._proc, grace_s=30.0,
                 attached=CampaignSpec.from_dict(self.spec).attached)
        return submitit.helpers.DelayedSubmission(
            CampaignJob(self.spec, self.session, self.python))

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "session": self.session, "python": self.python}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec, self.session, self.python = state["spec"], state["session"], state["python"]
        self._proc = None
