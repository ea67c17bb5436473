"""A fleet's folder: its campaigns' sessions as direct subfolders (so `socratic report`,
`replay` and `run --resume` work on each unchanged) and a manifest saying which is which.

    <fleet>/
      fleet.toml        the fleet file as given (a rerun compares against it)
      fleet.json        manifest: executor, campaigns (name = session folder, task, agent,
                        questions mode, run arguments) and runs (GPU, pid or Slurm job, exit)
      fleet.lock        flock held by the `socratic fleet run` that drives the fleet
      fleet.log         what the runner did, timestamped
      slurm/            submitit's job files and logs (Slurm executor)
      01-rmsnorm-auto/  a session (events.jsonl, workspace/, ...), created when it starts
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from socratic.errors import InputError
from socratic.fleet.spec import CampaignSpec, FleetSpec
from socratic.fleetfolder import MANIFEST, is_fleet

SCHEMA = "socratic.fleet/1"
COPY = "fleet.toml"
LOCK = "fleet.lock"
LOG = "fleet.log"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def default_dir(spec_path: Path) -> Path:
    return Path("sessions") / f"{datetime.now():%Y%m%d-%H%M%S}-fleet-{Path(spec_path).stem}"


@dataclass
class Fleet:
    dir: Path
    executor: str
    max_parallel: int | None
    gpus: str | list[str]
    slurm: dict[str, Any]
    campaigns: list[CampaignSpec]
    created: str = ""
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)   # by campaign name

    def session(self, name: str) -> Path:
        return self.dir / name

    def run(self, name: str) -> dict[str, Any]:
        return self.runs.setdefault(name, {})

    def spec(self, path: Path) -> FleetSpec:
        """The fleet as a spec (`path`: its file), to continue it where it is."""
        return FleetSpec(path=path, executor=self.executor, max_parallel=self.max_parallel,
                         gpus=self.gpus, slurm=dict(self.slurm), campaigns=list(self.campaigns))

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "created": self.created, "executor": self.executor,
                "max_parallel": self.max_parallel, "gpus": self.gpus, "slurm": self.slurm,
                "campaigns": [c.to_dict() for c in self.campaigns], "runs": self.runs}

    def save(self) -> None:
        tmp = self.dir / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        os.replace(tmp, self.dir / MANIFEST)

    def log(self, text: str) -> None:
        with open(self.dir / LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{now()} {text}\n")

    @classmethod
    def load(cls, path: Path) -> Fleet:
        path = Path(path)
        file = path / MANIFEST
        try:
            d = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            up = path.resolve().parent  # a campaign's session, inside its fleet
            hint = (f" (a campaign of the fleet {up}: `socratic fleet status "
                    f"{shlex.quote(str(up))}`)" if is_fleet(up) else "")
            raise InputError(f"{path}: not a fleet folder (no {MANIFEST}){hint}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{file}: cannot read the fleet's manifest ({exc})") from None
        why = _manifest_problem(d)
        if why:
            raise InputError(f"{file}: not a fleet manifest ({why})")
        try:
            return cls(path, str(d["executor"]), d.get("max_parallel"), d.get("gpus", "all"),
                       dict(d.get("slurm") or {}),
                       [CampaignSpec.from_dict(c) for c in d["campaigns"]],
                       str(d.get("created") or ""), dict(d.get("runs") or {}))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{file}: not a fleet manifest ({type(exc).__name__}: {exc})") \
                from None


def _manifest_problem(d: Any) -> str | None:
    """What makes `d` no fleet.json this module wrote, in words; None when it looks right."""
    if not isinstance(d, dict):
        return f"a JSON {type(d).__name__}, not an object"
    if d.get("schema") != SCHEMA:
        return f"schema is {d.get('schema')!r}, not {SCHEMA!r}"
    if not isinstance(d.get("executor"), str):
        return f"`executor` is {d.get('executor')!r}, not a name"
    for key, kind in (("slurm", dict), ("runs", dict), ("campaigns", list)):
        if key in d and d[key] is not None and not isinstance(d[key], kind):
            return f"`{key}` is a {type(d[key]).__name__}, not {'a list' if kind is list else 'an object'}"
    if "campaigns" not in d:
        return "no `campaigns` list"
    for i, c in enumerate(d["campaigns"]):
        if not isinstance(c, dict):
            return f"campaigns[{i}] is {c!r}, not an object"
        for key in ("name", "task"):
            if not isinstance(c.get(key), str) or not c[key]:
                return f"campaigns[{i}].{key} is {c.get(key)!r}, not a non-empty string"
        if "/" in c["name"] or c["name"] in (".", ".."):  # a subfolder of the fleet folder
            return f"campaigns[{i}].name {c['name']!r} is not a folder name"
        if not isinstance(c.get("args", []), list) or not isinstance(c.get("options", {}), dict):
            return f"campaigns[{i}]: `args` must be a list and `options` an object"
    return None


def open_fleet(spec: FleetSpec, path: Path) -> Fleet:
    """The fleet folder for `spec`: created, or the same fleet found there again (a rerun
    continues it). A folder that holds something else is refused, naming the difference."""
    path = Path(path)
    fresh = Fleet(path, spec.executor, spec.max_parallel, spec.gpus, spec.slurm,
                  spec.campaigns, now())
    if is_fleet(path):
        old = Fleet.load(path)
        was = [c.to_dict() for c in old.campaigns]
        new = [c.to_dict() for c in spec.campaigns]
        if was != new:
            diff = next((f"{a['name']} was {a['task_name']}/{a['questions']} "
                         f"{' '.join(a['args'])}".rstrip() for a, b in zip(was, new, strict=False) if a != b),
                        f"{len(was)} campaigns, not {len(new)}")
            raise InputError(f"{path}: holds another fleet ({diff}); give another "
                             f"--session-dir, or `socratic fleet run {path}` to continue it")
        old.executor, old.max_parallel, old.gpus, old.slurm = (
            spec.executor, spec.max_parallel, spec.gpus, spec.slurm)
        return old
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(f"{path}: exists and is not a fleet folder; give a new --session-dir")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{path}: cannot create the fleet folder ({exc.strerror or exc})") \
            from None
    (path / COPY).write_bytes(spec.path.read_bytes())
    fresh.save()
    return fresh


class RunnerLock:
    """The one `socratic fleet run` driving a fleet holds fleet.lock (the kernel drops it
    when that process dies); `runner_alive` asks without taking it."""

    def __init__(self, path: Path):
        self.path = Path(path) / LOCK
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            held = os.pread(self.fd, 512, 0).decode(errors="replace").strip()
            os.close(self.fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise InputError(f"{path}: a `socratic fleet run` already drives this fleet "
                                 f"({held or 'pid unknown'}); watch it with `socratic watch "
                                 f"{path}`") from None
            raise InputError(f"{self.path}: cannot lock ({exc.strerror or exc})") from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"pid {os.getpid()} on {socket.gethostname()} since {now()}".encode(), 0)

    def release(self) -> None:
        if self.fd >= 0:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)
            self.fd = -1


def runner_alive(path: Path) -> bool:
    try:
        fd = os.open(Path(path) / LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)
