"""`socratic hook EVENT`: the one command every hook that `socratic attach` writes calls.
It reads the agent's JSON payload from stdin, finds the session from the workspace it
runs in, acts, and prints the agent's answer on stdout.

    session-start  the start trigger (and its auto question); questions due -> context
    prompt         words typed into the agent: a human question; questions due -> context
    post-tool      tool.call + tool.result; controls (stop, pause, evaluate, auto);
                   limits; questions due -> context (the safe point)
    stop           the stop hook: the goal judged over every scenario on the current
                   candidate (evaluated, or reused by source hash); unmet -> the stop is
                   refused with the failing scenarios and the question due; met -> the
                   agent stops and the campaign ends goal_met

Answers, in the shapes the three agents share (the block word comes from the agent file):
context `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`, refusal
`{"decision": "block"|"deny", "reason"}`, halt `{"continue": false, "stopReason"}`, a stop
let through as the campaign ends `{"systemMessage"}` (shown to the agent's user).
A hook never exits 2 (that would block the agent's action): errors are one line on
stderr and exit 1, which the agents report and go on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from socratic.contracts import Problem
from socratic.errors import InputError
from socratic.harness.attached import agentspec
from socratic.harness.attached.attached_campaign import AttachedCampaign, check_set
from socratic.harness.core.inbox import Taken

MARKER = ".socratic-session"   # in the workspace: the session this workspace belongs to
MARGIN_S = 30.0                # a hook answers this long before the agent would kill it


def find_session(*starts: str | None) -> Path:
    """The session of the workspace a hook runs in: the marker file in the first of
    `starts` (the payload's cwd, the process's cwd) or a folder above it."""
    env = os.environ.get("SOCRATIC_SESSION")
    if env:
        return Path(env)
    for start in starts:
        if not start:
            continue
        d = Path(start).resolve()
        for cand in (d, *d.parents):
            marker = cand / MARKER
            if marker.is_file():
                try:
                    return Path(json.loads(marker.read_text(encoding="utf-8"))["session"])
                except (OSError, ValueError, KeyError, TypeError):
                    raise InputError(f"{marker}: not a socratic workspace marker") from None
    raise InputError(f"no socratic session for {starts[0] or os.getcwd()} (no {MARKER} "
                     f"there or above: run the agent in a workspace made by `socratic attach`)")


# ---------------------------------------------------------------------- answers

def context(spec: agentspec.AgentSpec, event: str, texts: list[str],
            payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """Texts for the model, answering the agent's event (as it named it in the payload)."""
    if not texts:
        return {}
    name = (payload or {}).get("hook_event_name")
    if not isinstance(name, str) or name not in {e.name for e in spec.events}:
        name = spec.event_for(event)
    return {"hookSpecificOutput": {"hookEventName": name,
                                   "additionalContext": "\n\n".join(texts)}}


def refuse(spec: agentspec.AgentSpec, reason: str) -> dict[str, Any]:
    return {"decision": spec.block_decision, "reason": reason}


def halt(reason: str) -> dict[str, Any]:
    return {"continue": False, "stopReason": reason}


def let_stop(camp: AttachedCampaign) -> dict[str, Any]:
    """The agent may stop; its user is told why (systemMessage: shown, not sent to the model)."""
    return {"systemMessage": f"socratic: campaign ended: {camp.ended} "
                             f"(session {camp.session.dir})"}


# ---------------------------------------------------------------------- tool results

def tool_output(response: Any) -> tuple[bool, str]:
    """(ok, text) of a tool's response as the agents report it: Claude Code's dicts
    (Bash: stdout/stderr), Gemini's {llmContent, returnDisplay, error}, Codex's string."""
    if isinstance(response, str):
        return True, response
    if isinstance(response, dict):
        if "stdout" in response or "stderr" in response:
            out = str(response.get("stdout") or "")
            err = str(response.get("stderr") or "")
            text = out + ("\n" if out and err else "") + err
            return not response.get("interrupted"), text
        if "llmContent" in response or "error" in response:
            error = response.get("error")
            content = response.get("llmContent")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            return not error, (text if not error else f"{text}\n{error}".strip())
        ok = not (response.get("is_error") or response.get("isError"))
        return ok, json.dumps(response, ensure_ascii=False)
    return True, "" if response is None else json.dumps(response, ensure_ascii=False)


def log_tool(camp: AttachedCampaign, spec: agentspec.AgentSpec, payload: dict[str, Any]) -> None:
    name = str(spec.value(payload, "tool_name") or "tool")
    tid = spec.value(payload, "tool_id") or f"{name}-{camp.tool_calls + 1}"
    error = spec.value(payload, "tool_error")
    if isinstance(error, str) and error:
        ok, out = False, error
    else:
        ok, out = tool_output(spec.value(payload, "tool_response"))
    ms = spec.value(payload, "tool_ms")
    seconds = ms / 1000 if isinstance(ms, (int, float)) and not isinstance(ms, bool) \
        and ms >= 0 else None
    camp.engine.tool_call(str(tid), name, spec.value(payload, "tool_input"))
    camp.engine.tool_result(str(tid), name, ok, camp.redact(out), seconds)


# ---------------------------------------------------------------------- the events

def on_session_start(camp: AttachedCampaign, spec, payload, deadline: float) -> dict[str, Any]:
    camp.resume("the agent started a session")
    found = camp.check_hooks(spec)     # its Stop hook (and the others) as attach wrote them
    camp.engine.fire_start()
    texts = camp.engine.take()
    if found:
        texts.insert(0, "socratic: this session's hooks are not the ones socratic wrote ("
                     + "; ".join(found) + "). This is on the campaign's record.")
    return context(spec, "session-start", texts, payload)


def on_prompt(camp: AttachedCampaign, spec, payload, deadline: float) -> dict[str, Any]:
    text = spec.value(payload, "prompt")
    ours = {camp.settings.launch_prompt.strip(), camp.state.last_refusal.strip()}
    launch = text is not None and str(text).strip() in ours  # not the engineer's words
    if not launch and not camp.resume("the engineer typed into the agent"):
        return halt(f"the socratic campaign has ended ({camp.ended}): a prompt does not resume it "
                    f"after the engineer's stop or a limit; `socratic attach {camp.session.dir} "
                    f"--resume --headless` does")
    camp.engine.fire_start()
    if isinstance(text, str) and text.strip() and not launch:
        camp.engine.human_question(text.strip())
    return context(spec, "prompt", camp.engine.take(), payload)


def on_post_tool(camp: AttachedCampaign, spec, payload, deadline: float) -> dict[str, Any]:
    if camp.ended is not None:
        return halt(f"the socratic campaign has ended ({camp.ended})") \
            if camp.ended == "stopped" else {}
    log_tool(camp, spec, payload)
    camp.engine.safe_point(deadline)
    reason = camp.engine.due_end()
    if reason:
        camp.end(reason)
        return halt("stopped by the engineer (socratic)" if reason == "stopped"
                    else f"socratic campaign limit reached: {reason}")
    return context(spec, "post-tool", camp.engine.take(), payload)


def on_stop(camp: AttachedCampaign, spec, payload, deadline: float) -> dict[str, Any]:
    if camp.ended is not None:
        return {}
    camp.last_message(spec.value(payload, "last_message"))
    camp.check_hooks(spec)
    out = camp.engine.stop_attempt(deadline, block_cap=spec.block_cap)
    if out.ended:
        return let_stop(camp)
    texts = camp.engine.take()
    reason = "\n\n".join([out.refusal, *texts])
    camp.state.last_refusal = reason
    return refuse(spec, reason)


HANDLERS = {"session-start": on_session_start, "prompt": on_prompt,
            "post-tool": on_post_tool, "stop": on_stop}


def answer(camp: AttachedCampaign, event: str, payload: dict[str, Any], started: float,
           spec: agentspec.AgentSpec | None = None) -> tuple[dict[str, Any], list[Taken]]:
    """One hook's answer on an open campaign, and the questions and notes it carries (the
    caller settles them once the answer is written: `AttachedCampaign.settle`). The stop fails
    closed: an error of socratic's own refuses the stop, with the reason, and is logged."""
    if event not in HANDLERS:
        raise InputError(f"hook {event}: not a hook event (one of {', '.join(HANDLERS)})")
    spec = spec or agentspec.load(camp.settings.agent)
    if not spec.has_hooks:
        raise InputError(f"hook {event}: {camp.session.dir} is a campaign by hand (--agent "
                         f"{spec.name}): its steps are `socratic hook evaluate|say|stop`")
    deadline = started + camp.settings.timeouts_s.get(event, 60.0) - MARGIN_S
    deadline = min(deadline, started + camp.settings.wait_s)
    try:
        sid = spec.value(payload, "session")
        if isinstance(sid, str) and sid:
            camp.state.agent_session = sid
        if camp.ended is None or event in ("session-start", "prompt"):
            camp.read_transcript(spec.transcript, spec.value(payload, "transcript"))
            camp.engine.poll_inbox()
        out = HANDLERS[event](camp, spec, payload, deadline)
    except Exception as exc:
        line = one_line(exc)
        try:
            camp.emit(Problem(where=f"hook.{event}", error=line))
        except Exception:
            pass
        if event != "stop":
            raise InputError(f"hook {event}: {line}") from None
        camp.engine.settle(camp.engine.taken(), written=False)
        return refuse(spec, fail_closed_reason(line)), []
    return out, camp.engine.taken()


def one_line(exc: BaseException) -> str:
    """An error as one line: its message (a full disk names the file), its type if none."""
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.strerror or exc}: {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())[:300]


def fail_closed_reason(line: str) -> str:
    return (f"socratic could not judge this stop ({line}). The goal is unchecked, so the stop "
            f"is refused: carry on with the task, and stop again later.")


def run_hook(event: str, payload: dict[str, Any], started: float | None = None,
             session_dir: Path | None = None,
             write: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """One hook call: the answer (given to `write`, e.g. printed, before the questions in
    it count as delivered)."""
    started = time.monotonic() if started is None else started
    if event not in HANDLERS:
        raise InputError(f"hook {event}: not a hook event (one of {', '.join(HANDLERS)})")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    # the agent's cwd follows its `cd`s; the project dir it names, and ours, do not
    session_dir = session_dir or find_session(cwd, os.environ.get("CLAUDE_PROJECT_DIR"),
                                              os.environ.get("GEMINI_PROJECT_DIR"), os.getcwd())
    with AttachedCampaign.open(session_dir) as camp:
        out, taken = answer(camp, event, payload, started)
        written = True
        if write is not None:
            try:
                write(out)
            except OSError:  # the agent is gone: what the answer carried is due again
                written = False
        camp.settle(taken, written)
        return out


def settle(camp: AttachedCampaign, path: str, quiet_s: float = 0.15, most_s: float = 1.0) -> None:
    """Wait until the transcript at `path` exists and has not grown for `quiet_s` (at most
    `most_s`): an agent writes its transcript in batches, after the tool has started."""
    if not path:
        return
    deadline = time.monotonic() + most_s
    last, since = -2, time.monotonic()
    while time.monotonic() < deadline:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = -1   # not written yet
        if size != last:
            last, since = size, time.monotonic()
        elif size >= 0 and time.monotonic() - since >= quiet_s:
            return
        with camp.outside():
            time.sleep(0.02)


def run_evaluate(session_dir: Path, set_name: str | None) -> tuple[int, str]:
    """The workspace's `./evaluate` without a session server: an evaluation the agent runs
    itself, logged and numbered like the campaign's; returns (exit code, the table the
    agent reads)."""
    check_set(session_dir, set_name)
    with AttachedCampaign.open(session_dir) as camp:
        return 0, evaluate_on(camp, set_name)


def evaluate_on(camp: AttachedCampaign, set_name: str | None) -> str:
    """`./evaluate` on an open campaign: the table the agent reads."""
    camp.resume("the agent ran an evaluation")
    # what the agent said before it ran this comes first in the log; its agent may still
    # be writing that message to the transcript (a hook's client now starts in
    # milliseconds): wait for the file to settle, briefly
    settle(camp, camp.state.transcript)
    camp.read_transcript(agentspec.load(camp.settings.agent).transcript,
                         camp.state.transcript or None)
    return camp.evals.table(camp.evaluate(set_name, source="agent"))
