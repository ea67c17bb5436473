"""How socratic starts its own Python processes: isolated from where they run.

A process started as `python -m socratic...` from an agent's workspace would put that
folder first on sys.path (an agent's `statistics.py` or `json.py` is imported), and would
inherit PYTHONPATH, PYTHONSTARTUP, a `sitecustomize` on the path, LD_PRELOAD... all of which
an agent or a candidate can set. Every Python process socratic starts therefore runs with
`-I` (no script folder or cwd on sys.path, no PYTHON* variables, no user site), with an
allow-listed environment, from a working directory of socratic's own.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from pathlib import Path

# variables a child may need: locale and terminal, where the GPU and the toolkit are,
# socratic's own settings and the agents' API settings (passed on only where given)
_KEEP_EXACT = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ",
    "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
    "CC", "CXX", "SSH_AUTH_SOCK",
})
_KEEP_PREFIXES = ("LC_", "SOCRATIC_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE_", "CODEX_")
# never passed on, whatever the prefix says
_DROP_PREFIXES = ("PYTHON", "LD_", "DYLD_")


def clean_env(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `base` (default: this process's environment) plus `extra`.
    No PYTHON* and no LD_* variable survives, `extra` included."""
    src = os.environ if base is None else base
    env = {k: v for k, v in src.items()
           if (k in _KEEP_EXACT or k.startswith(_KEEP_PREFIXES)) and not k.startswith(_DROP_PREFIXES)}
    for k, v in (extra or {}).items():
        if not k.startswith(_DROP_PREFIXES):
            env[k] = v
    env.setdefault("PATH", os.defpath)
    return env


@functools.cache
def _package_root() -> str | None:
    """The folder to put on an isolated child's path so that it imports this same
    socratic: None where the interpreter finds it anyway (installed in site-packages, or
    an editable install, whose finder site-packages loads); else the folder socratic was
    imported from (an install with `pip --target`, say), which holds nothing else of the
    user's shell."""
    pkg = Path(__file__).resolve().parent
    if pkg.name != "socratic":   # the checkout's core/, mapped by an editable install's finder
        return None
    root = str(pkg.parent)
    known = {str(Path(p).resolve()) for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"],
                                              sysconfig.get_paths()["platlib"]]}
    return None if root in known else root


def isolated_python(*args: str) -> list[str]:
    """argv for `python -I ARGS...` with this interpreter (`-m MODULE` run from socratic's
    own install folder where site-packages would not find it)."""
    root = _package_root()
    if root is None or len(args) < 2 or args[0] != "-m":
        return [sys.executable, "-I", *args]
    boot = (f"import runpy, sys; sys.path.insert(0, {root!r}); "
            f"runpy.run_module({args[1]!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-I", "-c", boot, *args[2:]]


def private_cwd() -> str:
    """A working directory of socratic's own for its children: empty, owned by this user,
    never an agent's workspace."""
    base = Path(tempfile.gettempdir()) / f"socratic-{os.getuid()}-cwd"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        st = base.stat()
        if st.st_uid == os.getuid() and not (st.st_mode & 0o022):
            return str(base)
    except OSError:
        pass
    return "/"
