"""The worker's write protection: once in force, the build cache and the rest of the
filesystem cannot be written, temp dirs and reads still work."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evaluator.sandbox import protect_files
from tests.evalcli import ROOT

PROBE = r'''
import os, sys
from evaluator.sandbox import protect_files
status = protect_files(("/tmp",) if sys.argv[2] == "tmp" else ())
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


def _probe(target: str, allow: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, target, allow], capture_output=True, text=True,
                         cwd=ROOT, timeout=30).stdout.split()
    return out


def _landlock_available() -> bool:
    return _probe("/dev/null", "none")[0] == "landlock"


@pytest.mark.skipif(not _landlock_available(), reason="this kernel has no Landlock")
def test_writes_outside_the_allowed_dirs_are_denied(tmp_path):
    home_file = ROOT / ".sandbox_probe"
    try:
        assert _probe(str(home_file), "tmp")[:2] == ["landlock", "denied"]
        assert not home_file.exists()
    finally:
        home_file.unlink(missing_ok=True)


@pytest.mark.skipif(not _landlock_available(), reason="this kernel has no Landlock")
def test_allowed_dirs_and_reads_still_work(tmp_path):
    out = _probe(str(tmp_path / "scratch"), "tmp")
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
