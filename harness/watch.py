"""Progress lines for `socratic run` without the TUI: tail events.jsonl until the campaign
ends; Ctrl-C detaches and leaves the campaign running."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from socratic.eventlog import EVENTS_FILE, read_jsonl


def _fmt(v: Any, spec: str) -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def progress_line(e: dict[str, Any]) -> str | None:
    t, k = e.get("t", 0.0), e.get("type")
    head = f"[{_fmt(t, '8.1f')}s]"
    if k == "campaign.start":
        g = e.get("goal") or {}
        return f"{head} start {e.get('task')} with {e.get('model')}; goal >= " \
               f"{g.get('min_speedup')}x vs {g.get('against')}"
    if k == "tool.call":
        inp = e.get("input") or {}
        arg = inp.get("command") or inp.get("path") or inp.get("scenarios") or ""
        return f"{head} {e.get('name')} {str(arg).splitlines()[0][:80] if arg else ''}"
    if k == "tool.result" and not e.get("ok"):
        return f"{head}   failed: {str(e.get('output', '')).strip().splitlines()[-1:]}"
    if k == "eval.end":
        s = e.get("summary") or {}
        return (f"{head} eval #{e.get('n')}: {'correct' if s.get('all_correct') else 'FAILED'}"
                f", geomean {_fmt(s.get('geomean_speedup'), '.3f')}x, min "
                f"{_fmt(s.get('min_speedup'), '.3f')}x")
    if k == "trigger":
        return f"{head} trigger {e.get('kind')}: {e.get('reason')}"
    if k == "question":
        return f"{head} question ({e.get('source')}): {e.get('text')}"
    if k == "stophook":
        return f"{head} stop attempt: goal {'met' if e.get('met') else 'not met'} " \
               f"({len(e.get('failing') or [])} failing)"
    if k == "control":
        return f"{head} control: {e.get('action')}"
    if k == "api.retry":
        return f"{head} API retry {e.get('attempt')} in {_fmt(e.get('wait_s'), '.1f')}s: " \
               f"{str(e.get('error'))[:100]}"
    if k == "context.handoff":
        return f"{head} fresh context #{e.get('ctx')}: {e.get('reason')}"
    if k == "campaign.end":
        return f"{head} end: {e.get('reason')}"
    return None


def tail_progress(session_dir: Path, proc=None, poll_s: float = 0.3) -> int:
    path = Path(session_dir) / EVENTS_FILE
    offset = 0
    try:
        while True:
            if path.exists():
                events, offset = read_jsonl(path, offset)
                for e in events:
                    line = progress_line(e)
                    if line:
                        print(line, flush=True)
                    if e.get("type") == "campaign.end":
                        return 0 if e.get("reason") == "goal_met" else 1
            if proc is not None and proc.poll() is not None:
                if path.exists():
                    events, offset = read_jsonl(path, offset)
                    for e in events:
                        line = progress_line(e)
                        if line:
                            print(line, flush=True)
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
    return (f"socratic: detached; the campaign goes on. Watch it again with "
            f"`socratic watch {session_dir}`; stop it with "
            f"`socratic inject {session_dir} --stop`.")
