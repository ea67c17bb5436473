"""What the fleet benchmarks share (gpu_turns_check.py --fleet, fleet_gpus_check.py): a
scripted agent behind the local fake Anthropic API drives `socratic fleet run` with the
real evaluator, and each campaign's evaluations are read back from its session's events.

Nothing here needs a GPU; the evaluator the campaigns run does (unless SOCRATIC_EVALUATOR
names the fake one, as the CPU tests do).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

FAKE_KEY = "sk-fake"
Agent = Callable[[dict[str, Any]], dict[str, Any]]


def scripted_agent(steps: Sequence[tuple[str, dict[str, Any]]]) -> Agent:
    """The i-th model response makes the i-th tool call, then every response is "Done.".
    Stateless (it counts the assistant turns in the request), so any number of campaigns
    can share one fake server."""
    calls = list(steps)

    def agent(body: dict[str, Any]) -> dict[str, Any]:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turns < len(calls):
            return {"text": f"Step {turns + 1}.", "tools": [calls[turns]]}
        return {"text": "Done."}
    return agent


def fleet_toml(task: str, campaigns: int, *, max_parallel: int, gpus: str | list[str] | None = None,
               options: Mapping[str, Any] | None = None) -> str:
    """A fleet file of `campaigns` identical campaigns of `task`; `options` are `socratic
    run` options by their fleet-file names (max_turns, goal_min_speedup, scenarios...)."""
    # JSON's strings and lists are TOML's (the escapes JSON writes are TOML's too)
    lines = ["[fleet]", f"max_parallel = {max_parallel}"]
    if gpus is not None:
        lines.append(f"gpus = {json.dumps(gpus)}")
    lines += ["", "[[campaign]]", f"task = {json.dumps(task)}", f"repeat = {campaigns}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in (options or {}).items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SessionEval:
    """One evaluation of a campaign, from its eval.start and eval.end events."""

    n: int
    start: float | None           # wall clock (epoch seconds) of eval.start
    end: float                    # ... of eval.end
    result: Path | None           # the saved result (evals/NNNN.json), absolute
    gpu_wait_s: float | None
    source: str | None            # agent | stophook | control


@dataclass
class CampaignRun:
    name: str                     # the session folder's name in the fleet folder
    dir: Path
    gpu: str | None               # what the fleet set CUDA_VISIBLE_DEVICES to (fleet.json)
    evals: list[SessionEval] = field(default_factory=list)
    waits: int = 0                # eval.wait events: an evaluation waited for its GPU turn
    end_reason: str | None = None


def epoch(ts: str) -> float:
    """An event's `ts` (ISO, UTC, milliseconds) as epoch seconds."""
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def read_campaign(session: Path, gpu: str | None = None) -> CampaignRun:
    """A campaign's evaluations, waits and end, read from its events.jsonl through the
    session reader (lines that are not JSON objects, e.g. a truncated last one, are skipped)."""
    from socratic.sessionfiles import open_session

    run = CampaignRun(session.name, session, gpu)
    starts: dict[int, float] = {}
    records = open_session(session).event_records()[0] if (session / "events.jsonl").exists() else []
    for e in records:
        kind = e.get("type")
        if kind == "eval.start":
            starts[int(e["n"])] = epoch(e["ts"])
        elif kind == "eval.end":
            n = int(e["n"])
            result = session / e["result"] if e.get("result") else None
            run.evals.append(SessionEval(n, starts.get(n), epoch(e["ts"]), result,
                                         e.get("gpu_wait_s"), e.get("source")))
        elif kind == "eval.wait":
            run.waits += 1
        elif kind == "campaign.end":
            run.end_reason = e.get("reason")
    return run


def run_fleet(spec_text: str, fleet_dir: Path, agent: Agent,
              env: Mapping[str, str] | None = None) -> tuple[int, list[CampaignRun]]:
    """`socratic fleet run` of the fleet file `spec_text` in `fleet_dir` (created), its
    campaigns' model behind a fake Anthropic API answering with `agent`. Returns the fleet's
    exit code and its campaigns, in the fleet file's order. The fleet's own lines go to
    this process's stderr."""
    from socratic_doubles.fakeapi import FakeAnthropic

    fleet_dir = Path(fleet_dir)
    fleet_dir.parent.mkdir(parents=True, exist_ok=True)
    spec = fleet_dir.parent / f"{fleet_dir.name}.toml"
    spec.write_text(spec_text, encoding="utf-8")
    with FakeAnthropic(default=agent) as api:
        run_env = dict(os.environ if env is None else env)
        run_env.update(ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=api.url)
        code = subprocess.call([sys.executable, "-m", "socratic", "fleet", "run", str(spec),
                                "--session-dir", str(fleet_dir)], env=run_env)
    return code, fleet_campaigns(fleet_dir)


def fleet_campaigns(fleet_dir: Path) -> list[CampaignRun]:
    """The campaigns of a fleet folder, with the GPU each was given (its manifest's runs)."""
    try:
        manifest = json.loads((fleet_dir / "fleet.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        manifest = {}
    runs = manifest.get("runs") or {}
    names = [c["name"] for c in manifest.get("campaigns") or [] if isinstance(c, dict)]
    if not names:   # no manifest: every session folder, by name
        names = sorted(p.name for p in fleet_dir.iterdir() if (p / "events.jsonl").exists()) \
            if fleet_dir.is_dir() else []
    return [read_campaign(fleet_dir / name, (runs.get(name) or {}).get("gpu")) for name in names]
