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
