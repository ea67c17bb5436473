"""The agent's Landlock domain: what an attached agent started by socratic may touch.

socratic's promise (the agent cannot stop until the goal is met on measured evaluations)
holds only if nothing the verdict depends on is in the agent's reach. The agent runs as the
same user, so file permissions keep nothing from it; Landlock (unprivileged, Linux >= 5.13)
does. Its domain, inherited by everything it starts (its shell, `./evaluate`, the hooks):

- writes: its workspace, its own config and state folders (the agent file's
  `[confine] state`), a private temporary folder and /dev; nothing else;
- reads and runs: the system folders, Python and socratic's installed code, the agent's
  program, the folders on PATH and the session folder (read-only), never the rest of
  $HOME, so never socratic's key folder ($XDG_STATE_HOME/socratic/keys);
- with Landlock ABI >= 6: no signal to, and no abstract unix socket of, any process outside
  the domain (the session server, the launcher); it reaches the session server only through
  the server's path-named socket, in a folder it cannot write (hookclient.socket_dir), so it
  can neither replace that socket nor plant a server of its own there;
- TCP is not restricted: the agent needs its API.

`SOCRATIC_CONFINE=0` turns confinement off (for a kernel where it breaks something, and
for the tests of the unconfined path); every view of the campaign then says
`confined: false`.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from socratic import landlock
from socratic.errors import InputError

OFF_ENV = "SOCRATIC_CONFINE"   # "0": run the agent unconfined
SYSTEM_READ = (*landlock.SYSTEM_FOLDERS, "/run", "/var/lib/ca-certificates")
SYSTEM_WRITE = ("/dev",)       # the terminal, /dev/null, the GPU's device files


@dataclass(frozen=True)
class Confinement:
    """Whether the agent runs confined, and how (or why not)."""

    confined: bool
    how: str
    policy: landlock.Policy | None = None


def key_dir(env: Mapping[str, str] | None = None) -> Path:
    """socratic's secret-key folder (the log's chain keys): never readable by the agent."""
    env = os.environ if env is None else env
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(state) / "socratic" / "keys"


def availability(env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """(whether an agent can be confined here, in words)."""
    env = os.environ if env is None else env
    if env.get(OFF_ENV) == "0":
        return False, f"turned off (${OFF_ENV}=0)"
    abi = landlock.abi_version()
    if abi < 1:
        return False, "no Landlock in this kernel"
    return True, f"landlock ABI {abi}" + ("" if abi >= 6 else
                                         " (signals and abstract sockets not scoped: ABI < 6)")


def _real(p: object) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(p))))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def program_root(program: str, path: str | None = None) -> Path | None:
    """The folder the agent's program runs from: the outermost node_modules of an npm
    package (its native binaries and its node code), else the program's own folder."""
    found = shutil.which(program, path=path)
    if found is None:
        return None
    real = _real(found)
    roots = [p for p in real.parents if p.name == "node_modules"]
    return roots[-1] if roots else real.parent


def python_reads() -> list[str]:
    """Python and socratic's installed code: the hook client and `./evaluate` run them."""
    import socratic

    out = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
           os.path.dirname(os.path.realpath(sys.executable))}
    try:
        out.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - a virtualenv without it
        pass
    for part in ("socratic", "socratic.harness", "socratic.evaluator", "socratic.bank",
                 "socratic.report", "socratic.fleet", "socratic.tui"):
        try:
            mod = __import__(part, fromlist=["__path__"])
            out.update(str(p) for p in getattr(mod, "__path__", []))
        except ImportError:
            pass
    out.update(str(p) for p in socratic.__path__)
    return sorted(out)


def agent_policy(*, workspace: Path, session_dir: Path, state: Iterable[Path], tmp: Path,
                 program: str, env: Mapping[str, str]) -> landlock.Policy:
    """The agent's domain (module docstring). InputError when a folder it would be granted
    holds socratic's key folder (a PATH entry of $HOME, a session under the state folder)."""
    keys = _real(key_dir(env))
    home = _real(str(env.get("HOME") or Path.home()))
    read: list[Path] = [_real(p) for p in (*SYSTEM_READ, *python_reads(), session_dir)]
    root = program_root(program, env.get("PATH"))
    if root is not None:
        read.append(root)
    for entry in (env.get("PATH") or "").split(os.pathsep):
        if entry and os.path.isabs(entry) and os.path.isdir(entry):
            p = _real(entry)
            if p.name == "shims":  # pyenv, asdf, rbenv: a shim runs its manager's own code
                p = p.parent
            if not _within(keys, p) and p != home:  # never $HOME or a folder above the keys
                read.append(p)
    write = [_real(p) for p in (workspace, tmp, *state, *SYSTEM_WRITE)]
    for p in (*read, *write):
        if _within(keys, p):
            raise InputError(f"{p}: the agent would be granted this folder, which holds "
                             f"socratic's key folder {keys}; move the session (or set "
                             f"$XDG_STATE_HOME elsewhere)")
    return landlock.Policy(read=tuple(str(p) for p in read), write=tuple(str(p) for p in write),
                           connect_tcp=None, bind_tcp=None, scope_signals=True,
                           scope_abstract_unix=True)


def path_outside(path_var: str, writable: Iterable[str]) -> str:
    """PATH without the folders the agent may write, or any inside them (nor a relative
    entry): for socratic's own processes outside its domain (the session server, the
    evaluator it runs, the compiler that runs), where a program the agent planted on the
    engineer's PATH (~/.claude/local, say) would measure, or build, whatever it likes."""
    folders = [_real(w) for w in writable]
    keep = [e for e in path_var.split(os.pathsep)
            if e and os.path.isabs(e) and not any(_within(_real(e), f) for f in folders)]
    return os.pathsep.join(keep) or os.defpath


def decide(policy: landlock.Policy, env: Mapping[str, str] | None = None) -> Confinement:
    ok, how = availability(env)
    return Confinement(ok, how, policy if ok else None)


def preexec(conf: Confinement) -> Callable[[], None] | None:
    """The function that confines the agent's process between fork and exec (None when it
    runs unconfined). It fails the start rather than run unconfined by surprise."""
    policy = conf.policy
    if policy is None:
        return None

    def confine() -> None:
        got = landlock.restrict_self(policy)
        if got.get("files") != "landlock":
            raise OSError(f"cannot confine the agent: {got.get('files')}")
    return confine


def state_paths(entries: Iterable[str], env: Mapping[str, str]) -> list[Path]:
    """The agent's own config and state (`[confine] state`: `~/.claude/` a folder,
    `~/.claude.json` a file, `$CODEX_HOME|~/.codex/` a variable's value or a default),
    made when missing so that a rule can name them."""
    home = Path(env.get("HOME") or Path.home())
    out = []
    for entry in entries:
        var, _, default = entry.rpartition("|")
        raw = env.get(var[1:]) or default if var.startswith("$") else default
        is_dir = raw.endswith("/")
        p = Path(raw.replace("~", str(home), 1) if raw.startswith("~") else raw)
        try:
            if is_dir:
                p.mkdir(parents=True, exist_ok=True)
            elif not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text("{}\n" if p.suffix == ".json" else "", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{p}: cannot make the agent's own folder ({exc.strerror})") from None
        out.append(p)
    return out
