"""Quick check of an attention candidate on one shape, outside the evaluator (run on the GPU
node; needs torch):

    python benchmarks/hopper_probe_check.py                       # the Hopper probe, d128, GQA 16/4
    python benchmarks/hopper_probe_check.py --candidate my.cu --seqlen-q 2048 --heads-kv 16

Builds the candidate (and the baseline) with the task's own command, calls `attn_fwd` once on
random bf16 inputs, and prints the max error of O and LSE against an fp32 torch reference,
where the worst element is, how many outputs are NaN, and the kernel time. For debugging
layouts: a wrong shared-memory descriptor shows up as large errors in whole column or row
blocks, a hang as no output at all (interrupt it).
"""

from __future__ import annotations

import argparse
import ctypes
import math
import sys
from pathlib import Path

import torch

from socratic.evaluator.build import build
from socratic.resources import resolve_task_dir
from socratic.taskfile import load_task

ROOT = Path(__file__).resolve().parent.parent


class Params(ctypes.Structure):
    _fields_ = [("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_uint64),
                ("batch", ctypes.c_int), ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
                ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("softmax_scale", ctypes.c_float), ("causal", ctypes.c_int)]


def reference(q, k, v, scale: float, causal: bool):
    """fp32 attention with the task's conventions: GQA by head groups, bottom-right causal mask."""
    group = q.shape[2] // k.shape[2]
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))          # b, h, s, d
    kf, vf = kf.repeat_interleave(group, dim=1), vf.repeat_interleave(group, dim=1)
    s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
    if causal:
        sq, sk = q.shape[1], k.shape[1]
        allowed = torch.arange(sk, device=q.device)[None, :] <= torch.arange(sq, device=q.device)[:, None] + sk - sq
        s = s.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)                                        # b, h, s
    o = torch.matmul(torch.softmax(s, dim=-1), vf).transpose(1, 2)          # b, s, h, d
    return o, lse


def run(lib_path: Path, entry: str, q, k, v, args, repeats: int):
    fn = getattr(ctypes.CDLL(str(lib_path)), entry)
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]
    b, sq, hq, d = q.shape
    o = torch.full_like(q, float("nan"))
    lse = torch.full((b, hq, sq), float("nan"), device=q.device)
    ws = torch.empty(64 << 20, dtype=torch.uint8, device=q.device)
    p = Params(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), ws.data_ptr(), ws.numel(),
               b, sq, k.shape[1], hq, k.shape[2], d, 1 / math.sqrt(d), int(args.causal))
    stream = torch.cuda.current_stream()
    rc = fn(ctypes.byref(p), ctypes.c_void_p(stream.cuda_stream))
    torch.cuda.synchronize()
    ms = None
    if rc == 0 and repeats:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn(ctypes.byref(p), ctypes.c_void_p(stream.cuda_stream))
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end) / repeats
    return rc, o, lse, ms


def describe(name: str, got, want) -> str:
    diff = (got.float() - want).abs()
    nan = int(torch.isnan(got).sum())
    diff = torch.nan_to_num(diff, nan=float("inf"))
    worst = torch.unravel_index(torch.argmax(diff), diff.shape)
    where = tuple(int(i) for i in worst)
    return (f"{name}: max err {float(diff.max()):.4g} at {where} (got {float(got[where]):.4g}, "
            f"want {float(want[where]):.4g}), mean err {float(diff[diff.isfinite()].mean()):.3g}, NaN {nan}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidate", type=Path, default=ROOT / "tests" / "candidates" / "hopper_probe.cu")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seqlen-q", type=int, default=1024)
    ap.add_argument("--seqlen-k", type=int, default=1024)
    ap.add_argument("--heads-q", type=int, default=16)
    ap.add_argument("--heads-kv", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--repeats", type=int, default=20, help="timed calls after the checked one (0: none)")
    args = ap.parse_args()

    task = load_task(resolve_task_dir("flash_attn_fwd"))
    torch.manual_seed(0)
    dev = "cuda"
    q = torch.randn(args.batch, args.seqlen_q, args.heads_q, args.head_dim, device=dev, dtype=torch.bfloat16)
    k = torch.randn(args.batch, args.seqlen_k, args.heads_kv, args.head_dim, device=dev, dtype=torch.bfloat16)
    v = torch.randn(args.batch, args.seqlen_k, args.heads_kv, args.head_dim, device=dev, dtype=torch.bfloat16)
    want_o, want_lse = reference(q, k, v, 1 / math.sqrt(args.head_dim), args.causal)
    flops = 4 * args.batch * args.heads_q * args.seqlen_q * args.seqlen_k * args.head_dim / (2 if args.causal else 1)

    for label, source in (("baseline", task.baseline), ("candidate", args.candidate)):
        built = build(source, task.build_command)
        if not built.ok:
            print(f"{label}: build failed\n{built.log[-3000:]}")
            return 1
        rc, o, lse, ms = run(built.library, task.entry, q, k, v, args, args.repeats)
        speed = f", {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOP/s" if ms else ""
        print(f"{label} ({source.name}): returned {rc}{speed}")
        if rc == 0:
            print("  " + describe("O  ", o, want_o))
            print("  " + describe("LSE", lse, want_lse))
    return 0


if __name__ == "__main__":
    sys.exit(main())
