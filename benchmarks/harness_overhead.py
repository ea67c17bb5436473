"""The harness's own overhead per tool call, excluding model and tool time.

A campaign runs against the local fake Messages API (real anthropic client, real SSE) with
one tool call per response; for each loop iteration the harness records its wall time less
the time inside the model call (request, stream, SDK parsing) and inside the tool. What is
left is the harness: event-log appends (one fsync each), the conversation log, the inbox
poll, state saves, triggers, prompt-cache markers. Events are flushed one by one and fsync'd
at most once a second by default (`--fsync-every 0`: an fsync per event, as slow as the disk).

    python benchmarks/harness_overhead.py [--calls 200] [--json]

Target: median under 20 ms per tool call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from socratic.harness.api.campaign import Campaign
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_KEY, candidate_source, fake_config, make_task

TARGET_MS = 20.0


def script(n: int) -> list[dict]:
    steps = []
    tools = [
        ("read_file", {"path": "candidate.cu"}),
        ("edit_file", {"path": "NOTES.md", "old_string": "# Notes", "new_string": "# Notes"}),
        ("bash", {"command": "true"}),
        ("write_file", {"path": "scratch.txt", "content": "x" * 2000}),
    ]
    for i in range(n):
        steps.append({"text": f"Step {i}: checking something about the kernel. " * 3,
                      "tools": [tools[i % len(tools)]]})
    steps.append({"tools": [("write_file", {"path": "candidate.cu",
                                            "content": candidate_source(2.0)})]})
    steps.append({"text": "done"})
    return steps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--fsync-every", type=float, default=None, metavar="S",
                    help="event-log fsync interval (default: the harness default; 0 = every "
                    "event)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        task = make_task(Path(tmp))
        with FakeAnthropic(script(args.calls), chunk=64) as api:
            cfg = fake_config() if args.fsync_every is None else fake_config(
                fsync_every_s=args.fsync_every)
            c = Campaign.create(task, cfg, session_dir=Path(tmp) / "s",
                                api_key=FAKE_KEY, base_url=api.url,
                                suggester=lambda k, a, t: [])
            reason = c.run()
        # the iterations that carried exactly one tool call (not the final stop)
        per_call = [x * 1000 for x in c.overheads[: args.calls]]
    med = statistics.median(per_call)
    p90 = sorted(per_call)[int(0.9 * (len(per_call) - 1))]
    res = {"calls": len(per_call), "fsync_every_s": cfg.fsync_every_s, "median_ms": round(med, 3), "p90_ms": round(p90, 3),
           "mean_ms": round(statistics.fmean(per_call), 3), "target_ms": TARGET_MS,
           "end": reason, "model_s": round(c.stats["model_s"], 3),
           "tool_s": round(c.stats["tool_s"], 3)}
    if args.json:
        print(json.dumps(res))
    else:
        print(f"harness overhead per tool call over {res['calls']} calls: median "
              f"{res['median_ms']:.2f} ms, p90 {res['p90_ms']:.2f} ms, mean "
              f"{res['mean_ms']:.2f} ms, event fsync every {cfg.fsync_every_s:g} s (target < {TARGET_MS:g} ms; model time "
              f"{res['model_s']:.2f} s and tool time {res['tool_s']:.2f} s excluded)")
    return 0 if med < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
