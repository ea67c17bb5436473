"""From the evaluator JSONs of the judge's H200 calls (benchmarks/results/judge_isolation/),
write the two summary files the issues ask for:

    benchmarks/results/hostile_h200.json  [{"name", "attack", "exit_code", "geomean_speedup", "n_correct", "n"}]
    benchmarks/results/control_h200.json  [{"task", "run", "scenario", "speedup", "correct"}]

    python3 benchmarks/judge_h200/collect.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
EVALS = RESULTS / "judge_isolation"

ATTACKS = {
    "h_timer_patch": "rewrites cuEventRecord in its own process (mprotect + jump, symbols found by walking the "
                     "loaded objects, names XOR-encoded) to launch half its work after the end event; tries "
                     "the judge's memory too",
    "h_forge_result": "reads the judge's memory and descriptors for the key and channel, writes signed-looking "
                      "verdict lines to every pipe it has; then does the real work",
    "h_static_alloc": "takes 256 MiB of device memory when its library loads and uses it from the kernel",
    "h_sync_inside": "cudaStreamSynchronize inside the entry",
    "h_own_allocation": "cudaMalloc inside the entry",
    "h_left_running": "leaves a 10 s kernel running in its own CUDA context (the H200 run: started when its "
                      "library loads)",
    "b_listed_shapes": "correct only for the listed key lengths: drops the last key tile for any other",
    "b_no_max": "softmax without the running max and its rescaling",
    "b_half_squares": "RMSNorm with the squares in fp16 range",
}


def load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def main() -> None:
    hostile, control = [], []
    for path in sorted(EVALS.glob("*.json")):
        doc = load(path)
        if doc is None:
            continue
        label = path.stem
        s = doc["summary"]
        if label in ATTACKS:
            hidden = doc.get("hidden_summary") or {}
            hostile.append({"name": label.split("_", 1)[1], "attack": ATTACKS[label], "file": path.name,
                            "exit_code": doc["exit_code"], "geomean_speedup": s.get("geomean_speedup"),
                            "n_correct": s["n_correct"], "n": s["n"],
                            "hidden_correct": hidden.get("n_correct"), "hidden_n": hidden.get("n"),
                            "first_failure": next((f for r in doc["scenarios"] + (doc.get("hidden") or [])
                                                   for f in r["failures"]), None)})
        m = re.fullmatch(r"(rms|fa)_hctl(\d)", label)   # call 2: hidden scenarios and distributions on
        if m:
            for r in doc["scenarios"] + (doc.get("hidden") or []):
                control.append({"task": doc["task"], "run": int(m.group(2)), "file": path.name,
                                "scenario": r["id"], "speedup": r.get("speedup"), "correct": r["correct"],
                                "hidden": r["id"].startswith("hidden-")})
    (RESULTS / "hostile_h200.json").write_text(json.dumps(hostile, indent=1) + "\n")
    (RESULTS / "control_h200.json").write_text(json.dumps(control, indent=1) + "\n")
    listed = [c for c in control if not c["hidden"]]
    for task in sorted({c["task"] for c in listed}):
        rows = [c for c in listed if c["task"] == task]
        sps = [c["speedup"] for c in rows if c["speedup"]]
        runs = sorted({c["run"] for c in rows})
        print(f"{task}: {len(runs)} runs x {len(rows) // max(1, len(runs))} scenarios, "
              f"{sum(c['correct'] for c in rows)}/{len(rows)} correct, speedups {min(sps):.4f}-{max(sps):.4f}")
    for h in hostile:
        print(f"{h['name']:<16} exit {h['exit_code']} {h['n_correct']}/{h['n']} "
              f"gm {h['geomean_speedup']} | {(h['first_failure'] or '')[:100]}")


if __name__ == "__main__":
    main()
