"""Where bundled data lives once installed: tasks (kernels/) and the demo session."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def bundled_dir(package: str) -> Path:
    return Path(str(resources.files(package)))


def resolve_task_dir(arg: str) -> Path:
    """A task directory given as a path, or the name of a bundled task (e.g. `rmsnorm`)."""
    path = Path(arg)
    if path.is_dir():
        return path
    bundled = bundled_dir("socratic.kernels") / arg
    if "/" not in arg and bundled.is_dir():
        return bundled
    return path  # the caller reports it missing, naming what the user typed


def demo_session_dir() -> Path:
    return bundled_dir("socratic.sessions") / "demo"
