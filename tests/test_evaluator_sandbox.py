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
    network sockets or io_uring. Only its own library and local sockets remain."""
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
    assert "read-own-library allowed" in lines and "unix allowed" in lines
    for denied in ("read-secret", "read-user-file", "write-shm", "write-tmp", "udp", "tcp", "io_uring"):
        assert f"{denied} denied" in lines, (denied, out.stdout)
    assert not __import__("os").path.exists(shm)
