"""The worker's write protection: once in force, the build cache and the rest of the
filesystem cannot be written, temp dirs and reads still work."""

from __future__ import annotations

import subprocess
import sys

import pytest

from socratic.evaluator.sandbox import protect_files
from tests.evalcli import ROOT

PROBE = r'''
import os, sys
from socratic.evaluator.sandbox import protect_files
status = protect_files(tuple(a for a in sys.argv[2:]))
print(status)
target = sys.argv[1]
try:
    with open(target, "w") as fh:
        fh.write("poisoned")
    print("written")
except PermissionError:
    print("denied")
print("read", len(open("/etc/passwd").read()) > 0)
'''


def _probe(target: str, *allowed: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, target, *allowed], capture_output=True, text=True,
                         cwd=ROOT, timeout=30).stdout.split()
    return out


def _landlock_available() -> bool:
    return _probe("/dev/null", "/dev")[0] == "landlock"


@pytest.mark.skipif(not _landlock_available(), reason="this kernel has no Landlock")
def test_writes_outside_the_allowed_dirs_are_denied(tmp_path):
    (tmp_path / "allowed").mkdir()
    (tmp_path / "cache").mkdir()
    target = tmp_path / "cache" / "lib.so"
    assert _probe(str(target), str(tmp_path / "allowed"))[:2] == ["landlock", "denied"]
    assert not target.exists()


@pytest.mark.skipif(not _landlock_available(), reason="this kernel has no Landlock")
def test_allowed_dirs_and_reads_still_work(tmp_path):
    out = _probe(str(tmp_path / "scratch"), str(tmp_path))
    assert out[:2] == ["landlock", "written"] and out[-1] == "True"


def test_without_landlock_it_says_why_not(monkeypatch):
    import ctypes

    class NoLandlock:
        def __init__(self, *a, **k):
            pass

        def __getattr__(self, name):
            def call(*a):
                ctypes.set_errno(38)   # ENOSYS
                return -1
            return call
    monkeypatch.setattr(ctypes, "CDLL", NoLandlock)
    assert protect_files().startswith("unavailable")


LAUNCHER_PROBE = r'''
import os, socket, sys
from socratic.evaluator.sandbox import confine_launcher
library, secret, shm, home_file = sys.argv[1:5]
planted = shm + ".planted"   # what another process left in /dev/shm, and a terminal's input
with open(planted, "w") as fh:
    fh.write("left")
_, pty = os.openpty()
terminal = os.ttyname(pty)
got = confine_launcher(library)
print("state", got["files"], got["network"], got["processes"])
def attempt(what, fn):
    try:
        fn(); print(what, "allowed")
    except OSError:
        print(what, "denied")
attempt("read-own-library", lambda: open(library, "rb").read(1))
attempt("read-secret", lambda: open(secret).read())
attempt("read-user-file", lambda: open(home_file).read())
attempt("write-shm", lambda: open(shm, "w").write("x"))
attempt("write-tmp", lambda: open("/tmp/socratic_launcher_probe_" + str(os.getpid()), "w").write("x"))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("tcp", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
attempt("socketpair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("read-shm", lambda: open(planted).read())
attempt("read-terminal", lambda: os.close(os.open(terminal, os.O_RDONLY | os.O_NOCTTY)))
attempt("read-urandom", lambda: open("/dev/urandom", "rb").read(8))
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)   # io_uring_setup
print("io_uring", "allowed" if fd >= 0 else "denied")
'''


@pytest.mark.skipif(not _landlock_available(), reason="this kernel has no Landlock")
@pytest.mark.skipif(sys.platform != "linux" or __import__("os").uname().machine != "x86_64",
                    reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_reads_only_what_it_needs_and_reaches_no_network(tmp_path):
    """What a cunning candidate's host code tries once confined: read the user's files and
    the machine's secrets, leave a file for the next evaluation (/dev/shm, /tmp), open
    sockets or io_uring. Only its own library remains."""
    build = tmp_path / "build"
    build.mkdir()
    library = build / "libcand.so"
    library.write_bytes(b"\x7fELF")
    secret = tmp_path / "secret.key"
    secret.write_text("k")
    home_file = ROOT / "README.md"
    shm = f"/dev/shm/socratic_probe_{tmp_path.name}"
    out = subprocess.run([sys.executable, "-I", "-c", LAUNCHER_PROBE, str(library), str(secret), shm, str(home_file)],
                         capture_output=True, text=True, cwd="/", timeout=60)
    lines = set(out.stdout.splitlines())
    assert "state landlock landlock seccomp" in lines, out.stdout + out.stderr
    assert "read-own-library allowed" in lines and "read-urandom allowed" in lines
    for denied in ("read-secret", "read-user-file", "write-shm", "write-tmp", "udp", "tcp", "unix", "io_uring",
                   "socketpair", "read-shm", "read-terminal"):   # the last three: red team, s27
        assert f"{denied} denied" in lines, (denied, out.stdout)
    assert not __import__("os").path.exists(shm)
    __import__("os").unlink(shm + ".planted")


# what a candidate's host code tries beyond reads, writes and the network ---------------------
CONFINED_PREFIX = r'''
import ctypes, os, signal, socket, sys
from socratic.evaluator.sandbox import confine_launcher
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    r = libc.syscall(nr, *args)
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r
def attempt(what, fn):
    try:
        fn(); print(what, "allowed", flush=True)
    except (OSError, ValueError):   # ValueError: resource.setrlimit's EPERM
        print(what, "denied", flush=True)
'''


def _confined(code: str, *args: str, before: str = "", **kw) -> dict[str, str]:
    """Run `code` in a process confined as the candidate's is (`before` runs first, as the
    world around it); its `what allowed|denied` lines, and `state`."""
    script = CONFINED_PREFIX + before + '\nprint("state", " ".join(confine_launcher("/usr/lib/x").values()), flush=True)\n' + code
    out = subprocess.run([sys.executable, "-I", "-c", script, *args], stdout=subprocess.PIPE,
                         stderr=kw.pop("stderr", subprocess.PIPE), text=True, cwd="/", timeout=60, **kw)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    if "landlock" not in lines.get("state", "") or "seccomp" not in lines.get("state", ""):
        pytest.skip(f"this kernel lacks Landlock or seccomp: {out.stdout} {out.stderr}")
    return lines


def _x86_64() -> bool:
    return sys.platform == "linux" and __import__("os").uname().machine == "x86_64"


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_dies_with_the_judge_whatever_it_tries(tmp_path):
    """A candidate that leaves the judge's process group (setsid) and clears its
    parent-death signal would outlive the judge that a timeout kills (killpg): a process of
    its own, on the GPU with its context, through later evaluations. It cannot do either."""
    import os
    import signal
    import time

    cand = CONFINED_PREFIX + r'''
print("state", " ".join(confine_launcher("/usr/lib/x").values()), flush=True)
attempt("setsid", os.setsid)
attempt("setpgid", lambda: os.setpgid(0, 0))
attempt("pdeathsig", lambda: sc(157, 1, 0, 0, 0, 0))   # prctl(PR_SET_PDEATHSIG, 0)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
print("pid", os.getpid(), flush=True)
import time; time.sleep(60)
'''
    judge = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-I', '-c', sys.argv[1]], cwd='/'); "
             "time.sleep(60)")
    worker = subprocess.Popen([sys.executable, "-I", "-c", judge, cand], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)   # as the runner starts the worker
    lines: dict[str, str] = {}
    assert worker.stdout is not None
    while "pid" not in lines:
        line = worker.stdout.readline()
        assert line, lines
        what, _, rest = line.strip().partition(" ")
        lines[what] = rest
    pid = int(lines["pid"])
    try:
        if "landlock" not in lines["state"] or "seccomp" not in lines["state"]:
            pytest.skip(f"this kernel lacks Landlock or seccomp: {lines['state']}")
        os.killpg(worker.pid, signal.SIGKILL)   # the runner's timeout
        worker.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid), lines
        for what in ("setsid", "setpgid", "pdeathsig"):
            assert lines[what] == "denied", lines
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_reaches_no_local_service(tmp_path):
    """A path-named Unix socket is no file Landlock guards: a confined candidate could
    connect to any local service that trusts its uid (tmux's /tmp/tmux-UID/default, the
    systemd user manager and D-Bus under /run/user/UID, docker.sock, the session server)
    and have it run commands outside the sandbox. It opens no socket at all."""
    import socket

    path = str(tmp_path / "service.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    server.settimeout(0.5)
    try:
        lines = _confined(r'''
def talk():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1]); s.sendall(b"run: sh -c 'touch ~/owned'\n")
attempt("connect", talk)
attempt("abstract", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind("\0socratic-probe"))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
''', path)
        try:
            conn, _ = server.accept()
            heard = conn.recv(100)
        except OSError:
            heard = b""
    finally:
        server.close()
    assert heard == b"", heard
    for what in ("connect", "abstract", "udp"):
        assert lines[what] == "denied", lines


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_leaves_no_ipc_object_and_reads_no_keyring():
    """SysV shared memory, queues and semaphores outlive the process that made them (a
    channel to the next evaluation's candidate, or to anything of the user's); the kernel
    keyrings hold the user's keys and outlive it too. None is reachable."""
    import os

    key = 0x50C0000 + os.getpid() % 0xFFFF
    before = r'''
sc(250, 1, None)   # keyctl(KEYCTL_JOIN_SESSION_KEYRING): a keyring of this test's own
secret = sc(248, b"user", b"socratic-probe", b"the user's secret", 17, -3)
'''
    try:
        lines = _confined(r'''
key = int(sys.argv[1])
attempt("shmget", lambda: sc(29, key, 4096, 0o1000 | 0o600))
attempt("msgget", lambda: sc(68, key, 0o1000 | 0o600))
attempt("semget", lambda: sc(64, key, 1, 0o1000 | 0o600))
attempt("shmctl", lambda: sc(31, 0, 2, ctypes.create_string_buffer(256)))   # IPC_STAT of segment 0
buf = ctypes.create_string_buffer(64)
attempt("keyctl-read", lambda: sc(250, 11, secret, buf, 64))   # KEYCTL_READ
attempt("add-key", lambda: sc(248, b"user", b"left-behind", b"x", 1, -4))   # the user keyring
''', str(key), before=before)
    finally:
        for flag in ("-M", "-Q", "-S"):   # what the candidate left behind
            subprocess.run(["ipcrm", flag, str(key)], capture_output=True)
    for what in ("shmget", "msgget", "semget", "shmctl", "keyctl-read", "add-key"):
        assert lines[what] == "denied", lines


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_fills_no_disk_and_dumps_no_core(tmp_path):
    """Its stdout and stderr are a file of the judge's (read back for error lines): writes
    there are not Landlock's to stop, so they are capped; and it leaves no core dump (a
    core_pattern helper would keep the candidate's memory on disk)."""
    from socratic.evaluator.sandbox import CANDIDATE_FILE_LIMIT

    with open(tmp_path / "stderr", "wb") as err:
        lines = _confined(r'''
import resource
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
attempt("grow", lambda: [os.write(2, b"A" * (1 << 20)) for _ in range(64)])
attempt("raise-limit", lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (-1, -1)))
attempt("core", lambda: resource.setrlimit(resource.RLIMIT_CORE, (1 << 20, 1 << 20)))
''', stderr=err)
    assert (tmp_path / "stderr").stat().st_size <= CANDIDATE_FILE_LIMIT
    for what in ("grow", "raise-limit", "core"):
        assert lines[what] == "denied", lines


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_without_landlock_scoping_it_still_signals_no_other_process():
    """Landlock scopes signals from ABI 6 on; below (Linux 5.13-6.11: Ubuntu 22.04 and
    24.04) seccomp is the only guard: kill and tgkill were kept to the process itself, but
    rt_sigqueueinfo (sigqueue) reached any process of the user: the judge, the session
    server, the agent."""
    import os
    import signal

    victim = subprocess.Popen(["sleep", "60"])
    try:
        lines = _confined(r'''
class SigInfo(ctypes.Structure):
    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int), ("pad", ctypes.c_char * 116)]
info = SigInfo(signal.SIGKILL, 0, -1)   # SI_QUEUE, as sigqueue(3) sends
victim = int(sys.argv[1])
attempt("kill", lambda: os.kill(victim, signal.SIGKILL))
attempt("rt_sigqueueinfo", lambda: sc(129, victim, signal.SIGKILL, ctypes.byref(info)))
attempt("rt_tgsigqueueinfo", lambda: sc(297, victim, victim, signal.SIGKILL, ctypes.byref(info)))
attempt("own", lambda: sc(129, os.getpid(), 0, ctypes.byref(info)))
''', str(victim.pid), before="import socratic.landlock\nsocratic.landlock.abi_version = lambda: 4   # no scoping\n")
        assert victim.poll() is None, lines
        for what in ("kill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            assert lines[what] == "denied", lines
        assert lines["own"] == "allowed", lines
    finally:
        if victim.poll() is None:
            os.kill(victim.pid, signal.SIGKILL)
        victim.wait()


DROP_CAPS_AND_WAIT = r'''
import ctypes, time
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
data = (ctypes.c_uint32 * 6)()
ctypes.CDLL(None).syscall(126, ctypes.byref(Header(0x20080522, 0)), data)   # capset: none, as a user's process
print("ready", flush=True)
time.sleep(60)
'''


@pytest.mark.skipif(not _x86_64(), reason="the launcher's seccomp filter is x86-64 only")
def test_the_candidates_process_sets_no_other_processs_limits_or_scheduling():
    """prlimit64 on another process of the user needs no capability and is not Landlock's
    to stop: a candidate could give the judge, the runner or the session server a CPU-time
    limit of one second (killed), no file descriptors or a file-size limit (their writes
    fail). Its scheduling (SCHED_IDLE, nice, affinity, I/O priority) likewise, wherever
    that process holds no capability the candidate lacks (any user's but root's)."""
    import os
    import signal

    victim = subprocess.Popen([sys.executable, "-I", "-c", DROP_CAPS_AND_WAIT], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None and victim.stdout.readline().strip() == "ready"
        before = open(f"/proc/{victim.pid}/limits").read(), os.sched_getscheduler(victim.pid)
        lines = _confined(r'''
v = int(sys.argv[1])
one = (ctypes.c_uint64 * 2)(1, 1)
attempt("prlimit-cpu", lambda: sc(302, v, 0, ctypes.byref(one), None))         # RLIMIT_CPU
attempt("prlimit-files", lambda: sc(302, v, 7, ctypes.byref(one), None))       # RLIMIT_NOFILE
attempt("sched-idle", lambda: sc(144, v, 5, ctypes.byref(ctypes.c_int(0))))    # SCHED_IDLE
attempt("nice", lambda: sc(141, 0, v, 19))                                     # PRIO_PROCESS
attempt("nice-user", lambda: sc(141, 2, os.getuid(), 19))                      # PRIO_USER: all of the user's
attempt("affinity", lambda: sc(203, v, 8, ctypes.byref(ctypes.c_uint64(1))))
attempt("ioprio", lambda: sc(251, 1, v, 3 << 13))                              # IOPRIO_CLASS_IDLE
own = (ctypes.c_uint64 * 2)()
attempt("own-limits", lambda: sc(302, 0, 7, None, ctypes.byref(own)))          # getrlimit, as glibc asks
attempt("own-nice", lambda: sc(141, 0, 0, 1))
''', str(victim.pid))
        assert (open(f"/proc/{victim.pid}/limits").read(), os.sched_getscheduler(victim.pid)) == before, lines
        for what in ("prlimit-cpu", "prlimit-files", "sched-idle", "nice", "nice-user", "affinity", "ioprio"):
            assert lines[what] == "denied", lines
        assert lines["own-limits"] == lines["own-nice"] == "allowed", lines
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
