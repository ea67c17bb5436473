"""Whether an agent session runs socratic's hooks, unchanged.

The Stop hook is socratic's promise: a session without it stops freely. What the hooks
depend on is pinned in `campaign.start` (`hooks`: the sha256 of each file socratic wrote
for them in SESSION/agent/, read-only to a confined agent: the hook client, the settings a
confined launch loads, a pristine copy of the workspace's hook file). Checked at every
agent session start (the SessionStart hook), before every launch socratic makes
(harness/attached/agentlaunch.py, which also puts a workspace hook file back) and at each stop; a
difference is a `problem` (`where: hooks`) in the log, and so a contradiction in the report.

Where the agent loads its hooks from its workspace (Gemini CLI, whose settings cannot come
from a file outside its writable folders; any agent socratic did not start), that file is
checked against the pristine copy: socratic's handler for each event present and
unchanged, nothing that turns hooks off.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socratic.contracts import AgentLaunch, CampaignStart, Event
from socratic.harness.attached import agentspec

AGENT_DIR = "agent"                 # SESSION/agent (harness/attached/attach.py)
PRISTINE = "workspace-hooks"        # SESSION/agent/workspace-hooks/<the agent's hook file>
WHERE = "hooks"                     # the `problem` events' `where`


@dataclass(frozen=True)
class Facts:
    """What the log says of the hooks: their pins, and whether socratic started the agent
    (it then loads its hooks from the session folder, where the agent file says so)."""

    pinned: dict[str, str] | None
    launched: bool


def facts(events: list[Event]) -> Facts:
    start = next((e for e in events if isinstance(e, CampaignStart)), None)
    launches = [e for e in events if isinstance(e, AgentLaunch)]
    return Facts(dict(start.hooks) if start is not None and start.hooks else None,
                 bool(launches) and launches[-1].mode != "outside")


def pristine(session_dir: Path, spec: agentspec.AgentSpec) -> Path:
    return Path(session_dir) / AGENT_DIR / PRISTINE / spec.config_file


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def pins(session_dir: Path) -> dict[str, str]:
    """sha256 of every file in SESSION/agent/ (relative paths): campaign.start's `hooks`."""
    root = Path(session_dir) / AGENT_DIR
    out = {}
    for p in sorted(root.rglob("*")) if root.is_dir() else []:
        if p.is_file():
            sha = _sha(p)
            if sha is not None:
                out[str(p.relative_to(session_dir))] = sha
    return out


def loads_workspace(spec: agentspec.AgentSpec, launched: bool) -> bool:
    """Whether the agent's session reads its hooks from the workspace's file."""
    return not (launched and spec.confine.settings)


def problems(session_dir: Path, spec: agentspec.AgentSpec, f: Facts) -> list[str]:
    """One line per difference from what socratic wrote (none: the hooks are its own)."""
    session_dir = Path(session_dir)
    out = []
    for rel, sha in sorted((f.pinned or {}).items()):
        got = _sha(session_dir / rel)
        if got != sha:
            out.append(f"{rel}: " + ("missing" if got is None else
                                     f"changed since attach (sha256 {got[:12]}, pinned "
                                     f"{sha[:12]})"))
    if spec.has_hooks and loads_workspace(spec, f.launched):
        out += workspace_problems(session_dir, spec)
    return out


def _json(path: Path) -> dict[str, Any] | str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError) as exc:
        return f"not JSON ({exc})"
    return data if isinstance(data, dict) else "not a JSON object"


def workspace_problems(session_dir: Path, spec: agentspec.AgentSpec) -> list[str]:
    """The workspace's hook file against the pristine copy: each of socratic's handlers
    present and unchanged, its extra settings (hooks on) kept, no switch that turns them off."""
    ref = _json(pristine(session_dir, spec))
    if isinstance(ref, str):
        return []   # a session made before the pristine copy: nothing to compare with
    rel = f"workspace/{spec.config_file}"
    got = _json(session_dir / rel)
    if isinstance(got, str):
        return [f"{rel}: {got}: socratic's hooks are not loaded"]
    out = []
    hooks = got.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    for name, groups in (ref.get("hooks") or {}).items():
        mine = hooks.get(name)
        if not mine:
            out.append(f"{rel}: socratic's {name} hook is missing")
        elif not all(g in mine for g in groups):
            out.append(f"{rel}: socratic's {name} hook was changed")
        elif len(mine) > len(groups):   # a handler of the agent's own can answer first
            out.append(f"{rel}: {name} has handlers socratic did not write")
    for key, value in _flat(spec.extra_settings):
        if _get(got, key) != value:
            out.append(f"{rel}: {key} is {_get(got, key)!r} (socratic wrote {value!r})")
    for key in ("disableAllHooks",):
        if got.get(key) is True:
            out.append(f"{rel}: {key} is true")
    disabled = _get(got, "hooksConfig.disabled")
    if disabled:
        out.append(f"{rel}: hooksConfig.disabled names {disabled!r}")
    for extra, text in spec.extra_files.items():
        try:
            same = (session_dir / "workspace" / extra).read_text(encoding="utf-8") == text
        except OSError:
            same = False
        if not same:
            out.append(f"workspace/{extra}: changed or missing (socratic wrote it)")
    return out


def _flat(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _flat(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def _get(d: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def put_back(session_dir: Path, spec: agentspec.AgentSpec) -> None:
    """The workspace's hook file (and extra files) as socratic wrote them (by a launcher,
    outside the agent's domain)."""
    src = pristine(session_dir, spec)
    ws = Path(session_dir) / "workspace"
    if src.is_file():
        write_in_workspace(ws, spec.config_file, src.read_bytes())
    for rel, text in spec.extra_files.items():
        write_in_workspace(ws, rel, text.encode("utf-8"))


def write_in_workspace(ws: Path, rel: str, data: bytes) -> None:
    """`data` as the workspace's file `rel`, by socratic outside the agent's domain: a link
    the agent left on the way (the file, or a folder above it) is replaced, never followed
    (followed, socratic would write wherever it points: the session's log, its chain key).
    Folder by folder from descriptors, so a link made meanwhile is not followed either."""
    *folders, name = Path(rel).parts
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in folders:
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, dir_fd=fd)
                nxt = os.open(part, flags, dir_fd=fd)
            except NotADirectoryError:   # a link (O_NOFOLLOW) or a file in the way
                os.unlink(part, dir_fd=fd)
                os.mkdir(part, dir_fd=fd)
                nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        tmp = f".{name}.{os.getpid()}.tmp"
        with suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
        finally:
            os.close(out)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)   # replaces a link, not its target
    finally:
        os.close(fd)


def line(found: list[str]) -> str:
    """The `problem` line: what differs, and what it means."""
    return ("the agent's hooks are not socratic's as attach wrote them: " + "; ".join(found)
            + " (a session without its Stop hook could stop unjudged)")
