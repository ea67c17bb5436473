"""Shared helpers for the TUI tests (no tests here): synthetic sessions and a fake bank."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generator():
    """benchmarks/make_synthetic_session.py as a module."""
    spec = importlib.util.spec_from_file_location(
        "make_synthetic_session", ROOT / "benchmarks" / "make_synthetic_session.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def make_session(tmp: Path, n_events: int = 400, seed: int = 3, end: bool = True,
                 scenarios: list[str] | None = None) -> tuple[Path, list[dict]]:
    gen = generator()
    events = gen.make_events(n_events, seed=seed, scenarios=scenarios, end=end)
    gen.write_session(tmp, events)
    return tmp, events


def write_events(path: Path, events: list[dict], mode: str = "w") -> None:
    with open(path, mode, encoding="utf-8") as fh:
        fh.writelines(json.dumps(ev) + "\n" for ev in events)


def read_inbox(session: Path) -> list[dict]:
    p = session / "inbox.jsonl"
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class FakeEntry:
    """The fields of socratic.bank's Entry that the TUI and bank.search read."""

    id: str
    group: str
    text: str
    why: str
    triggers: tuple = ()
    level: str = "measurement"
    kind: str = "core"
    provenance: str = "new"
    arch: str | None = None
    source: str = ""


class FakeBank:
    def __init__(self) -> None:
        self.entries = [
            FakeEntry("measurement.what-is-timed", "measurement",
                      "What exactly does the timer measure?",
                      "Agents time launches, not kernels.", ("start",)),
            FakeEntry("measurement.l2-flush", "measurement",
                      "Is L2 flushed before each timed launch?",
                      "Warm caches inflate small-shape speedups.", ("suspicious_gain",)),
            FakeEntry("bound.roofline-estimate", "bound",
                      "What is the roofline bound for the largest scenario?",
                      "A bound tells how much is left.", ("start", "plateau")),
            FakeEntry("gap.where-time-goes", "gap",
                      "Where exactly does the remaining time go?",
                      "Profiles beat guesses.", ("plateau",)),
            FakeEntry("compiler.spills", "compiler",
                      "Does ptxas report register spills?",
                      "Spills cost local memory traffic.", ("plateau",)),
            FakeEntry("correctness.masking", "correctness",
                      "Is the causal mask aligned to the bottom-right corner?",
                      "Off-by-one masks pass square shapes only.", ("correctness_failure",)),
        ]

    def get(self, eid):
        return next((e for e in self.entries if e.id == eid), None)


def tiny_events() -> list[dict]:
    """A short, hand-checked campaign: 2 scenarios, 2 evaluations, a question."""
    evs = [
        {"type": "campaign.start", "task": "rmsnorm", "goal": {"min_speedup": 1.0, "against": "baseline"},
         "model": "m", "scenarios": {"set": "bench", "ids": ["r1-c4096", "r4096-c8192"]},
         "gpu": {"name": "NVIDIA H200"}, "host": "node", "versions": {}, "auto_questions": False},
        {"type": "trigger", "kind": "start", "reason": "campaign start",
         "suggestions": ["measurement.what-is-timed", "bound.roofline-estimate"]},
        {"type": "agent.text", "text": "Let me look"},
        {"type": "agent.text", "text": " at the kernel."},
        {"type": "tool.call", "id": "t1", "name": "bash", "input": {"command": "ls -la"}},
        {"type": "usage", "input_tokens": 1000, "output_tokens": 50, "cache_read": 0,
         "cache_write": 0, "cost_usd": 0.01},
        {"type": "tool.result", "id": "t1", "ok": True, "output": "candidate.cu\nNOTES.md", "seconds": 0.2},
        {"type": "eval.start", "n": 1, "candidate_sha": "abc"},
        {"type": "eval.scenario", "n": 1, "scenario": "r1-c4096", "correct": True, "err": 0.002,
         "err_baseline": 0.002, "baseline_ms": 0.01, "candidate_ms": 0.02, "speedup": 0.5,
         "tflops": 0.1, "bound_fraction": 0.1},
        {"type": "eval.scenario", "n": 1, "scenario": "r4096-c8192", "correct": False, "err": 0.5,
         "err_baseline": 0.002, "baseline_ms": 0.05, "candidate_ms": 0.04, "speedup": 1.25},
        {"type": "eval.end", "n": 1, "summary": {"all_correct": False, "geomean_speedup": 0.79,
                                                 "min_speedup": 0.5, "worst_scenario": "r1-c4096"},
         "result": "evals/0001.json"},
        {"type": "trigger", "kind": "correctness_failure", "reason": "r4096-c8192 wrong",
         "suggestions": ["correctness.masking"]},
        {"type": "question", "text": "Is the causal mask aligned?", "bank_id": "correctness.masking",
         "trigger": "correctness_failure", "source": "auto"},
        {"type": "eval.start", "n": 2, "candidate_sha": "def"},
        {"type": "eval.scenario", "n": 2, "scenario": "r1-c4096", "correct": True, "err": 0.002,
         "err_baseline": 0.002, "baseline_ms": 0.01, "candidate_ms": 0.008, "speedup": 1.25},
        {"type": "eval.scenario", "n": 2, "scenario": "r4096-c8192", "correct": True, "err": 0.002,
         "err_baseline": 0.002, "baseline_ms": 0.05, "candidate_ms": 0.04, "speedup": 1.1},
        {"type": "eval.end", "n": 2, "summary": {"all_correct": True, "geomean_speedup": 1.17,
                                                 "min_speedup": 1.1, "geomean_vs": {"fa3": 0.5}},
         "result": "evals/0002.json"},
        {"type": "stophook", "met": True, "failing": []},
        {"type": "campaign.end", "reason": "goal_met"},
    ]
    return stamped(evs)


def stamped(evs: list[dict]) -> list[dict]:
    """Events with the envelope every event carries (seq, t, ts) where they lack it."""
    for i, ev in enumerate(evs):
        ev.setdefault("seq", i + 1)
        ev.setdefault("t", float(i))
        ev.setdefault("ts", f"2026-11-01T08:00:{i % 60:02d}.000+00:00")
    return evs


def start_event(ids: list[str], set_name: str | None = "bench", **fields) -> dict:
    """A campaign.start as the harness writes it (the fields a test does not care about
    filled in)."""
    return {"type": "campaign.start", "task": "t", "model": "m",
            "goal": {"min_speedup": 1.0, "against": "baseline"},
            "scenarios": {"set": set_name, "ids": ids}, "gpu": None, "host": "h",
            "versions": {}, **fields}
