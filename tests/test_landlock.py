"""core/landlock.py and core/pyproc.py: the confinement builder and isolated children."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from socratic.landlock import abi_version
from socratic.pyproc import clean_env, isolated_python

needs_landlock = pytest.mark.skipif(abi_version() < 4, reason="Landlock ABI >= 4 needed (this kernel has "
                                    f"{abi_version()})")

PROBE = r"""
import os, socket, sys
from socratic.landlock import Policy, restrict_self
allowed = sys.argv[1]
got = restrict_self(Policy(read=tuple(p for p in sys.path if p) + ("/usr", "/lib", "/lib64", "/etc/ld.so.cache",
                                                                   allowed),
                           write=(allowed,), connect_tcp=(), scope_signals=True))
print("state", got["files"], got["network"])
def attempt(what, fn):
    try:
        fn(); print(what, "allowed")
    except OSError:
        print(what, "denied")
attempt("read-secret", lambda: open(sys.argv[2]).read())
attempt("write-outside", lambda: open(sys.argv[3], "w").write("x"))
attempt("write-inside", lambda: open(os.path.join(allowed, "f"), "w").write("x"))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[4])), timeout=2))
"""


@needs_landlock
def test_policy_denies_reads_writes_and_tcp_outside_its_rules(tmp_path):
    allowed, secret_dir, outside = tmp_path / "allowed", tmp_path / "secret", tmp_path / "outside"
    for d in (allowed, secret_dir, outside):
        d.mkdir()
    (secret_dir / "key").write_text("s3cret")
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        out = subprocess.run([sys.executable, "-c", PROBE, str(allowed), str(secret_dir / "key"),
                              str(outside / "f"), str(port)], capture_output=True, text=True, timeout=60).stdout
    finally:
        server.close()
    assert "state landlock landlock" in out, out
    assert "read-secret denied" in out and "write-outside denied" in out and "tcp denied" in out, out
    assert "write-inside allowed" in out, out
    assert not (outside / "f").exists()


def test_clean_env_drops_interpreter_and_loader_settings():
    env = clean_env({"LD_PRELOAD": "/x.so", "SOCRATIC_X": "1"},
                    base={"PATH": "/bin", "PYTHONPATH": "/evil", "PYTHONSTARTUP": "/e.py", "LD_LIBRARY_PATH": "/l",
                          "HOME": "/h", "LC_ALL": "C", "RANDOM_SECRET": "k", "PYTHONHOME": "/p"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "SOCRATIC_X": "1"}


def test_isolated_python_ignores_a_planted_module_and_pythonpath(tmp_path):
    (tmp_path / "json.py").write_text("raise SystemExit('planted json imported')\n")
    (tmp_path / "sitecustomize.py").write_text("raise SystemExit('planted sitecustomize imported')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    plain = subprocess.run([sys.executable, "-c", "import json"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert plain.returncode != 0   # the attack works on a plain interpreter
    safe = subprocess.run(isolated_python("-c", "import json; print('ok')"), cwd=tmp_path,
                          env=clean_env(base=env), capture_output=True, text=True)
    assert safe.stdout.strip() == "ok", safe.stderr
