"""`socratic attach --headless`: an attached agent (Claude Code, Codex CLI, Gemini CLI) run
non-interactively in its workspace, as a fleet runs it, until it exits; then the campaign's
end is settled on the record.

The hooks drive the campaign while the agent runs (attached_campaign.py, hooks.py). What
only this runner can know is whether they did: the agent's own output (its data file's
`[headless] output`) says how many tools it ran, the log says how many the hooks reported
and whether the stop hook was consulted. An agent that ran tools its hooks never reported,
or that ended without the stop hook being asked, ends `hooks_silent`: a campaign with no
goal checks is never reported as a result. One whose hooks worked but that exited while the
campaign ran (its own turn limit, a crash), or that failed before it ran anything (an API key
refused, a session it could not resume), ends `agent_exited`, its last words said.

A session that has started goes on (`--resume`) with the agent's own resume where its data
file has one and the hooks reported its session id, else a fresh agent on the same
workspace, told where the campaign stands.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socratic.contracts import (
    CampaignEnd,
    CampaignResume,
    EndReason,
    Problem,
    StopHook,
    ToolCall,
    read_events,
)
from socratic.errors import InputError
from socratic.harness.attached import agentlaunch, agentspec
from socratic.harness.attached.attached_campaign import HOOK_STATE, AttachedCampaign, HookState

AGENT_LOG = "agent.log"      # the agent's own stdout and stderr, every run appended
KILL_GRACE_S = 120.0         # past max_minutes, an agent whose hooks did not end it is stopped
STOP_GRACE_S = 20.0          # SIGTERM to SIGKILL


# ---------------------------------------------------------------------- the agent's output

def _json_lines(text: str) -> Iterable[dict[str, Any]]:
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict):
            yield d


def claude_tools(text: str) -> int:
    """stream-json: each tool_use block of an assistant message (streamed messages repeat
    their blocks: counted by id), less those Claude Code refused before running them (a
    `<tool_use_error>` result: no hook fires for a call that never ran)."""
    ids, refused = set(), set()
    for d in _json_lines(text):
        if d.get("parent_tool_use_id"):
            continue  # a subagent's tools run inside its Task call
        for block in (d.get("message") or {}).get("content") or []:
            if not isinstance(block, dict):
                continue
            if d.get("type") == "assistant" and block.get("type") == "tool_use":
                ids.add(str(block.get("id")))
            elif d.get("type") == "user" and block.get("type") == "tool_result" and \
                    str(block.get("content") or "").startswith("<tool_use_error>"):
                refused.add(str(block.get("tool_use_id")))
    return len(ids - refused)


def codex_tools(text: str) -> int:
    """`codex exec --json`: each completed shell command (the tool its hooks report)."""
    return sum(1 for d in _json_lines(text) if d.get("type") == "item.completed"
               and (d.get("item") or {}).get("type") == "command_execution")


def gemini_tools(text: str) -> int:
    """stream-json: each tool_use event."""
    return sum(1 for d in _json_lines(text) if d.get("type") == "tool_use")


OUTPUTS: dict[str, Callable[[str], int]] = dict(zip(
    agentspec.HEADLESS_OUTPUTS, (claude_tools, codex_tools, gemini_tools), strict=True))


# ---------------------------------------------------------------------- what the log says

@dataclass
class RunRecord:
    """What the hooks logged since the run began."""

    tools_logged: int = 0
    stop_consulted: int = 0
    ended: EndReason | None = None


def since(session_dir: Path, first_seq: int) -> RunRecord:
    rec = RunRecord()
    for e in read_events(session_dir / "events.jsonl")[0].events:
        if isinstance(e, CampaignEnd):
            rec.ended = e.reason
        elif isinstance(e, CampaignResume):
            rec.ended = None
        if e.seq < first_seq:
            continue
        if isinstance(e, ToolCall):
            rec.tools_logged += 1
        elif isinstance(e, StopHook):
            rec.stop_consulted += 1
    return rec


def last_seq(session_dir: Path) -> int:
    events = read_events(session_dir / "events.jsonl")[0].events
    return events[-1].seq if events else 0


# ---------------------------------------------------------------------- the run

def resume_prompt(instructions: str) -> str:
    return (f"The socratic campaign in this workspace goes on after an interruption. Read "
            f"{instructions} (the goal and the rules) and NOTES.md (your notes so far), run "
            f"./evaluate to see where candidate.cu stands, and carry on until the goal is met.")


class Stopper:
    """SIGTERM/SIGINT while the agent runs: the agent is stopped, the campaign ends
    `interrupted` (a fleet's preemption; `--resume` continues it)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.interrupted = False

    def __call__(self, signum: int, _frame: Any) -> None:
        self.interrupted = True
        self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except OSError:
                pass


def run(session_dir: Path, *, resume: bool, model: str | None = None,
        say: Callable[[str], None] | None = None) -> str:
    """Run the session's agent headless until it exits; returns the campaign's end reason."""
    say = say or (lambda line: print(f"socratic: {line}", file=sys.stderr, flush=True))
    camp = AttachedCampaign(session_dir)
    spec = agentspec.load(camp.settings.agent)
    if spec.headless is None:
        raise InputError(f"--headless: --agent {spec.name} has no non-interactive mode "
                         f"(harness/attached/agents/{spec.name}.toml has no [headless])")
    if resume:   # here, not by the agent's prompt hook: that cannot undo the engineer's stop
        with AttachedCampaign.open(session_dir) as opened:
            opened.resume_by_socratic("socratic attach --resume")
    state = HookState.load(camp.session.dir / HOOK_STATE) or HookState()
    prompt = resume_prompt(spec.instructions) if resume else camp.settings.launch_prompt
    argv = spec.headless.argv(prompt, spec.model_flag, model,
                              (state.agent_session or None) if resume else None)
    log_path = camp.session.dir / AGENT_LOG
    offset = log_path.stat().st_size if log_path.exists() else 0
    # the server first (outside the agent's reach), then the agent, confined
    launch = agentlaunch.prepare(camp.session.dir, argv, "headless", spec.headless.env)
    first_seq = last_seq(camp.session.dir) + 1
    stopper = Stopper()
    handlers = {s: signal.signal(s, stopper) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with open(log_path, "ab") as log:
            shown = " ".join("PROMPT" if a == prompt else shlex.quote(a) for a in launch.argv)
            log.write(f"--- socratic {time.strftime('%Y-%m-%d %H:%M:%S')}: {shown}\n".encode())
            log.flush()
            stopper.proc = agentlaunch.popen(launch, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            say(f"{spec.title} runs headless in {camp.session.workspace}"
                f"{'' if launch.confinement.confined else ' UNCONFINED (' + launch.confinement.how + ')'}"
                f" (its output: {log_path})")
            try:
                code, over_time = _wait(stopper, camp)
            finally:
                launch.close()  # the server answers what is in flight, then exits
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    reported = _reported(spec.headless.output, log_path, offset)
    reason = settle_end(camp.session.dir, first_seq, code, reported, stopper.interrupted, over_time)
    if reason == "agent_exited" and code != 0:
        say(f"{spec.title} exited with code {code}: {_last_words(log_path, offset)} (all of it: {log_path})")
    return reason


def _last_words(log_path: Path, offset: int) -> str:
    """The last line of the agent's output this run that is not one of its JSON records
    (an error it printed), else its last line, shortened."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(max(offset, fh.seek(0, os.SEEK_END) - 65536))
            lines = [ln.strip() for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return "(its output could not be read)"
    lines = [ln for ln in lines if not ln.startswith("--- socratic ")]
    plain = [ln for ln in lines if not ln.startswith("{")]
    last = (plain or lines or ["(it printed nothing)"])[-1]
    return last if len(last) <= 200 else last[:197] + "..."


def _wait(stopper: Stopper, camp: AttachedCampaign) -> tuple[int, bool]:
    """The agent's exit code, and whether it was stopped for running past max_minutes."""
    proc = stopper.proc
    assert proc is not None
    limit = camp.config.max_minutes
    deadline = (camp.settings.start_epoch + limit * 60 + KILL_GRACE_S) if limit else None
    over_time = False
    stopping_since: float | None = None   # SIGTERM sent (by us or the signal handler)
    while proc.poll() is None:
        now = time.time()
        if deadline is not None and now > deadline and not over_time:
            over_time = True
            stopper.stop()
        if stopping_since is None and (stopper.interrupted or over_time):
            stopping_since = now
        elif stopping_since is not None and now - stopping_since > STOP_GRACE_S:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    return proc.returncode, over_time


def _reported(output: str, log_path: Path, offset: int) -> int | None:
    try:
        with open(log_path, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    return OUTPUTS[output](text)


def settle_end(session_dir: Path, first_seq: int, code: int, tools_reported: int | None,
           interrupted: bool, over_time: bool) -> EndReason:
    """The campaign's end once its agent has exited: as the hooks left it, else on the
    record (interrupted, max_minutes, hooks_silent or agent_exited)."""
    with AttachedCampaign.open(session_dir) as camp:
        rec = since(session_dir, first_seq)
        unreported = tools_reported is not None and tools_reported > rec.tools_logged
        if camp.ended is not None:
            if unreported:  # the end stands (judged by the hooks), the gap is on the record
                camp.emit(Problem(where="hooks", error=(
                            f"the agent ran {tools_reported} tools, its hooks reported "
                            f"{rec.tools_logged}")))
            return camp.ended
        silent = rec.stop_consulted == 0 or unreported
        # it failed before it did anything (an API key refused, a session it cannot resume):
        # its hooks had nothing to say, so that is no sign of them missing
        never_started = code != 0 and tools_reported == 0 and rec.tools_logged == 0 and rec.stop_consulted == 0
        if interrupted:
            camp.end("interrupted")
        elif over_time:
            camp.end("max_minutes")
        elif never_started:
            camp.end("agent_exited", exit_code=code)
        elif silent:
            camp.end("hooks_silent", tools_reported=tools_reported,
                     tools_logged=rec.tools_logged, stop_consulted=rec.stop_consulted)
        else:
            camp.end("agent_exited", exit_code=code)
        return camp.ended or "error"
