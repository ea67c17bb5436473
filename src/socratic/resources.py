"""Where bundled data lives once installed: tasks (kernels/) and the recorded campaigns
(sessions/: the demo folder, packed campaigns)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def bundled_dir(package: str) -> Path:
    return Path(str(resources.files(package)))


def bundled_tasks() -> list[str]:
    """Names of the tasks shipped with socratic."""
    root = bundled_dir("socratic.kernels")
    return sorted(d.name for d in root.iterdir() if (d / "task.toml").is_file())


def resolve_task_dir(arg: str) -> Path:
    """A task directory given as a path, or the name of a bundled task (e.g. `rmsnorm`).
    Neither: InputError, suggesting a bundled task whose name is close (a typo)."""
    if not arg.strip():   # Path("") is the current folder: "task.toml: missing task file"
        from socratic.errors import InputError

        raise InputError(f"task {arg!r}: empty (give a task directory or a bundled task name: "
                         f"{', '.join(bundled_tasks())})")
    path = Path(arg)
    if path.is_dir():
        return path
    if path.name == "task.toml" and path.is_file():  # the task's file named: its folder meant
        return path.parent
    bundled = bundled_dir("socratic.kernels") / arg
    if "/" not in arg and bundled.is_dir():
        return bundled
    if path.exists():
        return path  # not a directory: the caller says what is wrong with it
    import difflib

    from socratic.errors import InputError

    names = bundled_tasks()
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"bundled tasks: {', '.join(names)}"
    raise InputError(f"{arg}: no such task directory or bundled task ({hint})")


def demo_session_dir() -> Path:
    return bundled_dir("socratic.sessions") / "demo"


PACK_SUFFIX = ".socratic"  # a packed session (socratic.sessionfiles)


def bundled_sessions() -> list[str]:
    """The recorded campaigns shipped with socratic (demo, fa3-h200, ...): folders, and
    packs (`fa3-h200.socratic`) by their name without the suffix."""
    root = bundled_dir("socratic.sessions")
    return sorted(p.name.removesuffix(PACK_SUFFIX) for p in root.iterdir()
                  if (p / "events.jsonl").is_file() or
                  (p.suffix == PACK_SUFFIX and p.is_file()))


def resolve_session_dir(path: Path) -> Path:
    """A session (a folder or a pack) as given, or, when no such path exists, the bundled
    campaign of that name (`socratic replay fa3-h200`: its folder, or its pack); anything
    else is returned for the caller to report."""
    if path.exists() or "/" in str(path):
        return path
    root = bundled_dir("socratic.sessions")
    bundled = root / str(path)
    if (bundled / "events.jsonl").is_file():
        return bundled
    packed = root / f"{path}{PACK_SUFFIX}"
    return packed if packed.is_file() else path


def session_arg(path: Path) -> str:
    """How to name a session on a command line: a bundled campaign by its name
    (`fa3-h200`), any other folder or pack by its path, quoted for a shell."""
    import shlex

    try:
        bundled = Path(path).resolve().parent == bundled_dir("socratic.sessions").resolve()
    except OSError:
        bundled = False
    return Path(path).name.removesuffix(PACK_SUFFIX) if bundled else shlex.quote(str(path))


def installed(path: Path) -> bool:
    """Whether `path` lies inside the installed `socratic` package (a pip install; a
    checkout installed in editable mode keeps its sessions/ outside it): the campaigns
    bundled there are read, never written."""
    try:
        Path(path).resolve().relative_to(bundled_dir("socratic").resolve())
    except ValueError:
        return False
    return True


def unknown_session_hint(arg: Path | str) -> str:
    """What to add when `arg` names no session folder: the bundled campaigns' names, or,
    for one of them where it is not taken (watch, inject, resume: they write the session),
    how to read it instead."""
    name = str(arg)
    if "/" in name:
        return ""
    names = bundled_sessions()
    if name in names:
        return (f" ({name} is a bundled recorded campaign, read-only: `socratic replay {name}` "
                f"plays it, `socratic report {name}` sums it up)")
    return f" (bundled campaigns: {', '.join(names)})" if names else ""
