"""Which lead-in makes a timed sample's speed independent of launch order (issue 39)?

RMSNorm's baseline against itself fails on microsecond hidden shapes with `speedup depends on
launch order (1.15-1.18 when the baseline runs first, 0.98-1.00 when the candidate does)`
(H100, sessions 14 and 15; syncing the candidate's context after the input copies did not
change it). This runs the baseline against itself on small RMSNorm draws under variants of
the lead-in before each timed sample, the evaluator otherwise as shipped, and prints each
variant's order ratios. Research only: the variants are patched into the worker process
here (socratic has no switch for them).

  python research/launch_order/probe.py [--space N] [--seed S] [VARIANT ...]

Variants (combine with +): v0 (as shipped), own (before each sample, the other context idle
and one op of the sample's own context run and synced: the same history for both roles,
whatever the order), long (the lead-in spin 1 ms instead of 100 us), wide (the lead-in spin
on every SM, so clocks are up as the sample starts), gap (200 us of the candidate context's own
work after the input copies), l2x2 (each lead-in flushes L2 twice). Every variant prints, per
timed row, each role's median per order to its .err.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("v0", "own", "long", "wide", "own+long", "own+wide")

# run in the worker's process before socratic.evaluator.worker's main
WORKER_PATCH = r'''
import ctypes, runpy, sys
from functools import partial
sys.path.insert(0, {root!r})
import socratic.evaluator.worker as W
import socratic.evaluator.gpu as G
import socratic.evaluator.candidate_context as CC
V = set({variant!r}.split("+"))
orig = W.WorkerRun._enqueue
def _enqueue(self, role, slots, ids, salt, events):
    if events is None or V == {{"v0"}}:
        return orig(self, role, slots, ids, salt, events)
    gpu, cctx = self.gpu, self.cctx
    if "own" in V:
        if role == "base":
            cctx.sync(); gpu.delay(5e-6); gpu.sync()
        else:
            gpu.sync()
            with cctx.current():
                cctx.delay(5e-6); cctx.sync()
    secs = 1e-3 if "long" in V else 100e-6
    saved = gpu.delay, cctx.delay
    if "wide" in V:   # the spin on every SM (4 blocks of 128 each), in each context
        def gpu_wide(seconds=secs):
            G.launch(gpu.stream, G.LaunchConfig(grid=gpu.info.sms * 4, block=128), gpu.kernels["spin"],
                     G.np.int64(int(seconds * 2.0e9)), int(gpu._scratch.handle))
        def cctx_wide(seconds=secs):
            cycles = ctypes.c_int64(int(seconds * 2.0e9)); scratch = ctypes.c_uint64(cctx._scratch)
            args = (ctypes.c_void_p * 2)(ctypes.addressof(cycles), ctypes.addressof(scratch))
            CC.check(CC.driver.cuLaunchKernel(cctx.spin_kernel, gpu.info.sms * 4, 1, 1, 128, 1, 1, 0,
                                              cctx.stream, ctypes.addressof(args), 0))
        gpu.delay, cctx.delay = gpu_wide, cctx_wide
    else:
        gpu.delay = partial(type(gpu).delay, gpu, secs)
        cctx.delay = partial(type(cctx).delay, cctx, secs)
    try:
        return orig(self, role, slots, ids, salt, events)
    finally:
        gpu.delay, cctx.delay = saved
W.WorkerRun._enqueue = _enqueue
verdict = W.speed_verdict
def speed_verdict(base_ms, cand_ms, **kw):   # which role moves with the order: per-order medians
    m = lambda x: float(G.np.median(x)) * 1e3
    print("orders copies %d base-first: base %.3f cand %.3f us; cand-first: base %.3f cand %.3f us" % (
          kw["copies"], m(base_ms[0::2]), m(cand_ms[0::2]), m(base_ms[1::2]), m(cand_ms[1::2])),
          file=sys.stderr, flush=True)
    return verdict(base_ms, cand_ms, **kw)
W.speed_verdict = speed_verdict
if "gap" in V:   # 200 us of the candidate context's own work after the input copies
    copy_inputs = W.WorkerRun._copy_inputs
    def _copy_inputs(self, slots, v):
        copy_inputs(self, slots, v)
        with self.cctx.current():
            self.cctx.delay(200e-6); self.cctx.sync()
    W.WorkerRun._copy_inputs = _copy_inputs
if "l2x2" in V:   # each lead-in flushes L2 twice
    for cls in (G.Gpu, CC.CandidateContext):
        def twice(self, f=cls.flush_l2):
            f(self); f(self)
        cls.flush_l2 = twice
runpy.run_module("socratic.evaluator.worker", run_name="__main__", alter_sys=True)
'''


def run_variant(variant: str, task: Path, space: int, seed: int, out: Path) -> dict:
    """One evaluation of the baseline against itself with the worker patched."""
    import socratic

    root = str(Path(socratic.__file__).resolve().parent.parent)
    boot = WORKER_PATCH.format(root=root, variant=variant)
    path = out / f"{variant}.json"
    cmd = [sys.executable, "-c", f"import sys; sys.argv[0]='socratic'; "
           f"import socratic.evaluator.runner as r; r.isolated_python = lambda *a: "
           f"[sys.executable, '-I', '-c', {boot!r}]; from socratic.cli import main; sys.exit(main())",
           "eval", str(task), "--space", str(space), "--seed", str(seed), "--json"]
    with open(path, "w") as f, open(out / f"{variant}.err", "w") as err:
        rc = subprocess.call(cmd, stdout=f, stderr=err, cwd=tempfile.gettempdir())
    try:
        return {"rc": rc, **json.loads(path.read_text())}
    except ValueError:
        return {"rc": rc, "scenarios": []}


def summary(variant: str, doc: dict) -> str:
    rows = [r for r in doc.get("scenarios", []) if r.get("speedup") is not None]
    order = [r for r in rows if any("launch order" in f for f in r.get("failures") or [])]
    ratios = [r.get("order_ratio") or 1.0 for r in rows]
    sp = [r["speedup"] for r in rows]
    if not rows:
        return f"{variant:10s} exit {doc['rc']}: no timed rows (see {variant}.err)"
    return (f"{variant:10s} exit {doc['rc']}  rows {len(rows):3d}  order failures {len(order):2d}  "
            f"order ratio max {max(ratios):.3f}  speedup {min(sp):.3f}-{max(sp):.3f}"
            + (f"  ({', '.join(r['id'] for r in order[:3])})" if order else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--space", type=int, default=16)
    ap.add_argument("--seed", type=int, default=39039)
    ap.add_argument("--out", type=Path, default=Path("/tmp/launch_order"))
    a = ap.parse_args()
    bad = [v for v in a.variants if not set(v.split("+")) <= {"v0", "own", "long", "wide", "gap", "l2x2"}]
    if bad:
        print(f"probe.py: unknown variant {bad[0]!r} (known: v0, own, long, wide, gap, l2x2, joined by +)", file=sys.stderr)
        return 2
    if any(v != "v0" for v in a.variants):
        # sessions 15-16: r.isolated_python is patched in this process, but the evaluation's
        # judge starts the worker from its own process, so no variant ever ran (the per-order
        # medians printed nothing); rework through a .pth in /tmp/venv before trusting one
        print("probe.py: the variants do not reach the judge's worker (see README.md); only v0 runs", file=sys.stderr)
        return 2
    import socratic

    task = Path(socratic.__file__).resolve().parent / "kernels" / "rmsnorm"
    a.out.mkdir(parents=True, exist_ok=True)
    lines = [summary(v, run_variant(v, task, a.space, a.seed, a.out)) for v in a.variants]
    print("\n".join(lines))
    (a.out / "summary.txt").write_text("\n".join(lines) + "\n")
    if os.environ.get("OUT"):   # a device call brings back at most 8 files: one tarball, the summary
        import shutil
        import tarfile

        with tarfile.open(Path(os.environ["OUT"]) / "launch_order.tgz", "w:gz") as tar:
            tar.add(a.out, arcname="launch_order")
        shutil.copy(a.out / "summary.txt", Path(os.environ["OUT"]) / "launch_order_summary.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
