"""Which lead-in makes a timed sample's speed independent of launch order (issue 39)?

RMSNorm's baseline against itself fails on microsecond hidden shapes with `speedup depends on
launch order (1.15-1.18 when the baseline runs first, 0.98-1.00 when the candidate does)`
(H100, sessions 14 and 15; syncing the candidate's context after the input copies did not
change it). This runs the baseline against itself on small RMSNorm draws under variants of
the lead-in before each timed sample, the evaluator otherwise as shipped, and prints each
variant's order ratios. Research only: the variants are patched into the judge's worker
process by launch_order_patch.py, which a .pth in this interpreter's site-packages imports
while the probe runs (socratic has no switch for them; sessions 15-16 patched this process
instead, which the worker never saw).

  python research/launch_order/probe.py [--space N] [--seed S] [--control] [--repeat R] [VARIANT ...]

Variants (combine with +): v0 (as shipped), own (before each sample, the other context idle
and one op of the sample's own context run and synced: the same history for both roles,
whatever the order), long (the lead-in spin 1 ms instead of 100 us), wide (the lead-in spin
on every SM, so clocks are up as the sample starts), gap (200 us of the candidate context's own
work after the input copies), l2x2 (each lead-in flushes L2 twice), malloc (the judge's
buffers from cuMemAlloc like the candidate context's, not from cuda.core's stream-ordered pool), upload (each replay chain uploaded to the stream it is
launched in, not only to the plan's capture stream), prewarm (each timed sample's own replay run once,
untimed, before its lead-in: the same recent history for both roles), noevents (no event record
nodes between a sample's copies, as before the copy profile: what they cost a copy), early (a
sample's timing-only input sets allocated with the correctness ones, not after them: whether the
first of them, copy 21 of ~33 on an H200, reads apart from the others for where it lies), flush
(an L2 flush between the copies, outside their events, the sample the sum of its copies: no copy
warms the next one's inputs), oneset (every copy of a sample on the first copy's buffers, as
before session 17: whether per-copy buffers cause the per-run error of microsecond rows), pool
(4 input sets per copy, each pair's copies drawn from them at random: whether averaging over
placements removes it), swap (worker.SWAP_PLACES: every other two pairs the kernels on each
other's buffers, as before the candidate's own context), onectx (the candidate's context is the
judge's: both roles in one context, each with its own module instance, stream, events and
allocations; whether the per-run offset belongs to the context), warm (worker.WARM_PAGES: every
page of a sample's buffers read once in its own context before its lead-in, so that both roles
start with their address translations cached), mempool (the
judge's buffers from cuda.core's stream-ordered pool, as before session 24), allmarked (marks
between the copies of every pair, the verdict's too, as before session 24: worker.MARKED_SHARE 1),
candcopy and judgecopy (worker.INPUTS_COPIED_IN "candidate" and "judge": the candidate's inputs
copied on its own stream at the head of its sample, or on the judge's right after their fill). Every variant writes, per
timed row, each role's median per order to OUT/orders.VARIANT.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLAG = "/tmp/launch_order_variant"   # launch_order_patch.FLAG
VARIANTS = ("v0", "own", "long", "wide", "own+long", "own+wide")
KNOWN = ("v0", "own", "long", "wide", "gap", "l2x2", "malloc", "upload", "prewarm", "noevents", "early", "flush",
         "oneset", "pool", "swap", "onectx", "warm", "mempool", "allmarked", "candcopy", "judgecopy")


def install_patch() -> Path:
    """launch_order_patch.py and a .pth importing it into this interpreter's site-packages
    (the judge's worker runs this interpreter with -I); returns the .pth, removed after."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    shutil.copy(HERE / "launch_order_patch.py", site / "launch_order_patch.py")
    pth = site / "zz_launch_order_probe.pth"
    pth.write_text("import launch_order_patch\n")
    return pth


def run_variant(variant: str, task: Path, which: list[str], out: Path, run: int = 1) -> dict:
    """One evaluation of the baseline against itself (or of `--candidate`), the worker patched
    for `variant`; `which`: the eval's scenario and candidate arguments."""
    Path(FLAG).write_text(f"{variant} {out}\n")
    (out / f"applied.{variant}").unlink(missing_ok=True)
    path = out / f"{variant}.{run}.json"
    cmd = [sys.executable, "-m", "socratic", "eval", str(task), *which, "--json"]
    with open(path, "w") as f, open(out / f"{variant}.{run}.err", "w") as err:
        rc = subprocess.call(cmd, stdout=f, stderr=err, cwd=tempfile.gettempdir())
    if not (out / f"applied.{variant}").exists():
        return {"rc": rc, "scenarios": [], "unapplied": True}
    try:
        return {"rc": rc, **json.loads(path.read_text())}
    except ValueError:
        return {"rc": rc, "scenarios": []}


def summary(variant: str, doc: dict) -> str:
    if doc.get("unapplied"):
        return f"{variant:10s} the patch did not reach the worker: no result"
    rows = [r for r in doc.get("scenarios", []) + (doc.get("hidden") or []) if r.get("speedup") is not None]
    order = [r for r in rows if any("launch order" in f for f in r.get("failures") or [])]
    ratios = [r.get("order_ratio") or 1.0 for r in rows]
    sp = [r["speedup"] for r in rows]
    if not rows:
        return f"{variant:10s} exit {doc['rc']}: no timed rows (see {variant}.err)"
    prof = [r for r in rows if r.get("copy_spread") is not None]
    per_copy = [r["baseline_ms"] * 1e3 for r in rows if (r.get("copies") or 1) >= 20]
    off = sum(not 0.99 <= x <= 1.01 for x in sp)
    failed = [f for r in doc.get("scenarios", []) + (doc.get("hidden") or []) for f in r.get("failures") or []
              if "launch order" not in f]
    return (f"{variant:10s} exit {doc['rc']}  rows {len(rows):3d}  outside [0.99, 1.01] {off:2d}  order failures {len(order):2d}  "
            f"order ratio max {max(ratios):.3f}  speedup {min(sp):.3f}-{max(sp):.3f}"
            + (f"  copy first max {max(abs(r['copy_first']) for r in prof):.3f} spread max "
               f"{max(r['copy_spread'] for r in prof):.3f}" if prof else "")
            + (f"  us/copy (>=20 copies) {min(per_copy):.2f}-{max(per_copy):.2f}" if per_copy else "")
            + (f"  ({', '.join(r['id'] for r in order[:3])})" if order else "")
            + (f"  failures {len(failed)}: {failed[0][:160]}" if failed else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--space", type=int, default=16)
    ap.add_argument("--seed", type=int, default=39039)
    ap.add_argument("--control", action="store_true",
                    help="the bench set with 4 hidden scenarios (the issue's control) instead of a space draw")
    ap.add_argument("--repeat", type=int, default=1, help="evaluations per variant")
    ap.add_argument("--scenarios", help="the eval's --scenarios instead (with --hidden 0)")
    ap.add_argument("--candidate", help="a hostile candidate of tests/candidates/round3_hostile.py by name, "
                                        "or a .cu file, instead of the baseline against itself")
    ap.add_argument("--out", type=Path, default=Path("/tmp/launch_order"))
    a = ap.parse_args()
    bad = [v for v in a.variants if not set(v.split("+")) <= set(KNOWN)]
    if bad:
        print(f"probe.py: unknown variant {bad[0]!r} (known: {', '.join(KNOWN)}, joined by +)", file=sys.stderr)
        return 2
    mixed = [v for v in a.variants if "swap" in v.split("+") and {"pool", "oneset"} & set(v.split("+"))]
    if mixed:   # both choose the buffers a pair runs on
        print(f"probe.py: variant {mixed[0]!r}: swap does not combine with pool or oneset", file=sys.stderr)
        return 2
    import socratic

    task = Path(socratic.__file__).resolve().parent / "kernels" / "rmsnorm"
    a.out.mkdir(parents=True, exist_ok=True)
    which = (["--scenarios", a.scenarios, "--hidden", "0"] if a.scenarios else
             ["--scenarios", "bench", "--hidden", "4"] if a.control else ["--space", str(a.space), "--seed", str(a.seed)])
    if a.candidate:
        cand = Path(a.candidate)
        if not cand.is_file():   # a name of the round-3 hostile set (from the repository root)
            sys.path.insert(0, str(HERE.parents[1]))
            from tests.candidates import round3_hostile
            if a.candidate not in round3_hostile.SOURCES:
                print(f"probe.py: --candidate {a.candidate}: no such file or round-3 hostile candidate", file=sys.stderr)
                return 2
            task = Path(round3_hostile.task_of(a.candidate))
            cand = a.out / f"{a.candidate}.cu"
            cand.write_text(round3_hostile.source(a.candidate))
        which += ["--candidate", str(cand.resolve()), "--no-compare"]
    pth = install_patch()
    try:
        lines = [summary(v if a.repeat == 1 else f"{v}#{r}", run_variant(v, task, which, a.out, r))
                 for v in a.variants for r in range(1, a.repeat + 1)]
    finally:
        pth.unlink()
        (pth.parent / "launch_order_patch.py").unlink(missing_ok=True)
        Path(FLAG).unlink(missing_ok=True)
    print("\n".join(lines))
    (a.out / "summary.txt").write_text("\n".join(lines) + "\n")
    if os.environ.get("OUT"):   # a device call brings back at most 8 files: one tarball, the summary
        import tarfile

        with tarfile.open(Path(os.environ["OUT"]) / "launch_order.tgz", "w:gz") as tar:
            tar.add(a.out, arcname="launch_order")
        shutil.copy(a.out / "summary.txt", Path(os.environ["OUT"]) / "launch_order_summary.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
