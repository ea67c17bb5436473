"""How socratic starts its own Python processes: isolated from where they run.

A process started as `python -m socratic...` from an agent's workspace would put that
folder first on sys.path (an agent's `statistics.py` or `json.py` is imported), and would
inherit PYTHONPATH, PYTHONSTARTUP, a `sitecustomize` on the path, LD_PRELOAD... all of which
an agent or a candidate can set. Every Python process socratic starts therefore runs with
`-I` (no script folder or cwd on sys.path, no PYTHON* variables, no user site), with an
allow-listed environment, from a working directory of socratic's own.
"""

from __future__ import annotations

import os
import sys
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


def isolated_python(*args: str) -> list[str]:
    """argv for `python -I ARGS...` with this interpreter."""
    return [sys.executable, "-I", *args]


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
