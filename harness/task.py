"""The task as the harness sees it: task.toml's name, entry, baseline, goal and scenario ids,
and the frozen snapshot of the task's files (with hashes) taken at campaign start."""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from socratic.errors import InputError

TASK_FILE = "task.toml"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sha256_text(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Goal:
    min_speedup: float
    against: str = "baseline"

    def describe(self) -> str:
        vs = "the baseline" if self.against == "baseline" else \
            f"`{self.against}` (its time over yours, timed in the same evaluation)"
        return (f"every scenario correct and, in every scenario, speedup >= "
                f"{self.min_speedup:g}x against {vs}")

    def to_dict(self) -> dict[str, Any]:
        return {"min_speedup": self.min_speedup, "against": self.against}


NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")  # it names the session directory


def _check_types(path: Path, data: dict[str, Any]) -> None:
    """The keys the harness reads, with the types it uses; InputError naming the key."""
    def bad(key: str, what: str, value: Any) -> InputError:
        return InputError(f"{path}: `{key}` must be {what} (got {value!r})")

    for key in ("name", "entry", "baseline", "default_set"):
        value = data.get(key, "-")
        if not isinstance(value, str) or not value:
            raise bad(key, "a non-empty string", value)
    if not NAME_RE.match(data["name"]):
        raise bad("name", "letters, digits and _ . - (it names the session directory)",
                  data["name"])
    for key in ("goal", "sets"):
        if not isinstance(data.get(key, {}), dict):
            raise bad(key, "a table", data[key])
    goal = data.get("goal", {})
    ms = goal.get("min_speedup", 1.0)
    if (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms)
            or ms <= 0):
        raise bad("goal.min_speedup", "a positive number", ms)
    against = goal.get("against", "baseline")
    if not isinstance(against, str) or against not in goal_choices(data):
        raise bad("goal.against", " or ".join(f'"{c}"' for c in goal_choices(data))
                  + " (the baseline or one of [comparisons] names)", against)


def goal_choices(data: dict[str, Any]) -> list[str]:
    """What a goal may be judged against: the baseline, or a comparison the task names."""
    comps = data.get("comparisons")
    names = comps.get("names") if isinstance(comps, dict) else None
    return ["baseline", *(str(n) for n in names or [] if isinstance(names, list))]


@dataclass
class Task:
    dir: Path
    data: dict[str, Any]

    @classmethod
    def load(cls, task_dir: Path) -> "Task":
        path = Path(task_dir) / TASK_FILE
        if not path.is_file():
            raise InputError(f"{path}: no task.toml (TASK_DIR must be a task directory or a "
                             f"bundled task name)")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: {exc}") from None
        for key in ("name", "entry", "baseline"):
            if key not in data:
                raise InputError(f"{path}: missing key `{key}`")
        _check_types(path, data)
        if not (Path(task_dir) / data["baseline"]).is_file():
            raise InputError(f"{path}: baseline `{data['baseline']}` not found")
        return cls(Path(task_dir), data)

    @property
    def name(self) -> str:
        return str(self.data["name"])

    @property
    def entry(self) -> str:
        return str(self.data["entry"])

    @property
    def baseline(self) -> str:
        return str(self.data["baseline"])

    @property
    def default_set(self) -> str | None:
        return self.data.get("default_set")

    def goal(self, min_speedup: float | None = None, against: str | None = None) -> Goal:
        """task.toml's [goal], either part overridden (--goal-min-speedup, --goal-against)."""
        g = self.data.get("goal") or {}
        ms = min_speedup if min_speedup is not None else float(g.get("min_speedup", 1.0))
        if against is not None and against not in goal_choices(self.data):
            raise InputError(f"--goal-against {against}: task {self.name} can judge its goal "
                             f"against {', '.join(goal_choices(self.data))}")
        return Goal(float(ms), against or str(g.get("against", "baseline")))

    def scenario_ids(self, set_name: str | None) -> list[str]:
        """Ids listed explicitly in a set (grid sets are expanded by the evaluator only)."""
        sets = self.data.get("sets") or {}
        s = sets.get(set_name or self.default_set or "", {})
        if isinstance(s, dict):
            return [str(x["id"]) for x in s.get("scenarios", []) if isinstance(x, dict) and x.get("id")]
        return []

    def files(self) -> list[Path]:
        """The task's own files (relative paths): everything in its directory but caches."""
        out = []
        for p in sorted(self.dir.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("."):
                out.append(p.relative_to(self.dir))
        return out


def snapshot(task: Task, dest: Path) -> dict[str, str]:
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
