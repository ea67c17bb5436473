"""Progress lines for `socratic run` without the TUI: tail events.jsonl until the campaign
ends; Ctrl-C detaches and leaves the campaign running."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

from socratic.contracts import (
    ApiRetry,
    CampaignEnd,
    CampaignStart,
    ContextHandoff,
    Control,
    EvalEnd,
    EvalWait,
    Event,
    Question,
    StopHook,
    ToolCall,
    ToolResult,
    Trigger,
)
from socratic.eventlog import EVENTS_FILE
from socratic.logread import LogReader


def _fmt(v: Any, spec: str) -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def progress_line(e: Event) -> str | None:
    head = f"[{_fmt(e.t, '8.1f')}s]"
    if isinstance(e, CampaignStart):
        return f"{head} start {e.task} with {e.model}; goal >= " \
               f"{e.goal.min_speedup}x vs {e.goal.against}"
    if isinstance(e, ToolCall):
        inp = e.input if isinstance(e.input, dict) else {}
        arg = inp.get("command") or inp.get("path") or inp.get("scenarios") or ""
        return f"{head} {e.name} {str(arg).splitlines()[0][:80] if arg else ''}"
    if isinstance(e, ToolResult) and not e.ok:
        return f"{head}   failed: {e.output.strip().splitlines()[-1:]}"
    if isinstance(e, EvalWait):
        return f"{head} eval #{e.n}: waiting for GPU {e.gpu} (held by {e.holder})"
    if isinstance(e, EvalEnd):
        s = e.summary
        waited = e.gpu_wait_s
        return (f"{head} eval #{e.n}: {'correct' if s.all_correct else 'FAILED'}"
                f", geomean {_fmt(s.geomean_speedup, '.3f')}x, min "
                f"{_fmt(s.min_speedup, '.3f')}x"
                + (f" (waited {waited:.1f}s for the GPU)" if waited and waited >= 0.05 else ""))
    if isinstance(e, Trigger):
        return f"{head} trigger {e.kind}: {e.reason}"
    if isinstance(e, Question):
        return f"{head} question ({e.source}): {e.text}"
    if isinstance(e, StopHook):
        return f"{head} stop attempt: goal {'met' if e.met else 'not met'} " \
               f"({len(e.failing)} failing)"
    if isinstance(e, Control):
        return f"{head} control: {e.action}"
    if isinstance(e, ApiRetry):
        return f"{head} API retry {e.attempt} in {_fmt(e.wait_s, '.1f')}s: {e.error[:100]}"
    if isinstance(e, ContextHandoff):
        return f"{head} fresh context #{e.ctx}: {e.reason}"
    if isinstance(e, CampaignEnd):
        return f"{head} end: {e.reason}"
    return None


def tail_progress(session_dir: Path, proc=None, poll_s: float = 0.3) -> int:
    """Print the campaign's progress until it ends (0: goal met) or its process exits."""
    reader = LogReader(Path(session_dir) / EVENTS_FILE)   # the one reading (socratic.logread)

    def show() -> CampaignEnd | None:
        for e in reader.poll():
            line = progress_line(e)
            if line:
                print(line, flush=True)
        return reader.state.end

    try:
        while True:
            end = show()
            if end is not None:
                return 0 if end.reason == "goal_met" else 1
            if proc is not None and proc.poll() is not None:
                show()
                log = Path(session_dir) / "campaign.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                print(f"socratic: the campaign process exited ({proc.returncode})\n{tail}",
                      file=sys.stderr)
                return 1
            time.sleep(poll_s)
    except KeyboardInterrupt:
        print("\n" + detach_hint(session_dir), file=sys.stderr)
        return 0


def detach_hint(session_dir: Path) -> str:
    """What a user who stops watching a running campaign needs next."""
    d = shlex.quote(str(session_dir))
    return (f"socratic: detached; the campaign goes on. Watch it again with "
            f"`socratic watch {d}`; stop it with `socratic inject {d} --stop`.")
