"""The task as the harness sees it: the loaded task.toml (socratic.taskfile), its goal
and scenario ids, and the frozen snapshot of the task's files (with hashes) taken at
campaign start."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socratic.contracts import Goal
from socratic.errors import InputError
from socratic.taskfile import Task as TaskSpec
from socratic.taskfile import goal_choices, is_task_own_file, load_task


def sha256_file(path: Path) -> str:
    """The file's sha256; OSError for anything but a regular file (the workspace's task
    copies are the agent's to replace: a FIFO there would hold the session server)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return hashlib.sha256(fh.read()).hexdigest()


def sha256_text(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class CampaignTask:
    """The task as the harness uses it: task.toml read by the one loader
    (socratic.taskfile, the same as the evaluator's), and the task's files."""

    spec: TaskSpec

    @classmethod
    def load(cls, task_dir: Path) -> CampaignTask:
        return cls(load_task(task_dir))

    @property
    def dir(self) -> Path:
        return self.spec.dir

    @property
    def data(self) -> dict[str, Any]:
        return self.spec.data

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def entry(self) -> str:
        return self.spec.entry

    @property
    def baseline(self) -> str:
        """The baseline's path relative to the task directory."""
        return str(self.spec.baseline.relative_to(self.spec.dir))

    @property
    def default_set(self) -> str:
        return self.spec.default_set

    def goal(self, min_speedup: float | None = None, against: str | None = None,
             hidden: bool | None = None) -> Goal:
        """task.toml's [goal], any part overridden (--goal-min-speedup, --goal-against,
        --goal-hidden / --no-goal-hidden)."""
        g = self.spec.goal
        choices = goal_choices(self.spec.data)
        if against is not None and against not in choices:
            raise InputError(f"--goal-against {against}: task {self.name} can judge its goal "
                             f"against {', '.join(choices)}")
        return Goal(min_speedup=float(min_speedup if min_speedup is not None
                                      else g["min_speedup"]),
                    against=against or str(g["against"]),
                    hidden=(hidden if hidden is not None else bool(g.get("hidden"))) or None)

    def scenario_ids(self, set_name: str | None) -> list[str]:
        """The ids of a set (the default set when None); [] for an unknown name."""
        return [s.id for s in self.spec.sets.get(set_name or self.default_set, [])]

    def files(self) -> list[Path]:
        """The task's own files (relative paths): everything in its directory but caches."""
        out = []
        for p in sorted(self.dir.rglob("*")):
            if p.is_file() and is_task_own_file(p.relative_to(self.dir)):
                out.append(p.relative_to(self.dir))
        return out


def snapshot(task: CampaignTask, dest: Path) -> dict[str, str]:
    """Copy the task's files to `dest` (read-only) and return {relative path: sha256}."""
    hashes: dict[str, str] = {}
    dest.mkdir(parents=True, exist_ok=True)
    for rel in task.files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.dir / rel, target)
        target.chmod(0o444)
        hashes[str(rel)] = sha256_file(target)
    return hashes


def changed_files(root: Path, hashes: dict[str, str]) -> list[str]:
    """Files under `root` whose content differs from `hashes` (or that are missing)."""
    out = []
    for rel, h in sorted(hashes.items()):
        p = root / rel
        try:
            if sha256_file(p) != h:
                out.append(rel)
        except OSError:
            out.append(rel)
    return out


def restore(src: Path, root: Path, hashes: dict[str, str], names: list[str]) -> list[str]:
    """Put back `names` under `root` from `src` where `src` still matches; returns failures."""
    failed = []
    for rel in names:
        s, d = src / rel, root / rel
        try:
            if sha256_file(s) != hashes[rel]:
                failed.append(rel)
                continue
            d.parent.mkdir(parents=True, exist_ok=True)
            if d.exists():
                d.chmod(0o644)
                d.unlink()
            shutil.copyfile(s, d)
            d.chmod(0o444)
        except OSError:
            failed.append(rel)
    return failed
