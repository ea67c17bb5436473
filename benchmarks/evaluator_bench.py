"""Evaluator benchmarks, run on the GPU node (numbers go in the issue's closing note).

    python3 benchmarks/evaluator_bench.py [--task flash_attn_fwd] [--out DIR]

1. noise      the baseline evaluated against itself: every bench speedup within [0.99, 1.01];
              two consecutive runs agree within 1% (baseline times and speedups)
2. cost       wall time of a warm-cache bench evaluation against the sum of timed kernel time
3. agreement  on three scenarios, the evaluator's baseline time against triton's do_bench
              (its own L2 flush, median) around the same library call
4. rmsnorm    achieved bandwidth of the RMSNorm baseline against the ~4.3 TB/s copy rate
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def evaluate(*args: str) -> tuple[dict, float]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "socratic", "eval", *args, "--json"], cwd=ROOT,
                          capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"evaluation failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout), wall


def do_bench_baseline(task_dir: Path, scenario_id: str) -> float:
    import torch
    from triton.testing import do_bench

    from socratic.evaluator.build import build
    from socratic.evaluator.worker import params_type
    from socratic.expr import evaluate as expr
    from socratic.taskfile import load_task

    task = load_task(task_dir)
    sc = task.all_scenarios()[scenario_id]
    lib = ctypes.CDLL(str(build(task.baseline, task.build_command).library))
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}
    tensors = {}
    for b in task.buffers:
        if b.role == "workspace":
            tensors[b.name] = torch.empty(int(expr(b.bytes, sc.values)), dtype=torch.uint8, device="cuda")
        else:
            shape = [int(expr(s, sc.values)) for s in b.shape]
            tensors[b.name] = torch.randn(shape, device="cuda").to(dt[b.dtype])
    p = params_type(task)()
    for f in task.fields:
        setattr(p, f.name, tensors[f.buffer].data_ptr() if f.type == "ptr" else
                (float if f.type == "f32" else int)(expr(f.value, sc.values)))
    fn = getattr(lib, task.entry)
    stream = torch.cuda.current_stream()
    return do_bench(lambda: fn(ctypes.byref(p), ctypes.c_void_p(stream.cuda_stream)), warmup=100, rep=500,
                    return_mode="median")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="flash_attn_fwd")
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    args = ap.parse_args()
    task_dir = ROOT / "src" / "socratic" / "kernels" / args.task
    lines: list[str] = []

    evaluate(str(task_dir), "--scenarios", "smoke", "--no-compare")        # warm the build cache
    run1, wall1 = evaluate(str(task_dir), "--no-compare")
    run2, wall2 = evaluate(str(task_dir), "--no-compare")
    full, wall3 = evaluate(str(task_dir))                                   # with comparison implementations
    if args.out:
        for name, doc in (("run1", run1), ("run2", run2), ("with_compare", full)):
            Path(args.out, f"{args.task}_{name}.json").write_text(json.dumps(doc))

    rows1 = {r["id"]: r for r in run1["scenarios"]}
    worst_noise = max(abs(r["speedup"] - 1) for r in run2["scenarios"] + run1["scenarios"])
    base_agree = max(abs(r["baseline_ms"] / rows1[r["id"]]["baseline_ms"] - 1) for r in run2["scenarios"])
    speed_agree = max(abs(r["speedup"] / rows1[r["id"]]["speedup"] - 1) for r in run2["scenarios"])
    kernel_s = sum(r["pairs"] * (r["baseline_ms"] + r["candidate_ms"]) for r in run2["scenarios"]) / 1e3
    lines.append(f"noise      speedups of baseline vs itself: {min(r['speedup'] for r in run2['scenarios']):.4f} .. "
                 f"{max(r['speedup'] for r in run2['scenarios']):.4f} (worst |s-1| over both runs {worst_noise:.4f}; target <= 0.01)")
    lines.append(f"           run-to-run: baseline times within {100 * base_agree:.2f}%, speedups within {100 * speed_agree:.2f}% (target 1%)")
    lines.append(f"cost       warm bench evaluation: {wall2:.1f} s wall ({len(run2['scenarios'])} scenarios, no comparisons), "
                 f"timed kernel time {kernel_s:.2f} s ({100 * kernel_s / wall2:.0f}%); with comparisons {wall3:.1f} s")

    picks = [run2["scenarios"][i]["id"] for i in (0, len(run2["scenarios"]) // 2, -1)]
    rows2 = {r["id"]: r for r in run2["scenarios"]}
    for sid in picks:
        ms = do_bench_baseline(task_dir, sid)
        ours = rows2[sid]["baseline_ms"]
        lines.append(f"agreement  {sid:<34} evaluator {ours:.4f} ms  do_bench {ms:.4f} ms  ({100 * (ours / ms - 1):+.2f}%)")

    norm, _ = evaluate("rmsnorm", "--no-compare")
    for r in norm["scenarios"]:
        lines.append(f"rmsnorm    {r['id']:<14} {r['baseline_ms'] * 1e3:9.1f} us  {r['tbps']:.2f} TB/s "
                     f"({100 * r['tbps'] / 4.3:.0f}% of 4.3 TB/s copy)")
    if full["summary"].get("geomean_vs"):
        lines.append("comparison " + "  ".join(f"baseline vs {n}: {v:.3f}x" for n, v in full["summary"]["geomean_vs"].items()))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
