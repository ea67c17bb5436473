"""Record the bundled demo campaign: a scripted agent (src/socratic_doubles/demo.py) on the
RMSNorm task, through the fake Messages API, with the real harness, the real tools and (on a
GPU node) the real evaluator.

    python benchmarks/record_demo.py [--session-dir sessions/demo-new] [--goal-min-speedup X]

Without --goal-min-speedup it first calibrates: it evaluates the demo's V2 and V3 kernels
with the evaluator and sets the goal between their min-speedups, so that the stop hook
rejects V2 and accepts V3. Human questions are appended to the inbox at scripted moments.
Then copy the session: `rm -rf src/socratic/sessions/demo && cp -r <dir> src/socratic/sessions/demo`.

CPU dry run (no GPU; a stand-in evaluator with numbers implied by the demo kernels):
    python benchmarks/record_demo.py --session-dir /tmp/demo \
        --evaluator "python -m socratic_doubles.fakeeval --rules demo" --chunk-delay 0
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from socratic.bank import load_bank
from socratic.contracts import AskCommand
from socratic.eventlog import inject, read_jsonl
from socratic_doubles.demo import ScriptedAgent, write_kernels
from socratic_doubles.fakeapi import FakeAnthropic

REPO = Path(__file__).resolve().parents[1]

DEMO_KEY = "sk-demo-local-fake-server-not-a-key-000000"
DEMO_MODEL = "scripted-demo-agent"
TASK = "src/socratic/kernels/rmsnorm"

# (plan step index, question text, preferred bank id or None). The question is appended to
# the inbox just before the scripted agent answers that step, so it arrives mid-turn and is
# delivered at the next safe point.
HUMAN_QUESTIONS = [
    (2, "What fraction of the H200's DRAM bandwidth does the baseline reach on the largest "
        "shape, and how do you know?"),
    (7, "How much of the smallest shape's time is launch latency rather than bandwidth? "
        "Check it before optimizing it further."),
    (10, None),   # None: the engineer picks the newest trigger's first suggestion not asked yet
]


def evaluator_argv(arg: str | None) -> list[str]:
    return shlex.split(arg) if arg else [sys.executable, "-m", "socratic.evaluator"]


def min_speedup(argv: list[str], cand: Path, env: dict[str, str]) -> float | None:
    r = subprocess.run([*argv, TASK, "--candidate", str(cand), "--json"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=1800)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        print(f"calibration: no JSON from the evaluator for {cand.name}:\n{r.stderr[-2000:]}",
              file=sys.stderr)
        return None
    s = doc.get("summary") or {}
    print(f"calibration: {cand.name}: all_correct={s.get('all_correct')} geomean="
          f"{s.get('geomean_speedup')} min={s.get('min_speedup')} "
          f"(worst {s.get('worst_scenario')})", file=sys.stderr)
    return s.get("min_speedup") if s.get("all_correct") else None


def calibrate(argv: list[str], env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        k = write_kernels(Path(tmp))
        v2 = min_speedup(argv, k["v2"], env)
        v3 = min_speedup(argv, k["v3"], env)
    if v3 is None:
        raise SystemExit("calibration failed: V3 is not correct on the goal set; fix "
                         "src/socratic_doubles/demo_kernels/v3.cu before recording")
    if v2 is None or v3 <= v2 * 1.02:
        goal = round(v3 * 0.97, 3)
        print(f"calibration: V2 and V3 are too close (v2={v2}, v3={v3}); goal {goal}: the "
              f"stop hook may not reject V2", file=sys.stderr)
        return goal
    goal = round((v2 + v3) / 2, 3)
    print(f"calibration: goal min_speedup {goal} (V2 {v2:.3f} < goal <= V3 {v3:.3f})",
          file=sys.stderr)
    return goal


def picked_from_bank(session: Path) -> tuple[str | None, str | None, str | None]:
    """(text, bank id, trigger): the newest trigger's first suggestion not asked yet, the way
    an engineer picks it in the TUI's question picker."""
    events = read_jsonl(session / "events.jsonl")[0]
    asked = {e.get("bank_id") for e in events if e.get("type") == "question"}
    trig = next((e for e in reversed(events) if e.get("type") == "trigger"), None)
    if trig is None:
        return None, None, None
    bank = load_bank()
    for bid in trig.get("suggestions") or []:
        e = bank.get(bid)
        if e is not None and bid not in asked:
            return e.text, e.id, trig.get("kind")
    return None, None, None


def latest_untagged_trigger(session: Path) -> str | None:
    """The kind of the newest trigger if no human question has followed it yet (the
    engineer reacts to what the TUI shows)."""
    p = session / "events.jsonl"
    if not p.exists():
        return None
    kind = None
    for e in read_jsonl(p)[0]:
        if e.get("type") == "trigger":
            kind = e.get("kind")
        elif e.get("type") == "question" and e.get("source") == "human":
            kind = None
    return kind


def main() -> int:
    ap = argparse.ArgumentParser(description="Record the demo campaign (see module doc).")
    ap.add_argument("--session-dir", default="sessions/demo-new")
    ap.add_argument("--goal-min-speedup", type=float)
    ap.add_argument("--evaluator", help="evaluator argv prefix (default: python -m socratic.evaluator)")
    ap.add_argument("--chunk-delay", type=float, default=0.015,
                    help="seconds between streamed text chunks (a live feel in replay)")
    ap.add_argument("--force", action="store_true", help="replace an existing session dir")
    args = ap.parse_args()

    session = Path(args.session_dir).resolve()
    if session.exists():
        if not args.force:
            raise SystemExit(f"{session} exists (use --force to replace it)")
        shutil.rmtree(session)
    env = dict(os.environ)
    ev_argv = evaluator_argv(args.evaluator)
    goal = args.goal_min_speedup or calibrate(ev_argv, env)

    def on_step(i: int, body: dict) -> None:
        for step_i, text in HUMAN_QUESTIONS:
            if step_i != i:
                continue
            if text is None:
                text, bid, trig = picked_from_bank(session)
                if text is None:
                    continue
                q = AskCommand(text=text, bank_id=bid, trigger=trig)
            else:
                q = AskCommand(text=text, trigger=latest_untagged_trigger(session) or None)
            inject(session, q)
            print(f"record_demo: human question before step {i}: {q.text}", file=sys.stderr)

    agent = ScriptedAgent(on_step=on_step, chunk_delay=args.chunk_delay)
    session.mkdir(parents=True)
    (session / "inbox.jsonl").touch()
    with FakeAnthropic(default=agent, chunk=12) as api:
        env.update({"ANTHROPIC_API_KEY": DEMO_KEY, "ANTHROPIC_BASE_URL": api.url,
                    "SOCRATIC_EVALUATOR": shlex.join(ev_argv)})
        cmd = [sys.executable, "-m", "socratic", "run", TASK, "--headless", "--auto-questions",
               "--session-dir", str(session), "--goal-min-speedup", str(goal),
               "--model", DEMO_MODEL, "--max-turns", "60"]
        print("record_demo: " + shlex.join(cmd), file=sys.stderr)
        t0 = time.monotonic()
        with open(session / "campaign.log", "wb") as log:
            rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=log).returncode
        dt = time.monotonic() - t0
    return report(session, rc, dt, goal)


def report(session: Path, rc: int, seconds: float, goal: float) -> int:
    events = read_jsonl(session / "events.jsonl")[0]
    of = lambda t: [e for e in events if e.get("type") == t]  # noqa: E731
    evals = of("eval.end")
    triggers = of("trigger")
    questions = of("question")
    hooks = of("stophook")
    end = (of("campaign.end") or [{}])[-1]
    q_triggers = {q.get("trigger") for q in questions if q.get("trigger")}
    print(f"\nsession: {session}  ({seconds:.0f} s, exit {rc}, goal {goal})")
    print(f"evaluations: {len(evals)}: " + ", ".join(
        f"#{e['n']} {'ok' if e['summary'].get('all_correct') else 'FAIL'} "
        f"min {e['summary'].get('min_speedup')}" for e in evals))
    print("triggers: " + ", ".join(t["kind"] for t in triggers))
    print("questions: " + "; ".join(f"{q.get('source')}@{q.get('trigger')}" for q in questions))
    print("stop attempts: " + ", ".join("met" if h["met"] else "rejected" for h in hooks))
    print(f"end: {end.get('reason')}")
    checks = {
        ">= 6 evaluations": len(evals) >= 6,
        "a correctness failure": any(not e["summary"].get("all_correct") for e in evals),
        "a rejected stop attempt": any(not h["met"] for h in hooks),
        "questions at >= 3 distinct triggers": len(q_triggers) >= 3,
        "human and auto questions": {q.get("source") for q in questions} >= {"human", "auto"},
        "goal met": end.get("reason") == "goal_met",
    }
    for name, ok in checks.items():
        print(f"  [{'x' if ok else ' '}] {name}")
    print(f"\nto bundle it: rm -rf src/socratic/sessions/demo && cp -r {session} src/socratic/sessions/demo")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
