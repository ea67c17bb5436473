#!/usr/bin/env python3
"""Write a synthetic but realistic campaign session (events.jsonl) for TUI tests and benchmarks.

    python3 benchmarks/make_synthetic_session.py OUT_DIR [--events 25000] [--seed 1]

The campaign has the shape of a long agent run on the attention task: streamed agent
text in ~100 ms chunks, tool calls with outputs, usage per model call, evaluations over
26 scenarios every few dozen steps (speedups that climb with plateaus), triggers of every
kind with bank suggestions, human and auto questions, stop-hook rejections, a correctness
failure, and a campaign.end. Deterministic for a given seed; `t` is campaign time and
`ts` is derived from a fixed start, so outputs are byte-identical across runs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from socratic.contracts import build_event

T0 = datetime(2026, 11, 1, 8, 0, 0, tzinfo=timezone.utc)

SCENARIOS = [
    f"b{b}-s{s}-h{h}-d{d}{'-causal' if c else ''}"
    for (b, s, h, d) in [(16, 1024, 16, 128), (8, 2048, 16, 128), (4, 4096, 16, 128),
                         (2, 8192, 16, 128), (1, 16384, 16, 128), (32, 512, 32, 64),
                         (8, 2048, 32, 64), (2, 8192, 32, 64), (16, 1024, 8, 256),
                         (4, 4096, 8, 256), (1, 16384, 8, 256), (1, 1, 16, 128),
                         (1, 7, 16, 128)]
    for c in (0, 1)
]

SUGGEST = {
    "start": ["strategy.plan-first", "measurement.what-is-timed", "bound.roofline-estimate"],
    "plateau": ["gap.where-time-goes", "memory.smem-bank-conflicts", "compiler.spills"],
    "declared_done": ["bound.how-far-from-bound", "validity.all-shapes", "strategy.limit-evidence"],
    "suspicious_gain": ["validity.gain-real", "measurement.l2-flush", "correctness.stale-output"],
    "correctness_failure": ["correctness.first-wrong-element", "correctness.masking", "numerics.accumulate-fp32"],
}

WORDS = ["tile", "warp", "shared", "memory", "pipeline", "softmax", "rescale", "causal", "mask", "register", "spill", "occupancy", "wgmma", "tma", "barrier", "producer", "consumer", "row", "max", "exp2", "scale", "bf16", "fp32", "accumulator", "latency", "bandwidth", "L2", "SM", "block", "grid", "launch", "the", "a", "of", "to", "in", "and", "we", "kernel", "load", "store", "split-k", "head", "dimension", "sequence"]


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def make_events(n_events: int = 25_000, seed: int = 1, scenarios: list[str] | None = None,
                end: bool = True) -> list[dict]:
    rng = random.Random(seed)
    scen = list(scenarios or SCENARIOS)
    events: list[dict] = []
    t = 0.0
    tool_id = 0
    eval_n = 0
    quality = 0.55  # geomean speedup level the agent is at
    asked: list[str] = []

    def emit(type_: str, dt: float = 0.0, **fields) -> None:
        nonlocal t
        t = round(t + dt, 3)
        head = {"seq": len(events) + 1, "t": t,
                "ts": (T0 + timedelta(seconds=t)).isoformat(timespec="milliseconds")}
        build_event(type_, **head, **fields)  # as the harness's log does: a contract event
        events.append({**head, "type": type_, **fields})

    emit("campaign.start", task="flash_attn_fwd", goal={"min_speedup": 1.0, "against": "baseline"},
         model="claude-scripted", scenarios={"set": "bench", "ids": scen}, gpu={"name": "NVIDIA H200", "cc": "9.0"},
         host="gpu-node-07", auto_questions=True, versions={"socratic": "0.1.0"})
    emit("trigger", 0.01, kind="start", reason="campaign start", suggestions=SUGGEST["start"])
    emit("question", 0.01, text="Before editing: what exactly does the timer measure, and "
         "what would the bound be for the largest scenario?", bank_id="measurement.what-is-timed",
         trigger="start", source="auto")

    step = 0
    budget = n_events - (1 if end else 0)
    while len(events) < budget - 80:
        step += 1
        # one model turn: streamed text then a tool call
        for _ in range(rng.randint(3, 12)):
            chunk = " " + _sentence(rng, rng.randint(4, 14))
            if rng.random() < 0.08:
                chunk = "\n\n```cuda\n__syncthreads();\nacc[i] = fmaf(p[i], v[i], acc[i]);\n```\n"
            elif rng.random() < 0.1:
                chunk = "\n\n- " + _sentence(rng, 6) + "\n- " + _sentence(rng, 5) + "\n"
            emit("agent.text", rng.uniform(0.05, 0.3), text=chunk)
        emit("usage", 0.01, input_tokens=rng.randint(20_000, 90_000),
             output_tokens=rng.randint(200, 2500), cache_read=rng.randint(10_000, 80_000),
             cache_write=rng.randint(0, 4000), cost_usd=round(rng.uniform(0.02, 0.4), 4))
        tool_id += 1
        tid = f"toolu_{tool_id:05d}"
        if step % 9 == 0:
            # an evaluation
            emit("tool.call", 0.05, id=tid, name="evaluate", input={"scenarios": "bench"})
            eval_n += 1
            emit("eval.start", 0.2, n=eval_n, candidate_sha=f"{rng.getrandbits(64):016x}",
                 total=len(scen))
            broken = eval_n in (4, 13) or rng.random() < 0.04
            quality = min(2.2, quality * rng.uniform(0.97, 1.18))
            speeds = []
            correct_all = True
            for i, sid in enumerate(scen):
                base = 0.05 * (1 + i % 7) * (1.5 if "causal" in sid else 1.0)
                sp = max(0.05, quality * rng.uniform(0.75, 1.25) * (0.6 if sid.startswith("b1-s1-") else 1.0))
                correct = not (broken and i % 5 == 2)
                correct_all &= correct
                err = 0.0019 * rng.uniform(0.8, 1.3) * (40 if not correct else 1)
                speeds.append(sp)
                emit("eval.scenario", rng.uniform(0.3, 1.5), n=eval_n, index=i, total=len(scen),
                     scenario=sid, correct=correct, err=round(err, 5), err_baseline=0.0019,
                     baseline_ms=round(base, 4), candidate_ms=round(base / sp, 4),
                     speedup=round(sp, 3), tflops=round(180 * sp * (1 + i % 3), 1),
                     bound_fraction=round(min(0.98, 0.25 * sp), 3))
            geo = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
            emit("eval.end", 0.2, n=eval_n, summary={
                "all_correct": correct_all, "geomean_speedup": round(geo, 3),
                "min_speedup": round(min(speeds), 3), "n": len(scen),
                "n_correct": len(scen) - (0 if correct_all else sum(1 for i in range(len(scen)) if i % 5 == 2)),
                "worst_scenario": scen[speeds.index(min(speeds))],
                "geomean_vs": {"fa3": round(geo * 0.45, 3)}},
                 result=f"evals/{eval_n:04d}.json")
            emit("tool.result", 0.05, id=tid, ok=True,
                 output=f"eval #{eval_n}: geomean {geo:.3f}x min {min(speeds):.3f}x "
                        f"{'all correct' if correct_all else 'FAILED scenarios'}")
            kind = None
            if not correct_all:
                kind = "correctness_failure"
            elif eval_n % 7 == 0:
                kind = "plateau"
            elif eval_n % 11 == 0:
                kind = "suspicious_gain"
            if kind:
                emit("trigger", 0.05, kind=kind, reason=f"{kind.replace('_', ' ')} at eval #{eval_n}",
                     suggestions=SUGGEST[kind])
                src = "auto" if eval_n % 2 else "human"
                bid = SUGGEST[kind][eval_n % 3]
                asked.append(bid)
                emit("question", rng.uniform(5, 60), text=f"Question for {kind}: "
                     + _sentence(rng, 12).rstrip(".") + "?", bank_id=bid, trigger=kind, source=src)
        elif step % 40 == 0:
            emit("tool.call", 0.05, id=tid, name="bash", input={"command": "echo done"})
            emit("tool.result", 0.3, id=tid, ok=True, output="done")
            emit("trigger", 0.05, kind="declared_done", reason="agent tried to stop",
                 suggestions=SUGGEST["declared_done"])
            met = quality >= 1.6
            emit("stophook", 0.05, met=met, failing=[] if met else [
                {"scenario": s, "correct": True, "speedup": round(quality * 0.8, 3), "goal": 1.0}
                for s in scen[:3]])
        else:
            name = rng.choice(["bash", "read_file", "edit_file", "edit_file", "write_file"])
            if name == "bash":
                inp = {"command": rng.choice(["nvcc -O3 -arch=sm_90a -Xptxas -v candidate.cu -c",
                                               "grep -n __syncthreads candidate.cu",
                                               "python -m socratic.evaluator . --check-only"])}
                out = "\n".join(f"ptxas info    : Used {rng.randint(96, 255)} registers, "
                                f"{rng.randint(0, 64)} bytes spill" for _ in range(rng.randint(1, 30)))
            elif name == "read_file":
                inp = {"path": "candidate.cu"}
                out = "\n".join(f"{i:4d}  " + _sentence(rng, 8) for i in range(rng.randint(20, 120)))
            else:
                inp = {"path": "candidate.cu", "old": _sentence(rng, 6), "new": _sentence(rng, 7)}
                out = "ok: 1 replacement"
            ok = rng.random() > 0.05
            emit("tool.call", 0.05, id=tid, name=name, input=inp)
            emit("tool.result", rng.uniform(0.05, 30.0), id=tid, ok=ok,
                 output=out if ok else "error: no match for old string")
        if step % 150 == 0:
            emit("control", 1.0, action="pause")
            emit("control", rng.uniform(30, 600), action="resume")
        # idle gaps now and then (the agent waiting on a long build or a human)
        if rng.random() < 0.01:
            t += rng.uniform(300, 3600)
    while len(events) < budget:  # top up to exactly n_events with agent text
        emit("agent.text", rng.uniform(0.05, 0.3), text=" " + _sentence(rng, rng.randint(4, 14)))
    if end:
        emit("campaign.end", 1.0, reason="goal met" if quality >= 1.6 else "max tool calls")
    return events


def write_session(out_dir: Path, events: list[dict]) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "events.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(ev, ensure_ascii=False, separators=(",", ":")) + "\n" for ev in events)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--events", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-end", action="store_true", help="leave the campaign running")
    args = ap.parse_args()
    events = make_events(args.events, args.seed, end=not args.no_end)
    path = write_session(args.out_dir, events)
    print(f"wrote {len(events)} events to {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
