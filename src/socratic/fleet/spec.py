"""The fleet file (TOML): how to run, and which campaigns.

    [fleet]
    executor = "local"        # or "slurm"
    max_parallel = 4          # campaigns at once (default: one per GPU; slurm: all)
    gpus = "all"              # local: "all", "none", or a list of indices/UUIDs
    slurm_partition = "gpu"   # slurm_*: passed to the cluster (submitit's slurm parameters)

    [[campaign]]
    task = "flash_attn_fwd"   # bundled name, or a path (relative to this file)
    questions = "auto"        # none | auto | human
    repeat = 4                # this many campaigns of this kind
    max_turns = 400           # any `socratic run` option by its long name
    goal_min_speedup = 1.2

    [[campaign]]
    task = "rmsnorm"
    agent = "claude"          # or codex, gemini: run headless by `socratic attach`, whose
    max_tool_calls = 200      # options only (the goal's, the limits, model)

Every problem is one line naming the file, the line and the value (InputError, exit 2),
before anything starts.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from socratic.errors import InputError

EXECUTORS = ("local", "slurm")
QUESTIONS = ("none", "auto", "human")
# socratic's own loop (`socratic run`), and the outside agents with hooks that `socratic
# attach --headless` runs (harness/attached/agents/NAME.toml's [headless])
SOCRATIC = "socratic"


def agents() -> tuple[str, ...]:
    from socratic.harness import headless_agents

    return (SOCRATIC, *headless_agents())
# the `socratic run` options that `socratic attach` also takes (its goal options and model)
ATTACH_OPTIONS = ("goal_min_speedup", "goal_against", "goal_hidden", "scenarios", "max_tool_calls",
                  "max_turns", "max_minutes", "model")
FLEET_KEYS = ("executor", "max_parallel", "gpus")
CAMPAIGN_KEYS = ("task", "questions", "repeat", "agent", "name")
# `socratic run` options a fleet sets itself (or that only make sense in a terminal)
NOT_OPTIONS = {"session_dir", "resume", "headless", "poll", "no_mouse", "auto_questions",
               "wait_for_human", "help", "task"}
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass
class CampaignSpec:
    name: str                       # the session's folder inside the fleet folder
    task: str                       # the task directory, absolute
    task_name: str
    questions: str = "none"         # none | auto | human
    agent: str = "socratic"
    options: dict[str, Any] = field(default_factory=dict)   # run options by dest name
    args: list[str] = field(default_factory=list)           # ... as `socratic run` arguments

    @property
    def attached(self) -> bool:
        """An outside agent, run by `socratic attach --headless` (else `socratic run`)."""
        return self.agent != SOCRATIC

    def argv(self, session_dir: Path, resume: bool) -> list[str]:
        """The `socratic` arguments, verb first, that run this campaign in `session_dir`:
        `run` for socratic's loop, `attach` for an outside agent. A resumed attached
        campaign reads its agent and settings from its session (config.json)."""
        if self.attached:
            if resume:
                return ["attach", str(session_dir), "--resume", "--headless"]
            return ["attach", self.task, "--agent", self.agent, "--headless",
                    "--session-dir", str(session_dir), *self.args, *self._questions_flag()]
        return ["run", *self.run_argv(session_dir, resume)]

    def run_argv(self, session_dir: Path, resume: bool) -> list[str]:
        """`socratic run` arguments (after the verb) for this campaign in `session_dir`."""
        argv = [str(session_dir) if resume else self.task, "--headless",
                "--session-dir", str(session_dir), *self.args, *self._questions_flag()]
        if resume:
            argv.append("--resume")
        return argv

    def _questions_flag(self) -> list[str]:
        if self.questions == "auto":
            return ["--auto-questions"]
        if self.questions == "human":
            return ["--wait-for-human"]  # a stall waits for your question, not ends
        return []

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "task": self.task, "task_name": self.task_name,
                "questions": self.questions, "agent": self.agent, "options": self.options,
                "args": self.args}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CampaignSpec:
        return cls(str(d["name"]), str(d["task"]), str(d.get("task_name") or ""),
                   str(d.get("questions") or "none"), str(d.get("agent") or "socratic"),
                   dict(d.get("options") or {}), [str(a) for a in d.get("args") or []])


@dataclass
class FleetSpec:
    path: Path
    executor: str = "local"
    max_parallel: int | None = None
    gpus: str | list[str] = "all"        # "all", "none", or explicit GPUs
    slurm: dict[str, Any] = field(default_factory=dict)    # slurm_* keys, as written
    campaigns: list[CampaignSpec] = field(default_factory=list)


class _Lines:
    """Where a key is written, for messages: `fleet.toml:12`."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.splitlines()

    def at(self, table: str, index: int | None, key: str | None) -> str:
        header = re.compile(rf"^\s*\[\[\s*{table}\s*\]\]" if index is not None
                            else rf"^\s*\[\s*{table}\s*\]")
        seen, start = -1, None
        for i, line in enumerate(self.lines):
            if header.match(line):
                seen += 1
                if index is None or seen == index:
                    start = i
                    break
        if start is None:
            return str(self.path)
        if key is not None:
            pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
            for i in range(start + 1, len(self.lines)):
                if re.match(r"^\s*\[", self.lines[i]):
                    break
                if pat.match(self.lines[i]):
                    return f"{self.path}:{i + 1}"
        return f"{self.path}:{start + 1}"


def _run_options() -> dict[str, argparse.Action]:
    """`socratic run`'s options by dest, from its own parser (one source of truth)."""
    from socratic.harness import run_options

    return {dest: a for dest, a in run_options().items() if dest not in NOT_OPTIONS}


def _option_args(where: str, key: str, value: Any, action: argparse.Action) -> list[str]:
    flag = action.option_strings[-1]
    if isinstance(action, argparse.BooleanOptionalAction):   # goal_hidden = true | false
        if not isinstance(value, bool):
            raise InputError(f"{where}: `{key}` must be true or false (got {value!r})")
        return [action.option_strings[0] if value else action.option_strings[1]]
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise InputError(f"{where}: `{key}` must be true or false (got {value!r})")
        return [flag] if value else []
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"{where}: `{key}` must be a string or a number (got {value!r})")
    if action.type in (int, float):
        try:
            number = action.type(value)
        except (TypeError, ValueError):
            raise InputError(f"{where}: `{key}` must be a number (got {value!r})") from None
        if action.type is int and isinstance(value, float) and value != number:
            raise InputError(f"{where}: `{key}` must be a whole number (got {value!r})")
        if not (math.isfinite(number) and number > 0):
            raise InputError(f"{where}: `{key}` must be positive (got {value!r})")
        value = number
    if action.choices is not None and value not in action.choices:
        raise InputError(f"{where}: `{key}` must be one of {', '.join(map(str, action.choices))} "
                         f"(got {value!r})")
    return [flag, str(value)]


def _resolve_task(where: str, value: Any, base: Path) -> tuple[str, str]:
    """(absolute task dir, task name); the task.toml is checked now, not when it starts."""
    from socratic.resources import resolve_task_dir
    from socratic.taskfile import load_task

    if not isinstance(value, str) or not value:
        raise InputError(f"{where}: `task` must be a task name or directory (got {value!r})")
    local = base / value
    try:
        task_dir = local if local.is_dir() else resolve_task_dir(value)
        if not task_dir.is_dir():
            raise InputError(f"{value}: not a task directory")
        task = load_task(task_dir)
    except InputError as exc:
        raise InputError(f"{where}: task {value!r}: {exc}") from None
    return str(task_dir.resolve()), task.name


def _gpus(where: str, value: Any) -> str | list[str]:
    if value in ("all", "none"):
        return value
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if (isinstance(value, list) and value
            and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value)):
        out = [str(v) for v in value]
        if all(v.isdigit() or v.upper().startswith(("GPU-", "MIG-")) for v in out):
            return out
    raise InputError(f"{where}: `gpus` must be \"all\", \"none\" or a list of GPU indices or "
                     f"UUIDs (got {value!r})")


def load_fleet(path: Path) -> FleetSpec:
    """Read and check a fleet file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the fleet file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file (a fleet file is TOML)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: {exc}") from None
    lines = _Lines(path, text)
    for key in data:
        if key not in ("fleet", "campaign"):
            raise InputError(f"{path}: unknown table or key `{key}` (a fleet file has [fleet] "
                             f"and [[campaign]] tables)")
    fleet = data.get("fleet", {})
    if not isinstance(fleet, dict):
        raise InputError(f"{lines.at('fleet', None, None)}: `fleet` must be a table")
    spec = FleetSpec(path=path)
    for key, value in fleet.items():
        where = lines.at("fleet", None, key)
        if key == "executor":
            if value not in EXECUTORS:
                raise InputError(f"{where}: `executor` must be one of {', '.join(EXECUTORS)} "
                                 f"(got {value!r})")
            spec.executor = value
        elif key == "max_parallel":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{where}: `max_parallel` must be a whole number >= 1 "
                                 f"(got {value!r})")
            spec.max_parallel = value
        elif key == "gpus":
            spec.gpus = _gpus(where, value)
        elif key.startswith("slurm_") and len(key) > 6:
            spec.slurm[key] = value
        else:
            raise InputError(f"{where}: unknown key `{key}` in [fleet] (known: "
                             f"{', '.join(FLEET_KEYS)} and slurm_* cluster parameters)")
    raw = data.get("campaign", [])
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{path}: no [[campaign]] table: a fleet needs at least one campaign")
    if not all(isinstance(table, dict) for table in raw):   # `campaign = [1]`, not tables
        raise InputError(f"{lines.at('campaign', None, None)}: `campaign` must be [[campaign]] "
                         f"tables (got {raw!r})"[:200])
    options = _run_options()
    expanded: list[tuple[str, CampaignSpec]] = []
    for i, table in enumerate(raw):
        expanded += _campaigns(lines, i, table, path.parent, options)
    width = max(2, len(str(len(expanded))))
    seen: dict[str, str] = {}
    for n, (where, c) in enumerate(expanded, 1):
        c.name = f"{n:0{width}d}-{c.name}"
        if c.name in seen:
            raise InputError(f"{where}: two campaigns named {c.name!r}")
        seen[c.name] = where
        spec.campaigns.append(c)
    return spec


def _check_goal(where, task: Path, opts: dict[str, Any]) -> None:
    """`goal_against` and `scenarios` known to the task, before any campaign starts (one
    that could not start left the fleet "not started", exit code 0)."""
    from socratic.harness import check_goal

    if "goal_against" in opts:
        check_goal(task, str(opts["goal_against"]), None, where("goal_against"))
    if "scenarios" in opts:
        check_goal(task, None, str(opts["scenarios"]), where("scenarios"))


def _campaigns(lines: _Lines, i: int, table: dict[str, Any], base: Path,
               options: dict[str, argparse.Action]) -> list[tuple[str, CampaignSpec]]:
    def where(key: str | None = None) -> str:
        return lines.at("campaign", i, key)

    if "task" not in table:
        raise InputError(f"{where()}: campaign {i + 1} has no `task`")
    task, task_name = _resolve_task(where("task"), table["task"], base)
    questions = table.get("questions", "none")
    if questions not in QUESTIONS:
        raise InputError(f"{where('questions')}: `questions` must be one of "
                         f"{', '.join(QUESTIONS)} (got {questions!r})")
    agent = table.get("agent", "socratic")
    if agent not in agents():
        raise InputError(f"{where('agent')}: `agent` must be one of {', '.join(agents())} "
                         f"(got {agent!r})")
    repeat = table.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise InputError(f"{where('repeat')}: `repeat` must be a whole number >= 1 "
                         f"(got {repeat!r})")
    default = (f"{task_name}-{questions}" if agent == SOCRATIC
               else f"{task_name}-{agent}-{questions}")
    name = table.get("name", default)
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise InputError(f"{where('name')}: `name` must be letters, digits and _ . - "
                         f"(it names the session folder; got {name!r})")
    opts: dict[str, Any] = {}
    args: list[str] = []
    for key, value in table.items():
        if key in CAMPAIGN_KEYS:
            continue
        dest = key.replace("-", "_")
        action = options.get(dest)
        if action is None:
            hint = " (use `questions`)" if dest == "auto_questions" else ""
            raise InputError(f"{where(key)}: unknown campaign key `{key}`{hint} (known: "
                             f"{', '.join(CAMPAIGN_KEYS)} and the `socratic run` options: "
                             f"{', '.join(sorted(options))})")
        if agent != SOCRATIC and dest not in ATTACH_OPTIONS:
            raise InputError(f"{where(key)}: `{key}` is a `socratic run` option; agent "
                             f"{agent} takes {', '.join(sorted(ATTACH_OPTIONS))} (and "
                             f"{', '.join(CAMPAIGN_KEYS)})")
        args += _option_args(where(key), key, value, action)
        opts[dest] = value
    _check_goal(where, Path(task), opts)
    return [(where(), CampaignSpec(name, task, task_name, questions, agent, dict(opts),
                                   list(args))) for _ in range(repeat)]
