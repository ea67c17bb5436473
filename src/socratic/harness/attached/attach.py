"""`socratic attach TASK --agent claude|codex|gemini|manual`: a campaign whose agent is an
outside coding agent, or a person (manual). The session is laid out as `socratic run` lays
it out (harness/core/session.py) and `campaign.start` names the agent; the workspace gets the
agent's instructions file (goal, rules, how to evaluate), a `./evaluate` command, a marker
naming the session, and the agent's hook configuration, every hook calling `socratic hook
EVENT` (none for manual: its commands are run by hand, harness/manual/manual.py).
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from socratic.contracts import Goal
from socratic.errors import InputError
from socratic.harness.attached import agentspec, hookcheck
from socratic.harness.attached.attached_campaign import AttachSettings, env_secrets
from socratic.harness.attached.hooks import MARKER
from socratic.harness.core.config import Config
from socratic.harness.core.redaction import scrubbed_env
from socratic.harness.core.session import Session
from socratic.harness.core.sessionlog import SessionLog
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.prompt import DEFAULT_BANNED
from socratic.pyproc import clean_env

EVALUATE = "evaluate"   # the workspace command the agent runs
LAUNCH_PROMPT = ("Read {instructions} in this directory and follow it: optimize candidate.cu "
                 "until the goal it states is met.")


def hook_timeouts(config: Config, wait_s: float) -> dict[str, float]:
    """Seconds each hook may take: a stop or a tool result may evaluate (up to the
    evaluator's timeout) and wait (pause, a stalled agent waiting for a question)."""
    long = config.eval_timeout_s + wait_s + 120
    return {"session-start": 120.0, "prompt": 120.0, "post-tool": long, "stop": long}


def instructions(task: CampaignTask, goal: Goal, set_name: str | None, ids: list[str],
                 spec: agentspec.AgentSpec, eval_task: str = "") -> str:
    banned = task.data.get("banned") or task.data.get("bans")
    banned_text = ", ".join(banned) if isinstance(banned, list) else DEFAULT_BANNED
    shown = ", ".join(ids[:40]) + (" ..." if len(ids) > 40 else "")
    set_text = set_name or task.default_set or "default"
    if spec.has_hooks:
        how = f"""## How to evaluate
Run `./{EVALUATE}` here (about as long as the evaluator needs; allow it minutes): it builds
candidate.cu, checks every scenario against the reference, times it against the baseline
on the same GPU, prints a per-scenario table and whether the goal is met, and saves the
full result in the session. `./{EVALUATE} --scenarios SET` picks another scenario set."""
        stop = "whenever you try to stop"
    else:
        how = f"""## How to evaluate, and how the campaign is recorded
Nothing runs by itself: each step is a command, run here (in this workspace).
- Evaluate here, on a GPU node: `./{EVALUATE}` (`./{EVALUATE} --scenarios SET` for another
  set). It builds candidate.cu, checks every scenario against the reference, times it
  against the baseline on the same GPU and records the result in the session.
- Or time it on another machine: copy candidate.cu there, run
  `socratic eval {eval_task or task.name} --candidate candidate.cu --json > result.json`,
  bring result.json back and record it: `socratic hook evaluate --import result.json`
  (refused unless it is this task's result for this very candidate.cu, by sha256).
- Say what you measured, plan or conclude, and answer every question posed to you:
  `socratic hook say "..."` (`-` reads the text from stdin). It is the agent's text of
  the campaign's log.
- Try to stop: `socratic hook stop` judges the goal on candidate.cu's recorded
  evaluation; end without the goal: `socratic hook stop --give-up "why"`."""
        stop = "when you run `socratic hook stop`"
    return f"""# Campaign: optimize `{task.name}` (socratic)

You are optimizing one CUDA kernel on an NVIDIA GPU. This directory (the workspace) holds:
- `candidate.cu`: the file you optimize; it starts as a copy of the baseline. The entry
  point is `extern "C" int {task.entry}(...)` as in the baseline: keep its ABI.
- `NOTES.md`: your notes. Keep them current (what you tried, measured, believe, plan).
- `task/`: read-only copies of the task (task.toml, the baseline, the fp32 reference).
  Editing them changes nothing: evaluations use a frozen copy.

{how}

## Goal
A predicate, checked by socratic {stop}: {goal.describe()}, on the
`{set_text}` scenario set{f' ({shown})' if shown else ''}. You can stop only when it holds
on a fresh evaluation of the current candidate.cu; your claims are not evidence. If you stop
early you are told which scenarios fall short, with their numbers, and you go on.

## Rules
No {banned_text}. One file: candidate.cu.

## Questions
Questions from the engineer or from socratic's question bank arrive with tool results or
when a stop is refused. Each deserves an answer you have checked (by a measurement, a file
or a computation), not one from memory: say what you checked, then continue.

(This file was written by `socratic attach --agent {spec.name}`.)
"""


@dataclass
class Attachment:
    session: Session
    spec: agentspec.AgentSpec
    launch_line: str            # "" for an agent driven by hand
    launch_argv: list[str]


def attach(task_dir: Path, agent: str, config: Config, *, session_dir: Path | None = None,
           model: str | None = None, wait_s: float = 3000.0,
           wait_for_human: bool = True) -> Attachment:
    """Create the session and prepare the workspace for `agent`; bad input is reported
    (InputError) before anything is written."""
    from socratic.gpuinfo import gpu_info
    from socratic.harness.core.evaluator_process import built_libraries, list_sets
    from socratic.harness.engine.plan import resolve_plan, start_event
    from socratic.harness.engine.startup import bank_suggester, has_comparison, versions

    spec = agentspec.load(agent)
    # a stalled agent waits for the engineer's question (as long as its hook may wait); a
    # headless campaign whose questions are not a human's ends stalled instead
    config.wait_for_human = wait_for_human
    # the hooks run the evaluator with the agent's PATH: a bare `python` there may be
    # another interpreter, so it is found now, as it is here
    config.evaluator = resolved_command(config.evaluator)
    src = CampaignTask.load(task_dir)
    session_dir = Path(session_dir) if session_dir is not None else None
    if session_dir is not None and (session_dir / "events.jsonl").is_file() and \
            (session_dir / "events.jsonl").stat().st_size:
        raise InputError(f"{session_dir}: already holds a campaign; to go on with it, start "
                         f"its agent again in {session_dir / 'workspace'} (its hooks resume "
                         f"it; by hand: its `socratic hook` steps); for a new campaign give "
                         f"a new --session-dir")
    env = scrubbed_env(env_secrets())
    sets = list_sets(config.evaluator, src.dir.resolve(), env=env)
    plan = resolve_plan(src, config, sets=sets)   # bad --scenarios or goal: now
    goal, goal_set, ids = plan.goal, plan.goal_set, plan.scenario_ids
    comparison = has_comparison(src, goal)
    gpu = gpu_info()
    bank_suggester(comparison, (gpu or {}).get("cc"))  # a bad user bank file: now
    session, hashes = Session.create(src, config, session_dir)
    task = CampaignTask.load(session.task_dir)
    ws = session.workspace.resolve()
    prompt = LAUNCH_PROMPT.format(instructions=spec.instructions)
    settings = AttachSettings(agent=spec.name, start_epoch=time.time(), scenario_ids=ids,
                              launch_prompt=prompt,
                              timeouts_s=hook_timeouts(config, wait_s), wait_s=wait_s,
                              cc=(gpu or {}).get("cc"), has_comparison=comparison)
    saved = session.load_config()
    saved.attach = asdict(settings)
    session.save_config(saved)
    write_workspace(session, spec, task, goal, goal_set, ids, settings, eval_task_arg(src))
    # the task's built libraries, pinned: a build cache that later holds others is noticed
    libraries = built_libraries(config.evaluator, session.task_dir.resolve(), env=env)
    plan = replace(plan, task=task, task_hashes=hashes, task_source=src.dir.resolve(),
                   libraries=libraries)
    # Session.create claimed the session; from here on it is written as the hooks write it,
    # one claim per process (so that --launch's agent can take turns with this one)
    session.release()
    start = start_event(plan, config, model=_model_label(spec, model), session=session.dir.name,
                        versions=versions(), gpu=gpu, session_id=session.session_id,
                        agent=settings.agent)
    SessionLog(session.dir, settings.start_epoch, role="attach").write(
        replace(start, hooks=hookcheck.pins(session.dir) or None, libraries=libraries))
    if not spec.has_hooks:   # by hand: the caller runs its first step (harness/manual)
        return Attachment(session, spec, "", [])
    return Attachment(session, spec, spec.launch_line(prompt, ws, model, as_root=_root()),
                      spec.launch_argv(prompt, ws, model))


def resolved_command(argv: list[str]) -> list[str]:
    """argv with its program as an absolute path (found on this PATH)."""
    if not argv or os.sep in argv[0]:
        return list(argv)
    found = shutil.which(argv[0])
    if found is None:
        raise InputError(f"evaluator {argv[0]!r} ($SOCRATIC_EVALUATOR or the config): not "
                         f"found on PATH")
    return [found, *argv[1:]]


def _model_label(spec: agentspec.AgentSpec, model: str | None) -> str:
    if not spec.has_hooks:  # by hand: --model may name the tool or the person's model
        return model or "by hand"
    return spec.name + (f" ({model})" if model else "")


def eval_task_arg(src: CampaignTask) -> str:
    """How `socratic eval` names the task elsewhere: a bundled task by its name."""
    from socratic.resources import bundled_dir

    bundled = bundled_dir("socratic.kernels") / src.name
    try:
        if bundled.resolve() == src.dir.resolve():
            return src.name
    except OSError:
        pass
    return str(src.dir.resolve())


def hookclient_dir() -> Path:
    from socratic.harness.attached import hookclient

    return Path(hookclient.__file__).resolve().parent


def client_code() -> str:
    """The hook command's program: hookclient.py imported from its folder (from its
    compiled file: a script run by path is compiled anew each time, 3 ms), that folder
    last on sys.path so that it shadows nothing of the standard library."""
    return (f"import sys; sys.path.append({str(hookclient_dir())!r}); import hookclient; "
            f"sys.exit(hookclient.main(sys.argv[1:]))")


AGENT_DIR = "agent"   # SESSION/agent: the hook client and the agent's hook settings, out of its reach


def agent_dir(session_dir: Path) -> Path:
    return session_dir / AGENT_DIR


def compiled_client(dest: Path) -> Path | None:
    """hookclient.c built with the host C compiler (nvcc needs one: where socratic builds
    kernels it is there) into `dest` (the session's own folder, which a confined agent
    cannot write: never a shared cache that a later `attach` would reuse); None without a
    compiler (the hooks run the Python client, a few milliseconds slower to start)."""
    src = hookclient_dir() / "hookclient.c"
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None or not src.is_file():
        return None
    out = dest / "hookclient"
    try:
        dest.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
        done = subprocess.run([cc, "-O2", "-o", str(tmp), str(src)], capture_output=True,
                              timeout=120, env=clean_env(), cwd=dest)
        if done.returncode != 0:
            tmp.unlink(missing_ok=True)
            return None
        os.replace(tmp, out)
        out.chmod(0o555)
    except (OSError, subprocess.SubprocessError):
        return None
    return out


@functools.cache
def isolation_flags() -> list[str]:
    """How socratic's own processes for a session (the session server, a hook run without
    it) start Python so that no file in the agent's workspace shadows a module: isolated
    mode when socratic imports there (not from the user's site-packages or PYTHONPATH),
    else with the working directory left off sys.path."""
    try:
        ok = subprocess.run([sys.executable, "-I", "-c", "import socratic.harness.attached.hooks"],
                            cwd="/", capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    if ok:
        return ["-I"]
    return ["-P"] if sys.version_info >= (3, 11) else []


def hook_settings_file(session_dir: Path, spec: agentspec.AgentSpec) -> Path | None:
    """The agent's hook settings in the session's agent folder (read-only to a confined
    agent), loaded by the launch (`[confine] settings`); None where the agent has none."""
    if not spec.confine.settings:
        return None
    return agent_dir(session_dir.resolve()) / spec.confine.settings


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def write_workspace(session: Session, spec: agentspec.AgentSpec, task: CampaignTask, goal: Goal,
                    goal_set: str | None, ids: list[str], settings: AttachSettings,
                    eval_task: str = "") -> None:
    ws = session.workspace
    # exec: the agent is the hook's parent; the client runs in a few milliseconds and
    # nothing in the workspace can stand in for one of its modules (hookclient.py)
    flags = f" --flags {shlex.quote(' '.join(isolation_flags()))}"
    compiled = compiled_client(agent_dir(session.dir))
    if compiled is not None:  # the same client in C: no interpreter to start (hookclient.c)
        client = (f"exec {shlex.quote(str(compiled))} {shlex.quote(sys.executable)} "
                  f"{shlex.quote(str(hookclient_dir()))}{flags}")
    else:
        client = f"exec {shlex.quote(sys.executable)} -I -S -c {shlex.quote(client_code())}{flags}"
    hook_command = f"{client} --block {shlex.quote(spec.block_decision)}"
    (ws / spec.instructions).write_text(instructions(task, goal, goal_set, ids, spec, eval_task),
                                        encoding="utf-8")
    script = ws / EVALUATE
    script.write_text(
        "#!/bin/sh\n# Evaluate candidate.cu: every scenario checked and timed against the "
        "baseline;\n# the result is numbered, saved and logged in the socratic session.\n"
        f"{client} evaluate --session {shlex.quote(str(session.dir.resolve()))} \"$@\"\n",
        encoding="utf-8")
    script.chmod(0o755)
    (ws / MARKER).write_text(json.dumps({"session": str(session.dir.resolve()),
                                         "agent": spec.name}) + "\n", encoding="utf-8")
    if not spec.has_hooks:
        return  # driven by hand: no agent configuration
    rendered = agentspec.render_settings(spec, hook_command, settings.timeouts_s)
    for settings_file in (ws / spec.config_file, hookcheck.pristine(session.dir, spec)):
        # the workspace's copy, and a pristine one it is checked against (harness/attached/hookcheck.py)
        settings_file.parent.mkdir(parents=True, exist_ok=True)
        settings_file.write_text(rendered, encoding="utf-8")
    flag = hook_settings_file(session.dir, spec)
    if flag is not None:  # what socratic loads when it starts the agent (harness/attached/agentlaunch.py)
        flag.parent.mkdir(parents=True, exist_ok=True)
        flag.write_text(agentspec.render_settings(spec, hook_command, settings.timeouts_s,
                                                  confined=True), encoding="utf-8")
    for rel, text in spec.extra_files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
