"""Starting an attached agent: the session server first, outside the agent's reach, then the
agent in its Landlock domain (harness/attached/confine.py), its hooks loaded from a file it cannot
edit. Used by `socratic attach --launch`, `--headless` and `socratic agent NAME [ARGS]`.

Order matters: the server is started here, by socratic, with an allow-listed environment
(socratic.pyproc: nothing the agent set, no PYTHONPATH) before the agent exists, so no
hook (which runs inside the agent's domain) ever starts one; it is held by a pipe and exits
when this launcher does. The launch is logged (`agent.launch`: confined or not, and how).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import AgentLaunch, Problem
from socratic.errors import InputError
from socratic.harness.attached import agentspec, confine, hookcheck
from socratic.harness.attached.hookclient import connect, socket_path
from socratic.pyproc import clean_env, isolated_python

_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def _server_env(writable: Iterable[str] = ()) -> dict[str, str]:
    """The session server's environment: allow-listed, and without any key or token (it
    needs none; a confined agent can read a process's initial environment as root); its
    PATH (the evaluator's, the compiler's) without the folders the agent may write."""
    env = {k: v for k, v in clean_env().items() if not any(w in k.upper() for w in _SECRET_WORDS)}
    env["PATH"] = confine.path_outside(env["PATH"], writable)
    return env


SERVER_START_S = 30.0     # how long a starting server gets to listen
SERVER_LOG = "hookserver.log"


@dataclass
class Server:
    """The session's server, held by this process through its stdin."""

    proc: subprocess.Popen[bytes]
    path: str

    def register(self, pid: int) -> None:
        """Tell the server which process is the agent it serves (its hooks are its
        descendants)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(f"agent {pid}\n".encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass

    def stop(self, wait_s: float = 10.0) -> None:
        """Let go of it: it exits once its requests in flight are answered."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def start_server(session_dir: Path, writable: Iterable[str] = ()) -> Server:
    """`socratic hook serve --held` for the session, isolated, listening when this returns;
    `writable`: the folders the agent may write (left off the server's PATH).
    InputError when another server already serves the session (another launch's, or one
    planted: either way not this launch's to trust)."""
    session_dir = session_dir.resolve()
    path = socket_path(str(session_dir))
    if os.path.exists(path):
        s = connect(path)
        if s is not None:
            s.close()
            raise InputError(f"{session_dir}: a session server already serves it (socket "
                             f"{path}); end the agent that uses it first")
    with open(session_dir / SERVER_LOG, "ab") as log:
        proc = subprocess.Popen(
            isolated_python("-m", "socratic", "hook", "serve", "--session", str(session_dir),
                            "--held"),
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log, cwd=session_dir,
            env=_server_env(writable), start_new_session=True)
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        s = connect(path) if os.path.exists(path) else None
        if s is not None:
            s.close()
            if proc.poll() is not None:  # another one won the race: not ours
                raise InputError(f"{session_dir}: a session server already serves it")
            return Server(proc, path)
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    Server(proc, path).stop(wait_s=1)
    raise InputError(f"{session_dir}: the session server did not start (see "
                     f"{session_dir / SERVER_LOG})")


@dataclass
class Launch:
    """An agent ready to start: its argv, environment and domain; `close()` when it ended."""

    session_dir: Path
    spec: agentspec.AgentSpec
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    confinement: confine.Confinement
    server: Server
    tmp: Path
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    log: Any = None      # the launcher's SessionLog: the hooks are checked again at the end

    @property
    def preexec(self) -> Callable[[], None] | None:
        return confine.preexec(self.confinement)

    def started(self, pid: int) -> None:
        self.server.register(pid)

    def close(self) -> None:
        self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.log is not None:   # an edit the agent made during its run is on the record
            _check_and_say(self.session_dir, self.spec, self.log, "after the run")
        for undo in self.cleanups:
            undo()


def _check_and_say(session_dir: Path, spec: agentspec.AgentSpec, log: Any, when: str) -> None:
    from socratic.harness.attached.attached_campaign import trusted_events

    events, _ = trusted_events(session_dir)
    facts = hookcheck.facts(events)
    found = hookcheck.problems(session_dir, spec, hookcheck.Facts(facts.pinned, launched=True))
    if found:
        if hookcheck.loads_workspace(spec, True):
            hookcheck.put_back(session_dir, spec)
            found.append(f"the workspace's hook files were put back {when}")
        log.write(Problem(where=hookcheck.WHERE, error=hookcheck.line(found)))


def check_hooks(session_dir: Path, spec: agentspec.AgentSpec, log: Any) -> list[Callable[[], None]]:
    """Before a launch (harness/attached/hookcheck.py): the hooks this session will load checked
    against their pins, a workspace hook file the agent loads put back, any difference
    logged; a workspace file the agent would read besides its flags emptied for the launch
    (put back by the returned cleanups)."""
    _check_and_say(session_dir, spec, log, "before the launch")
    if not spec.confine.strips_workspace or not hookcheck.pristine(session_dir, spec).is_file():
        return []
    hookcheck.write_in_workspace(session_dir / "workspace", spec.config_file,
                                 (json.dumps({"hooks": {}}) + "\n").encode())
    return [lambda: hookcheck.put_back(session_dir, spec)]


def prepare(session_dir: Path, argv: list[str], mode: str,
            extra_env: dict[str, str] | None = None) -> Launch:
    """Everything before the agent starts: the hook settings it loads, its domain, the
    server, the launch logged. `argv` is the agent's command as its data file says."""
    from socratic.harness.attached.attach import hook_settings_file
    from socratic.harness.attached.attached_campaign import AttachedCampaign
    from socratic.harness.core.sessionlog import SessionLog

    session_dir = session_dir.resolve()
    camp = AttachedCampaign(session_dir)
    spec = agentspec.load(camp.settings.agent)
    settings = hook_settings_file(session_dir, spec)
    if settings is not None and not settings.is_file():
        raise InputError(f"{settings}: missing (the session predates confined launches, or "
                         f"was damaged); attach a new session")
    argv = spec.confine.argv(argv, settings) if settings is not None else list(argv)
    env = dict(os.environ, **(extra_env or {}), **spec.confine.environ(settings))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(spec.root_env)
    tmp = Path(tempfile.mkdtemp(prefix="socratic-agent-"))
    env["TMPDIR"] = str(tmp)
    # the hooks find their session by this, not by the workspace's marker file (the agent
    # can rewrite that one to send its stop to no session, or to one of its own making)
    env["SOCRATIC_SESSION"] = str(session_dir)
    workspace = camp.session.workspace.resolve()
    cleanups: list[Callable[[], None]] = []
    try:
        policy = confine.agent_policy(
            workspace=workspace, session_dir=session_dir,
            state=confine.state_paths(spec.confine.state, env), tmp=tmp, program=argv[0],
            env=env)
        conf = confine.decide(policy)
        log = SessionLog(session_dir, camp.settings.start_epoch, role="attach")
        cleanups = check_hooks(session_dir, spec, log)
        log.write(AgentLaunch(agent=spec.name, confined=conf.confined, how=conf.how, mode=mode))
        server = start_server(session_dir, writable=policy.write)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for undo in cleanups:
            undo()
        raise
    return Launch(session_dir, spec, argv, env, workspace, conf, server, tmp, cleanups, log)


def popen(launch: Launch, **kwargs) -> subprocess.Popen[bytes]:
    """Start the prepared agent (confined when it can be)."""
    try:
        proc = subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env,
                                preexec_fn=launch.preexec, **kwargs)
    except FileNotFoundError:
        launch.close()
        raise InputError(f"`{launch.argv[0]}` not found on PATH (install it: "
                         f"{launch.spec.install})") from None
    except (OSError, subprocess.SubprocessError) as exc:
        launch.close()
        raise InputError(f"cannot start {launch.spec.title} confined ({exc}); "
                         f"${confine.OFF_ENV}=0 starts it unconfined, on the record") from None
    launch.started(proc.pid)
    return proc


def run_interactive(session_dir: Path, argv: list[str], mode: str) -> int:
    """The agent in this terminal until it exits; its exit code."""
    launch = prepare(session_dir, argv, mode)
    if not launch.confinement.confined:
        print(f"socratic: the agent runs UNCONFINED ({launch.confinement.how}): it can reach "
              f"the session's files", file=sys.stderr)
    try:
        proc = popen(launch)
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # the agent has the terminal: its own Ctrl-C
                continue
    finally:
        launch.close()

