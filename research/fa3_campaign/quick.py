"""Builds here, and single launches on the GPU node for Nsight Compute.

It times nothing: `socratic eval` is the judge. (A `time` verb that ranked variants in one
process was tried in call s3c2 and dropped: FA3's Python call is host-bound when launched back
to back, and even between candidates its ranking disagreed with the evaluator's.)

  quick.py build NAME...                      here: cands/NAME.cu -> cands/NAME.so (the evaluator's build)
  quick.py once NAME|fa3 SCEN [REPS]          on the GPU: REPS launches (for ncu -k / --launch-skip)
  quick.py same A B SCEN... [--reps N]        on the GPU: A's and B's outputs bit for bit, N fresh
                                              input sets per scenario (every third x8, the workspace
                                              scrambled each time), B launched twice per set

SCEN is a scenario id as the task writes it: d128-s4k-b4-h16-causal, d128-s2k-b4-h32-causal-gqa4,
d128-q512-k8k-b4-h32-causal-gqa4, d128-s1000-b16-h16-full.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


class Params(ctypes.Structure):   # struct AttnFwdParams (kernels/flash_attn_fwd/task.toml)
    _fields_ = [("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_ulonglong),
                ("batch", ctypes.c_int), ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
                ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("softmax_scale", ctypes.c_float), ("causal", ctypes.c_int)]


def _n(text: str) -> int:
    return int(text[:-1]) * 1024 if text.endswith("k") else int(text)


def scenario(sid: str) -> dict:
    m = re.fullmatch(r"d(\d+)-(?:s(\w+)|q(\w+)-k(\w+))-b(\d+)-h(\d+)-(full|causal)(?:-gqa(\d+))?", sid)
    if not m:
        sys.exit(f"quick.py: {sid!r} is not a scenario id like d128-s4k-b4-h16-causal")
    hd, s, sq, sk, b, h, mask, g = m.groups()
    return dict(head_dim=int(hd), seqlen_q=_n(s or sq), seqlen_k=_n(s or sk), batch=int(b), heads_q=int(h),
                heads_kv=int(h) // int(g or 1), causal=int(mask == "causal"), softmax_scale=int(hd) ** -0.5)


def build(names: list[str]) -> None:
    """The evaluator's own build (`socratic eval --check-only`: the task's command, the ban
    check), two at a time; its cached library is copied to cands/NAME.so. Prints spills."""
    import hashlib
    import json

    from socratic.evaluator.build import cache_root
    for name in names:
        if not (HERE / "cands" / f"{name}.cu").is_file():
            sys.exit(f"quick.py: {HERE / 'cands' / name}.cu: no such candidate (make.py {name} ... writes it)")
    for i in range(0, len(names), 2):
        procs = [(n, subprocess.Popen([sys.executable, "-m", "socratic", "eval", "flash_attn_fwd", "--candidate",
                                       str(HERE / "cands" / f"{n}.cu"), "--check-only", "--json"],
                                      stdout=subprocess.PIPE, text=True)) for n in names[i:i + 2]]
        for name, proc in procs:
            out = json.loads(proc.communicate()[0] or "{}")
            sha = hashlib.sha256((HERE / "cands" / f"{name}.cu").read_bytes()).hexdigest()
            lib = next((d / "lib.so" for d in cache_root().iterdir() if (d / "candidate.cu").is_file() and
                        hashlib.sha256((d / "candidate.cu").read_bytes()).hexdigest() == sha), None)
            if lib is None:
                print(name, "FAILED", (out.get("build") or {}).get("log", "")[-400:])
                continue
            (HERE / "cands" / f"{name}.so").write_bytes(lib.read_bytes())
            spills = [(r["kernel"].split("(")[0], r["spill_stores"]) for r in out["build"]["resources"] if r["spill_stores"]]
            print(name, "built; spills:", spills or "none")


def runner(name: str, v: dict, torch):
    """A no-argument callable launching `name` (a cands/ library, or fa3) on scenario v."""
    from socratic.kernels.flash_attn_fwd.compare import _inputs, fa3
    if name == "fa3":
        return fa3(v, torch)
    q, k, vv = _inputs(v, torch)
    o = torch.empty_like(q)
    lse = torch.empty(v["batch"], v["heads_q"], v["seqlen_q"], device="cuda", dtype=torch.float32)
    ws_bytes = 2 * v["batch"] * v["heads_q"] * v["seqlen_q"] * (v["head_dim"] + 1) * 4 + (1 << 20)   # task.toml's
    ws = torch.zeros(ws_bytes, device="cuda", dtype=torch.uint8)
    so = HERE / "cands" / f"{name}.so"
    if not so.is_file():
        sys.exit(f"quick.py: {so}: not built (quick.py build {name})")
    lib = ctypes.CDLL(str(so))
    lib.attn_fwd.argtypes = [ctypes.POINTER(Params), ctypes.c_void_p]
    p = Params(q.data_ptr(), k.data_ptr(), vv.data_ptr(), o.data_ptr(), lse.data_ptr(), ws.data_ptr(), ws.numel(),
               v["batch"], v["seqlen_q"], v["seqlen_k"], v["heads_q"], v["heads_kv"], v["head_dim"],
               v["softmax_scale"], v["causal"])
    keep = (q, k, vv, o, lse, ws, lib, p)

    def run():
        rc = lib.attn_fwd(ctypes.byref(p), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc:
            raise RuntimeError(f"{name}: attn_fwd returned {rc}")
        return keep
    return run


def once(name: str, sid: str, reps: int) -> None:
    import torch
    fn = runner(name, scenario(sid), torch)
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()


def _differ(x, y) -> bool:
    """Whether two tensors of one dtype differ in any bit (NaNs alike compare equal)."""
    import torch
    as_int = torch.int16 if x.element_size() == 2 else torch.int32
    return bool((x.view(as_int) != y.view(as_int)).any())


def same(a: str, b: str, sids: list[str], reps: int) -> bool:
    """Whether B computes A's outputs bit for bit (v102's packed tiles do each row's arithmetic
    as v101's unpacked ones) and the same on every launch: a race shows as a set whose outputs
    differ, or as B's two launches differing."""
    import torch
    ok = True
    print(f"{'scenario':44} {'sets':>5} {'differ':>6} {'o max':>9} {'lse max':>9} {'B vs B':>6}")
    for sid in sids:
        v = scenario(sid)
        run_a, run_b = runner(a, v, torch), runner(b, v, torch)
        q, k, vv, oa, la, wa = run_a()[:6]
        ob, lb, wb = run_b()[3:6]
        differ = unstable = 0
        o_max = l_max = 0.0
        for r in range(reps):
            scale = 8.0 if r % 3 == 1 else 1.0
            for t in (q, k, vv):
                t.normal_().mul_(scale)
            outs = []
            for run, o, lse, ws in ((run_a, oa, la, wa), (run_b, ob, lb, wb), (run_b, ob, lb, wb)):
                o.fill_(float("nan"))
                lse.fill_(float("nan"))
                ws.random_(0, 256)
                run()
                outs.append((o.clone(), lse.clone()))
            (o1, l1), (o2, l2), (o3, l3) = outs
            if _differ(o1, o2) or _differ(l1, l2):
                differ += 1
                o_max = max(o_max, (o1.float() - o2.float()).abs().nan_to_num(float("inf")).max().item())
                fin = torch.isfinite(l1) & torch.isfinite(l2)
                l_max = max(l_max, (l1 - l2)[fin].abs().max().item() if fin.any() else 0.0)
            unstable += _differ(o2, o3) or _differ(l2, l3)
        ok &= differ == 0 and unstable == 0
        print(f"{sid:44} {reps:5} {differ:6} {o_max:9.3g} {l_max:9.3g} {unstable:6}")
    return ok


if __name__ == "__main__":
    verb, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if verb == "build" and rest:
        build(rest)
    elif verb == "once" and len(rest) in (2, 3):
        once(rest[0], rest[1], int(rest[2]) if len(rest) == 3 else 3)
    elif verb == "same" and len(rest) >= 3:
        n = int(rest[rest.index("--reps") + 1]) if "--reps" in rest else 20
        sids = [x for i, x in enumerate(rest[2:]) if x != "--reps" and rest[1 + i] != "--reps"]
        sys.exit(0 if same(rest[0], rest[1], sids, n) else 1)
    else:
        sys.exit(__doc__)
