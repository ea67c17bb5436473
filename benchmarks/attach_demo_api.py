"""A scripted agent behind the fake Messages API, for trying `socratic attach --agent claude`
with the real Claude Code and no model: it evaluates, declares itself done (the stop is
refused with the failing scenarios), keeps inspecting the kernel until a question from the
engineer reaches it (pick one with `/` in `socratic watch`), answers it, makes the
candidate faster and stops again (the goal is met).

    python benchmarks/attach_demo_api.py --port 8765 &
    SOCRATIC_EVALUATOR="python -m socratic_doubles.fakeeval" \
        socratic attach rmsnorm --agent claude --goal-min-speedup 1.3 --session-dir /tmp/s
    cd /tmp/s/workspace && ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x \
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 claude -p "$(jq -r .attach.launch_prompt \
        /tmp/s/config.json)" --permission-mode bypassPermissions
    socratic watch /tmp/s          # in another pane
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from socratic_doubles.fakeapi import FakeAnthropic


def _said(body: dict[str, Any], text: str) -> bool:
    return text in json.dumps(body.get("messages") or [])


def bash(command: str, why: str) -> tuple[str, dict[str, str]]:
    return ("Bash", {"command": command, "description": why})


def step(body: dict[str, Any]) -> dict[str, Any]:
    """The next move, from what the conversation holds so far."""
    if not _said(body, "Baseline first."):
        return {"text": "Baseline first.", "tools": [bash("./evaluate", "evaluate the baseline")]}
    if not _said(body, "The goal is not met"):
        return {"text": "It already runs near the memory bound; I am done."}
    if _said(body, "Question from the engineer") and not _said(body, "To answer the question"):
        return {"text": "To answer the question: I checked the evaluation table rather than "
                        "my memory: r1-c4k is launch-bound, one block per row leaves the GPU "
                        "idle. Splitting rows across warps.",
                "tools": [bash("echo '// speedup: 1.35' >> candidate.cu",
                               "faster: rows split across warps")]}
    if _said(body, "To answer the question"):
        return {"text": "All scenarios should be at 1.35x now. Done."}
    return {"text": "Reading the kernel again before changing it.",
            "tools": [bash("sleep 6; grep -c . candidate.cu", "inspect")]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    with FakeAnthropic(default=step, chunk=8, port=args.port) as api:
        print(f"fake Messages API on {api.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
