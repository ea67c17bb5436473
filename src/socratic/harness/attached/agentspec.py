"""The coding agents socratic can attach to, each declared by one data file in
harness/attached/agents/NAME.toml: its instructions file, launch command, hook configuration file,
event names, payload fields and timeout unit. Adding an agent is adding a file (its
transcript format must be one harness/core/transcripts.py reads, or `none`). A file without
`[hooks]` (manual.toml) declares an agent with no hooks and nothing to launch: a person, or
any tool, drives the campaign with `socratic hook evaluate|say|stop` (harness/manual/manual.py).

This module reads those files and renders what `socratic attach` writes: the hook
configuration (every hook runs `socratic hook EVENT`) and the launch command.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from socratic.errors import InputError

# socratic's hook events (`socratic hook EVENT`)
EVENTS = ("session-start", "prompt", "post-tool", "stop")
PAYLOAD_FIELDS = ("transcript", "last_message", "prompt", "tool_name", "tool_input",
                  "tool_response", "tool_id", "tool_error", "tool_ms")


@dataclass(frozen=True)
class HookEvent:
    name: str            # the agent's event name (Stop, AfterAgent, ...)
    socratic: str        # socratic's event (one of EVENTS)
    matcher: str | None = None


@dataclass(frozen=True)
class Headless:
    """[headless]: the agent run non-interactively (a fleet's campaign)."""

    command: tuple[str, ...]         # {prompt}; the model flag goes after argv[0]
    output: str                      # its stdout's format (harness/attached/headless.py counts tools)
    resume: tuple[str, ...] = ()     # its own resume: {prompt}, {agent_session}
    env: dict[str, str] = field(default_factory=dict)

    def argv(self, prompt: str, model_flag: str, model: str | None = None,
             agent_session: str | None = None) -> list[str]:
        """The command; its own resume where it has one and the session id is known."""
        template = self.resume if self.resume and agent_session else self.command
        argv = [a.replace("{prompt}", prompt).replace("{agent_session}", agent_session or "")
                for a in template]
        return argv + ([model_flag, model] if model else [])


@dataclass(frozen=True)
class Confine:
    """[confine]: what the agent needs when socratic starts it confined (harness/attached/confine.py),
    and how its hooks are loaded from a file out of its reach."""

    state: tuple[str, ...] = ()      # its own config/state: `~/.x/` folder, `~/.x.json` file,
    #                                  `$VAR|~/.x/` the variable's value where set
    settings: str = ""               # the hook settings file written in SESSION/agent/ ("": none)
    settings_extra: dict[str, Any] = field(default_factory=dict)   # merged into that file
    args: tuple[str, ...] = ()       # inserted after the program: {settings}
    env: dict[str, str] = field(default_factory=dict)              # {settings}
    # an agent that takes no settings file but config overrides (Codex's `-c key=TOML`):
    # each event of the settings file passed as `<inline_flag> hooks.<Event>=<TOML>`
    inline_flag: str = ""

    def argv(self, argv: list[str], settings_file: Path | None) -> list[str]:
        sub = str(settings_file or "")
        args = [a.replace("{settings}", sub) for a in self.args]
        if self.inline_flag and settings_file is not None:
            args += inline_hooks(self.inline_flag, settings_file)
        return [argv[0], *args, *argv[1:]]

    @property
    def strips_workspace(self) -> bool:
        """Whether a confined launch empties the workspace's hook file: the agent would
        also read it, and run each hook twice (Codex runs the hooks of every layer)."""
        return bool(self.inline_flag)

    def environ(self, settings_file: Path | None) -> dict[str, str]:
        sub = str(settings_file or "")
        return {k: v.replace("{settings}", sub) for k, v in self.env.items()}


@dataclass(frozen=True)
class AgentSpec:
    name: str
    title: str
    instructions: str
    transcript: str
    install: str
    command: tuple[str, ...]
    model_flag: str
    root_env: dict[str, str]
    config_file: str
    timeout_unit: str                # "s" or "ms"
    block_decision: str              # the Stop hook's refusal: "block" or "deny"
    block_cap: int | None            # consecutive refusals after which the agent stops anyway
    events: tuple[HookEvent, ...]
    payload: dict[str, str]
    extra_settings: dict[str, Any] = field(default_factory=dict)
    extra_files: dict[str, str] = field(default_factory=dict)
    headless: Headless | None = None  # how it runs without a terminal (`attach --headless`)
    confine: Confine = field(default_factory=Confine)

    @property
    def has_hooks(self) -> bool:
        """False for an agent driven by hand: no hook file, no launch command."""
        return bool(self.events)

    def event_for(self, socratic_event: str) -> str:
        """The agent's name of one of socratic's events."""
        for e in self.events:
            if e.socratic == socratic_event:
                return e.name
        raise KeyError(socratic_event)

    def value(self, payload: dict[str, Any], name: str) -> Any:
        key = self.payload.get(name) or ""
        return payload.get(key) if key else None

    # ------------------------------------------------------------------ rendering
    def hook_settings(self, hook_command: str, timeouts_s: dict[str, float]) -> dict[str, Any]:
        """The `hooks` table of the agent's settings: each event runs
        `<hook_command> <socratic event>` with its timeout in the agent's unit."""
        scale = 1000 if self.timeout_unit == "ms" else 1
        hooks: dict[str, Any] = {}
        for e in self.events:
            handler = {"type": "command", "command": f"{hook_command} {e.socratic}",
                       "timeout": int(timeouts_s[e.socratic] * scale)}
            group: dict[str, Any] = {"hooks": [handler]}
            if e.matcher is not None:
                group = {"matcher": e.matcher, **group}
            hooks[e.name] = [group]
        return hooks

    def launch_argv(self, prompt: str, workspace: Path, model: str | None = None) -> list[str]:
        argv = [a.replace("{prompt}", prompt).replace("{workspace}", str(workspace))
                for a in self.command]
        if model:
            argv[1:1] = [self.model_flag, model]
        return argv

    def launch_line(self, prompt: str, workspace: Path, model: str | None = None,
                    as_root: bool = False) -> str:
        """The shell line that starts the agent in its workspace."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.root_env.items()) if as_root else ""
        argv = " ".join(shlex.quote(a) for a in self.launch_argv(prompt, workspace, model))
        return f"cd {shlex.quote(str(workspace))} && " + (f"{env} " if env else "") + argv


def toml_value(v: Any) -> str:
    """A JSON-like value as an inline TOML value (strings as JSON strings: valid TOML)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ",".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}={toml_value(x)}" for k, x in v.items()) + "}"
    raise ValueError(f"no TOML for {v!r}")


def inline_hooks(flag: str, settings_file: Path) -> list[str]:
    """`flag hooks.<Event>=<TOML>` for each event of a hook settings file (read by the
    launcher, outside the agent's reach: the agent's argv is out of its reach too)."""
    try:
        hooks = json.loads(settings_file.read_text(encoding="utf-8"))["hooks"]
        return [a for name, groups in hooks.items()
                for a in (flag, f"hooks.{name}={toml_value(groups)}")]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{settings_file}: not a hook settings file ({exc})") from None


def _agents_dir() -> Path:
    # the package's own folder (as importlib.resources.files gives it for an installed
    # package), without importing importlib.resources on every hook call
    return Path(__file__).parent / "agents"


def names() -> list[str]:
    return sorted(p.stem for p in _agents_dir().glob("*.toml"))


def load(name: str) -> AgentSpec:
    path = _agents_dir() / f"{name}.toml"
    if not path.is_file():
        raise InputError(f"--agent {name}: not a supported agent (one of: {', '.join(names())})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return _parse(data)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: not a valid agent file ({exc})") from None


def _parse(d: dict[str, Any]) -> AgentSpec:
    if "hooks" not in d:  # driven by hand: nothing to launch, no hooks, no payloads
        extra = [k for k in ("launch", "payload") if k in d]
        if extra:
            raise ValueError(f"an agent without [hooks] has no [{'], ['.join(extra)}]")
        return AgentSpec(
            name=str(d["name"]), title=str(d["title"]), instructions=str(d["instructions"]),
            transcript="none", install=str(d.get("install", "")), command=(), model_flag="",
            root_env={}, config_file="", timeout_unit="s", block_decision="block",
            block_cap=None, events=(), payload={})
    hooks, launch = d["hooks"], d["launch"]
    events = tuple(HookEvent(name, str(e["socratic"]), e.get("matcher"))
                   for name, e in hooks["events"].items())
    unknown = [e.socratic for e in events if e.socratic not in EVENTS]
    if unknown or {e.socratic for e in events} != set(EVENTS):
        raise ValueError(f"hooks.events must map to each of {', '.join(EVENTS)}")
    if hooks["timeout_unit"] not in ("s", "ms"):
        raise ValueError("hooks.timeout_unit must be s or ms")
    payload = {k: str(v) for k, v in d["payload"].items()}
    missing = [k for k in PAYLOAD_FIELDS if k not in payload]
    if missing:
        raise ValueError(f"payload lacks {', '.join(missing)}")
    return AgentSpec(
        name=str(d["name"]), title=str(d["title"]), instructions=str(d["instructions"]),
        transcript=str(d.get("transcript", "none")), install=str(d.get("install", "")),
        command=tuple(str(a) for a in launch["command"]),
        model_flag=str(launch.get("model_flag", "--model")),
        root_env={str(k): str(v) for k, v in (launch.get("root_env") or {}).items()},
        config_file=str(hooks["file"]), timeout_unit=str(hooks["timeout_unit"]),
        block_decision=str(hooks["block_decision"]),
        block_cap=int(hooks["block_cap"]) if "block_cap" in hooks else None,
        events=events, payload=payload,
        extra_settings=dict(hooks.get("extra_settings") or {}),
        extra_files={str(k): str(v) for k, v in (hooks.get("extra_files") or {}).items()},
        headless=_headless(d["headless"]) if "headless" in d else None,
        confine=_confine(d.get("confine") or {}),
    )


def _confine(c: dict[str, Any]) -> Confine:
    if (c.get("args") or c.get("env")) and not c.get("settings") and not c.get("inline_flag"):
        raise ValueError("confine.args and confine.env name {settings}: give confine.settings")
    if c.get("inline_flag") and not c.get("settings"):
        raise ValueError("confine.inline_flag passes confine.settings' hooks: give it")
    return Confine(state=tuple(str(a) for a in c.get("state") or ()),
                   settings=str(c.get("settings") or ""),
                   settings_extra=dict(c.get("settings_extra") or {}),
                   args=tuple(str(a) for a in c.get("args") or ()),
                   env={str(k): str(v) for k, v in (c.get("env") or {}).items()},
                   inline_flag=str(c.get("inline_flag") or ""))


# the agents' non-interactive output formats (headless.py counts the tools in each); named
# here so that reading an agent file does not import the headless runner (each hook does)
HEADLESS_OUTPUTS = ("claude-stream-json", "codex-json", "gemini-stream-json")


def _headless(h: dict[str, Any]) -> Headless:
    if str(h["output"]) not in HEADLESS_OUTPUTS:
        raise ValueError(f"headless.output must be one of {', '.join(HEADLESS_OUTPUTS)}")
    return Headless(command=tuple(str(a) for a in h["command"]), output=str(h["output"]),
                    resume=tuple(str(a) for a in h.get("resume") or ()),
                    env={str(k): str(v) for k, v in (h.get("env") or {}).items()})


def headless_agents() -> dict[str, str]:
    """The agents `socratic attach --headless` can run: name -> the program it starts."""
    out = {}
    for name in names():
        spec = load(name)
        if spec.headless is not None:
            out[name] = spec.headless.command[0]
    return out


def by_hand(name: str | None) -> bool:
    """Whether the agent `name` (config.json's attach.agent) is driven by hand: no hooks."""
    if not name:
        return False
    try:
        return not load(name).has_hooks
    except InputError:
        return False


def merge_settings(existing: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` laid over `existing`, tables merged key by key."""
    out = dict(existing)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_settings(out[k], v)
        else:
            out[k] = v
    return out


def render_settings(spec: AgentSpec, hook_command: str,
                    timeouts_s: dict[str, float], confined: bool = False) -> str:
    """The agent's settings file (JSON) with socratic's hooks; `confined`: the file socratic
    loads from out of the agent's reach (`[confine] settings`), with its extra settings."""
    data = merge_settings(spec.extra_settings,
                          {"hooks": spec.hook_settings(hook_command, timeouts_s)})
    if confined:
        data = merge_settings(data, spec.confine.settings_extra)
    return json.dumps(data, indent=2) + "\n"
