"""A real single-node Slurm for the tests: munged, slurmctld and slurmd (Debian's
`slurm-wlm` and `munge`) started as root in a temporary folder, with their own key,
socket, ports and state, so nothing of the machine's own configuration is used or changed.
Clients find it through SLURM_CONF (in `env`)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "srun", "sinfo")


def why_not() -> str | None:
    """None when a cluster can be started here, else why not (a skip reason)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the test Slurm runs its daemons as root (run the tests as root, as CI does)"
    missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None
               and not Path("/usr/sbin", t).exists()]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} missing): "
                f"apt-get install -y slurm-wlm munge")
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class Cluster:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.chmod(0o755)  # munged refuses group/other-writable paths
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.pids: list[int] = []

    def _write(self) -> None:
        r = self.root
        for d in ("munge", "state", "spool", "log"):
            (r / d).mkdir(mode=0o700, exist_ok=True)
        key = r / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o600)
        cpus = os.cpu_count() or 1
        self.conf.write_text(f"""\
ClusterName=socratic-test
SlurmctldHost={self.host}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={r}/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
InactiveLimit=0
KillWait=5
Waittime=0
NodeName={self.host} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
""")

    def _daemon(self, argv: list[str], pidfile: Path) -> None:
        subprocess.run(argv, env=self.env, check=True, timeout=60, capture_output=True)
        deadline = time.monotonic() + 30
        # the daemon creates its pid file before it writes the pid: wait for the content
        while time.monotonic() < deadline:
            words = pidfile.read_text().split() if pidfile.exists() else []
            if words:
                self.pids.append(int(words[0]))
                return
            time.sleep(0.1)
        raise RuntimeError(f"{argv[0]} wrote no pid to {pidfile} within 30 s")

    def start(self) -> Cluster:
        self._write()
        r = self.root
        self._daemon([_exe("munged"), "--force", f"--key-file={r}/munge/munge.key",
                      f"--socket={r}/munge/munge.sock", f"--pid-file={r}/munge/munged.pid",
                      f"--log-file={r}/log/munged.log", f"--seed-file={r}/munge/seed"],
                     r / "munge" / "munged.pid")
        self._daemon([_exe("slurmctld"), "-c", "-i"], r / "slurmctld.pid")
        self._daemon([_exe("slurmd"), "-N", self.host], r / "slurmd.pid")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "--noheader", "--format=%t"], env=self.env,
                                 capture_output=True, text=True, timeout=30).stdout.split()
            if out and out[0] in ("idle", "mix", "alloc"):
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the test Slurm did not come up: {self.log_tail()}")

    def log_tail(self) -> str:
        out = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log"):
            p = self.root / "log" / name
            if p.exists():
                out.append(f"{name}: " + " | ".join(p.read_text(errors="replace")
                                                    .splitlines()[-5:]))
        return "\n".join(out)

    def run(self, *argv: str) -> str:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True,
                              timeout=60, check=True).stdout

    def stop(self) -> None:
        """Cancel every job, wait for them to leave, then end the daemons this cluster
        started (by pid; SIGKILL for one that has not ended after 10 s)."""
        try:
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env, timeout=30,
                           capture_output=True)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and subprocess.run(
                    ["squeue", "--noheader"], env=self.env, capture_output=True, text=True,
                    timeout=30).stdout.strip():
                time.sleep(0.5)
        except (OSError, subprocess.SubprocessError):
            pass
        for pid in reversed(self.pids):
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in self.pids):
            time.sleep(0.2)
        for pid in self.pids:
            _signal(pid, signal.SIGKILL)
        self.pids.clear()


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
