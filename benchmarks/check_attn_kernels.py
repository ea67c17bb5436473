#!/usr/bin/env python3
"""Self-diagnosing GPU check of kernels/flash_attn_fwd/{baseline,reference}.cu (run on an H200).

    python benchmarks/check_attn_kernels.py            # full check + FA3-grid timing (< 3 min)
    python benchmarks/check_attn_kernels.py --quick    # fewer shapes, fewer timing points
    options: --no-bench, --only REGEX (case ids), --seed N, --nvcc PATH

What it does
  build   both files with the task's nvcc command (sm_90a) into a temp dir; prints the
          ptxas registers / spills / shared memory of every kernel instantiation.
  args    both entry points reject bad input (head_dim 80, heads_q % heads_kv != 0, ...).
  (a)     reference (fp32) vs float64 torch math: O max abs error must be <= 5e-5, LSE too;
          rows with no allowed key must be exactly O = 0, LSE = -inf.
  (c)     reference poison check: the reference is called with all units but one or two (and a
          sparse subset on some cases); unlisted units' O / LSE must keep their NaN poison
          bit-for-bit, listed ones must be fully written.
  (b)     baseline (bf16) vs float64: O max abs error <= max(2 x torch SDPA bf16 error, 1e-3,
          half a bf16 ulp of the largest |O|) (SDPA measured on the same inputs, bottom-right
          causal via an explicit mask when sq != sk; rows with no allowed key excluded), mean error
          <= 2 x SDPA mean + 1e-4; LSE max abs error <= 1e-3 (the baseline's LSE comes from fp32
          scores, typically ~1e-6); every output element written (NaN-poisoned before the
          call); fully masked rows O = 0 and LSE = -inf.
  big     on every timed FA3-grid shape: baseline vs the fp32 reference on 2 units, with the
          same rule against SDPA-flash's error on those units.
  bench   baseline TFLOP/s on the FA3 grid (seqlen 1k..16k, batch = 16384 / seqlen, hidden
          2048 -> 32/16/8 heads at d 64/128/256, causal and not) next to torch SDPA flash and
          cuDNN measured in the same run; reference TFLOP/s on the largest shapes.
          FLOPs = 4*b*h*sq*sk*d, halved for causal. Median of per-call CUDA-event times.
The first failure is printed in detail; the compact tables come last; exit 1 on any failure.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"
BUILD_CMD = "{nvcc} -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC -Xptxas -v {src} -o {out}"

DEV = "cuda"  # tests of this script may point it elsewhere
REF_TOL_O = 5e-5
REF_TOL_LSE = 5e-5
BASE_FLOOR_O = 1e-3
BASE_TOL_LSE = 1e-3


class AttnFwdParams(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_ulonglong),
        ("batch", ctypes.c_int), ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
        ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int), ("head_dim", ctypes.c_int),
        ("softmax_scale", ctypes.c_float), ("causal", ctypes.c_int),
    ]


def sync():
    import torch
    if DEV == "cuda":
        torch.cuda.synchronize()


def log(*a):
    print(*a, flush=True)


# ------------------------------------------------------------------------------------------
# build
# ------------------------------------------------------------------------------------------
def find_nvcc(explicit: str | None) -> str:
    cands = [explicit, os.environ.get("NVCC")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "bin", "nvcc"))
    cands += [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]
    cands += sorted(glob.glob("/usr/local/cuda-*/bin/nvcc"), reverse=True)
    for sp in sys.path:
        cands += glob.glob(os.path.join(sp, "nvidia", "*", "bin", "nvcc"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise SystemExit("FATAL: nvcc not found (set NVCC=/path/to/nvcc or pass --nvcc)")


def parse_ptxas(log_text: str) -> list[dict]:
    rows, cur = [], None
    for line in log_text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            name = m.group(1)
            d = re.search(r"ILi(\d+)E", name)
            cur = {"kernel": name, "d": int(d.group(1)) if d else None, "regs": None, "spill_st": 0,
                   "spill_ld": 0, "stack": 0, "smem": 0}
            rows.append(cur)
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            if s:
                cur["smem"] = int(s.group(1))
    return rows


def build(nvcc: str, tmp: Path) -> dict:
    procs, out = {}, {}
    for name in ("baseline", "reference"):
        src, so = KDIR / f"{name}.cu", tmp / f"{name}.so"
        cmd = BUILD_CMD.format(nvcc=nvcc, src=str(src), out=str(so))
        procs[name] = (subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, cwd=tmp), cmd, so)
    for name, (p, cmd, so) in procs.items():
        text, _ = p.communicate()
        if p.returncode != 0:
            log(f"FATAL: build of {name}.cu failed:\n$ {cmd}\n{text}")
            raise SystemExit(1)
        out[name] = (so, parse_ptxas(text), text)
    return out


def print_ptxas(name: str, rows: list[dict]):
    for r in sorted(rows, key=lambda r: (r["d"] or 0)):
        spill = r["spill_st"] + r["spill_ld"]
        flag = "  <-- SPILLS" if spill else ""
        log(f"  {name:9s} d={r['d']!s:>4}: {r['regs']} regs, spill st/ld {r['spill_st']}/{r['spill_ld']} B, "
            f"stack {r['stack']} B, static smem {r['smem']} B{flag}")


# ------------------------------------------------------------------------------------------
# kernels through ctypes
# ------------------------------------------------------------------------------------------
class Kernels:
    def __init__(self, base_so: Path, ref_so: Path):
        self.base = ctypes.CDLL(str(base_so))
        self.ref = ctypes.CDLL(str(ref_so))
        self.base.attn_fwd.argtypes = [ctypes.POINTER(AttnFwdParams), ctypes.c_void_p]
        self.base.attn_fwd.restype = ctypes.c_int
        self.ref.attn_fwd_ref.argtypes = [ctypes.POINTER(AttnFwdParams), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        self.ref.attn_fwd_ref.restype = ctypes.c_int

    @staticmethod
    def params(q, k, v, o, lse, causal, scale, head_dim=None, heads_kv=None):
        b, sq, hq, d = q.shape
        _, sk, hkv, _ = k.shape
        p = AttnFwdParams()
        p.q, p.k, p.v = q.data_ptr(), k.data_ptr(), v.data_ptr()
        p.o, p.lse = o.data_ptr(), lse.data_ptr()
        p.workspace, p.workspace_bytes = None, 0
        p.batch, p.seqlen_q, p.seqlen_k = b, sq, sk
        p.heads_q = hq
        p.heads_kv = hkv if heads_kv is None else heads_kv
        p.head_dim = d if head_dim is None else head_dim
        p.softmax_scale = scale
        p.causal = int(bool(causal))
        return p

    def run_base(self, p, stream=None):
        import torch
        s = torch.cuda.current_stream() if stream is None else stream
        return self.base.attn_fwd(ctypes.byref(p), ctypes.c_void_p(s.cuda_stream))

    def run_ref(self, p, units_dev, n_units, stream=None):
        import torch
        s = torch.cuda.current_stream() if stream is None else stream
        ptr = units_dev.data_ptr() if units_dev is not None else None
        return self.ref.attn_fwd_ref(ctypes.byref(p), ctypes.c_void_p(ptr), n_units, ctypes.c_void_p(s.cuda_stream))


# ------------------------------------------------------------------------------------------
# math
# ------------------------------------------------------------------------------------------
def allowed_mask(sq, sk, causal, device):
    import torch
    j = torch.arange(sk, device=device)[None, :]
    i = torch.arange(sq, device=device)[:, None]
    m = j < sk
    if causal:
        m = j <= i + (sk - sq)
    return m.expand(sq, sk)


def ref64(q, k, v, scale, causal):
    """float64 attention on bf16 inputs. Returns O [b,sq,hq,d] f64, LSE [b,hq,sq] f64, valid-row mask [sq]."""
    import torch
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    g = hq // hkv
    mask = allowed_mask(sq, sk, causal, q.device)
    valid = mask.any(dim=1)
    O = torch.empty(b, sq, hq, d, dtype=torch.float64, device=q.device)
    L = torch.empty(b, hq, sq, dtype=torch.float64, device=q.device)
    for bi in range(b):
        qf = q[bi].double().transpose(0, 1)                                   # hq, sq, d
        kf = k[bi].double().transpose(0, 1).repeat_interleave(g, dim=0)       # hq, sk, d
        vf = v[bi].double().transpose(0, 1).repeat_interleave(g, dim=0)
        s = torch.matmul(qf, kf.transpose(1, 2)) * scale
        s = s.masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(s, dim=-1)                                      # -inf on empty rows
        pm = torch.exp(s - torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)[..., None])
        pm = torch.where(mask, pm, torch.zeros_like(pm))
        O[bi] = torch.matmul(pm, vf).transpose(0, 1)
        L[bi] = lse
        del s, pm
    return O, L, valid


def sdpa_bf16(q, k, v, scale, causal, backend=None):
    """torch SDPA in bf16 (bottom-right causal via an explicit mask when sq != sk)."""
    import torch.nn.functional as F
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    g = hq // hkv
    qt = q.transpose(1, 2)
    kt = k.transpose(1, 2)
    vt = v.transpose(1, 2)
    if g > 1:
        kt = kt.repeat_interleave(g, dim=1)
        vt = vt.repeat_interleave(g, dim=1)
    kw = {}
    if causal and sq == sk:
        kw["is_causal"] = True
    elif causal:
        kw["attn_mask"] = allowed_mask(sq, sk, True, q.device)
    if backend is None:
        o = F.scaled_dot_product_attention(qt, kt, vt, scale=scale, **kw)
    else:
        from torch.nn.attention import sdpa_kernel
        with sdpa_kernel([backend]):
            o = F.scaled_dot_product_attention(qt, kt, vt, scale=scale, **kw)
    return o.transpose(1, 2)


# ------------------------------------------------------------------------------------------
# cases
# ------------------------------------------------------------------------------------------
HEAD_DIMS = (64, 96, 128, 192, 256)
GQA = ((4, 4), (8, 2), (8, 1))  # (heads_q, heads_kv): ratios 1, 4, 8


def make_cases(quick: bool):
    square = [1, 17, 127, 129, 1000, 2048]
    rect = [(17, 129), (129, 17), (127, 1000), (1000, 127), (1, 1000), (1000, 1), (129, 2048), (2048, 129),
            (1000, 2048), (2048, 1000)]
    if quick:
        square = [1, 17, 129, 1000]
        rect = [(17, 129), (129, 17), (1000, 127), (127, 1000), (1, 1000)]
    pairs = [(s, s) for s in square] + rect
    cases = []
    for di, d in enumerate(HEAD_DIMS):
        for causal in (False, True):
            for pi, (sq, sk) in enumerate(pairs):
                n = pi + di + (3 if causal else 0)
                hq, hkv = GQA[n % 3]
                b = (1, 3)[(n // 3) % 2]
                cid = f"d{d}-q{sq}-k{sk}-b{b}-h{hq}/{hkv}-{'causal' if causal else 'full'}"
                cases.append(dict(id=cid, d=d, sq=sq, sk=sk, b=b, hq=hq, hkv=hkv, causal=causal))
    return cases


# ------------------------------------------------------------------------------------------
# diagnostics
# ------------------------------------------------------------------------------------------
def describe_o_error(name, got, exp, valid, tol, sq, sk, causal):
    """Human detail of where an O tensor [b,sq,h,d] differs from the expected one."""
    import torch
    lines = []
    g = got.double()
    nan = torch.isnan(g)
    err = (g - exp).abs()
    err = torch.where(nan, torch.full_like(err, float("inf")), err)
    bad = err > tol
    lines.append(f"    {name}: max err {err.max().item():.3e} (tol {tol:.3e}), {int(bad.sum())} / {bad.numel()} elements bad, "
                 f"{int(nan.sum())} NaN, {int(torch.isinf(g).sum())} inf")
    if bad.any():
        idx = bad.nonzero()
        rows = torch.unique(idx[:, 1])
        heads = torch.unique(idx[:, 2])
        cols = torch.unique(idx[:, 3])
        batches = torch.unique(idx[:, 0])
        flat = int(torch.argmax(err).item())
        b_, i_, h_, d_ = [int(x) for x in torch.unravel_index(torch.tensor(flat), err.shape)]
        lines.append(f"    worst at [b={b_}, q={i_}, h={h_}, d={d_}]: got {g[b_, i_, h_, d_].item():.6g}, "
                     f"expected {exp[b_, i_, h_, d_].item():.6g}")
        def rng(t, k=12):
            t = t.tolist()
            return (str(t) if len(t) <= k else f"{t[:k//2]} ... {t[-k//2:]} ({len(t)} values)")
        lines.append(f"    bad query rows: {rng(rows)}")
        lines.append(f"    bad query-row tiles of 64: {rng(torch.unique(rows // 64))}; of {(sq + 63) // 64} tiles")
        lines.append(f"    bad batches: {rng(batches)}, heads: {rng(heads)}, head-dim columns: {rng(cols, 16)}")
        allowed_keys = [(min(sk, i + sk - sq + 1) if causal else sk) for i in rows[:4].tolist()]
        lines.append(f"    allowed keys of the first bad rows {rows[:4].tolist()}: {allowed_keys} (seqlen_k={sk})")
        if (~valid).any():
            lines.append(f"    rows with no allowed key: {int((~valid).sum())} (first {int((~valid).nonzero()[0])})")
    return lines


def describe_lse_error(name, got, exp, tol):
    import torch
    lines = []
    g = got.double()
    ninf_exp = torch.isneginf(exp)
    ninf_got = torch.isneginf(g)
    mism = ninf_exp != ninf_got
    fin = ~ninf_exp & ~ninf_got
    err = torch.where(fin, (g - exp).abs(), torch.zeros_like(g))
    err = torch.where(torch.isnan(g), torch.full_like(err, float("inf")), err)
    lines.append(f"    {name}: max err {err.max().item():.3e} (tol {tol:.3e}), {int((err > tol).sum())} bad, "
                 f"{int(torch.isnan(g).sum())} NaN, -inf mismatches {int(mism.sum())} "
                 f"(expected -inf: {int(ninf_exp.sum())}, got -inf: {int(ninf_got.sum())})")
    bad = (err > tol) | mism
    if bad.any():
        idx = bad.nonzero()
        b_, h_, i_ = [int(x) for x in idx[0]]
        lines.append(f"    first bad [b={b_}, h={h_}, q={i_}]: got {g[b_, h_, i_].item():.6g}, expected {exp[b_, h_, i_].item():.6g}")
        rows = torch.unique(idx[:, 2]).tolist()
        lines.append(f"    bad query rows: {rows[:8]}{' ...' if len(rows) > 8 else ''} ({len(rows)} rows)")
    return lines


def lse_err(got, exp):
    import torch
    g = got.double()
    if torch.isnan(g).any():
        return float("inf")
    mism = torch.isneginf(g) != torch.isneginf(exp)
    if mism.any():
        return float("inf")
    fin = ~torch.isneginf(exp)
    if not fin.any():
        return 0.0
    return (g[fin] - exp[fin]).abs().max().item()


# ------------------------------------------------------------------------------------------
# checks
# ------------------------------------------------------------------------------------------
def check_case(K, c, gen, results, failures):
    import torch
    dev = DEV
    b, sq, sk, hq, hkv, d, causal = c["b"], c["sq"], c["sk"], c["hq"], c["hkv"], c["d"], c["causal"]
    scale = 1.0 / math.sqrt(d)
    q = torch.randn(b, sq, hq, d, generator=gen, device=dev).to(torch.bfloat16)
    k = torch.randn(b, sk, hkv, d, generator=gen, device=dev).to(torch.bfloat16)
    v = torch.randn(b, sk, hkv, d, generator=gen, device=dev).to(torch.bfloat16)
    O64, L64, valid = ref64(q, k, v, scale, causal)
    row = {"id": c["id"]}
    detail = []
    ok = True

    # ---- reference: all units but one or two (poison check on those), sometimes a sparse subset ----
    n = b * hq
    crc = zlib.crc32(c["id"].encode())
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(crc)).tolist()
    if crc % 3 == 0 and n >= 4:
        listed = sorted(perm[: n // 3])
    else:
        listed = sorted(perm[: n - (2 if n > 4 else 1)])
    units = torch.tensor(listed, dtype=torch.int32, device=dev)
    poison = torch.tensor([0x7fc01234], dtype=torch.int32)
    o_ref = torch.full((b, sq, hq, d), 0, dtype=torch.float32, device=dev)
    l_ref = torch.full((b, hq, sq), 0, dtype=torch.float32, device=dev)
    o_ref.view(torch.int32).fill_(int(poison))
    l_ref.view(torch.int32).fill_(int(poison))
    rc = K.run_ref(K.params(q, k, v, o_ref, l_ref, causal, scale), units, len(listed))
    sync()
    if rc != 0:
        ok = False
        detail.append(f"    reference returned {rc}")
    lmask = torch.zeros(b, hq, dtype=torch.bool, device=dev)
    lmask.view(-1)[units.long()] = True
    o_listed = lmask[:, None, :].expand(b, sq, hq)  # [b, sq, hq]: element belongs to a listed unit
    ob = o_ref.view(torch.int32)
    lb = l_ref.view(torch.int32)
    untouched_o = (ob[~o_listed] == int(poison)).all().item()
    untouched_l = (lb[~lmask] == int(poison)).all().item()
    written_o = (ob[o_listed] != int(poison)).all().item()
    written_l = (lb[lmask] != int(poison)).all().item()
    poison_ok = untouched_o and untouched_l and written_o and written_l
    row["ref_poison"] = poison_ok
    if not poison_ok:
        ok = False
        detail.append(f"    reference poison check: unlisted O untouched={untouched_o}, unlisted LSE untouched={untouched_l}, "
                      f"listed O fully written={written_o}, listed LSE fully written={written_l} "
                      f"(listed {len(listed)} of {n} units)")
    # errors on listed units
    sel_o = o_listed[..., None].expand_as(O64)
    e_ref_o = (o_ref.double()[sel_o] - O64[sel_o]).abs().max().item() if rc == 0 else float("inf")
    if math.isnan(e_ref_o):
        e_ref_o = float("inf")
    e_ref_l = lse_err(l_ref[lmask], L64[lmask]) if rc == 0 else float("inf")
    empty_ok_ref = True
    if (~valid).any() and rc == 0:
        inv = (~valid)[None, :, None].expand(b, sq, hq) & o_listed
        empty_ok_ref = bool((o_ref[inv] == 0).all().item())
    row["ref_o"], row["ref_lse"] = e_ref_o, e_ref_l
    if not (e_ref_o <= REF_TOL_O and e_ref_l <= REF_TOL_LSE and empty_ok_ref):
        ok = False
        o_masked = torch.where(sel_o, o_ref.double(), O64)
        l_masked = torch.where(lmask[..., None].expand_as(L64), l_ref.double(), L64)
        detail += describe_o_error("reference O (listed units)", o_masked, O64, valid, REF_TOL_O, sq, sk, causal)
        detail += describe_lse_error("reference LSE (listed units)", l_masked, L64, REF_TOL_LSE)
        if not empty_ok_ref:
            detail.append("    reference: rows with no allowed key are not O = 0")

    # ---- SDPA bf16 error on the same inputs (rows with an allowed key only) ----
    try:
        o_sd = sdpa_bf16(q, k, v, scale, causal).double()
        vr = valid[None, :, None, None].expand_as(O64)
        e_sd = (o_sd[vr] - O64[vr]).abs()
        e_sd_max = e_sd.max().item() if e_sd.numel() else 0.0
        e_sd_mean = e_sd.mean().item() if e_sd.numel() else 0.0
    except Exception as ex:  # pragma: no cover
        detail.append(f"    (SDPA unavailable for this shape: {ex!r}; using the floor only)")
        e_sd_max, e_sd_mean = 0.0, 0.0
    row["sdpa_o"] = e_sd_max

    # ---- baseline ----
    o_b = torch.full((b, sq, hq, d), float("nan"), dtype=torch.bfloat16, device=dev)
    l_b = torch.full((b, hq, sq), float("nan"), dtype=torch.float32, device=dev)
    rc = K.run_base(K.params(q, k, v, o_b, l_b, causal, scale))
    sync()
    # floor: 1e-3, or half a bf16 ulp of the largest output (the unavoidable output rounding)
    tol_o = max(2 * e_sd_max, BASE_FLOOR_O, 2.0 ** -8 * O64.abs().max().item())
    tol_mean = 2 * e_sd_mean + 1e-4
    if rc != 0:
        ok = False
        detail.append(f"    baseline returned {rc}")
        row["base_o"] = row["base_lse"] = float("inf")
    else:
        nan_o, nan_l = int(torch.isnan(o_b).sum()), int(torch.isnan(l_b).sum())
        e = (o_b.double() - O64).abs()
        e_max = float("inf") if nan_o else e.max().item()
        e_mean = float("inf") if nan_o else e[valid[None, :, None, None].expand_as(e)].mean().item() if valid.any() else 0.0
        e_l = lse_err(l_b, L64)
        empty_ok = True
        if (~valid).any():
            empty_ok = bool((o_b[:, ~valid] == 0).all().item())
        row["base_o"], row["base_mean"], row["base_lse"], row["tol_o"] = e_max, e_mean, e_l, tol_o
        if nan_o or nan_l:
            detail.append(f"    baseline left {nan_o} O and {nan_l} LSE elements NaN-poisoned (unwritten or NaN)")
        if not (e_max <= tol_o and e_mean <= tol_mean and e_l <= BASE_TOL_LSE and empty_ok and not nan_o and not nan_l):
            ok = False
            detail.append(f"    baseline O mean err {e_mean:.3e} (tol {tol_mean:.3e}); SDPA bf16 max/mean {e_sd_max:.3e}/{e_sd_mean:.3e}")
            detail += describe_o_error("baseline O", o_b, O64, valid, tol_o, sq, sk, causal)
            detail += describe_lse_error("baseline LSE", l_b, L64, BASE_TOL_LSE)
            if not empty_ok:
                detail.append("    baseline: rows with no allowed key are not O = 0")
    row["ok"] = ok
    results.append(row)
    if not ok:
        failures.append((c, detail))
    return ok


def check_args(K):
    """Both entry points must reject unsupported input with a non-zero return (and not launch)."""
    import torch
    q = torch.zeros(1, 8, 4, 128, dtype=torch.bfloat16, device="cuda")
    k = torch.zeros(1, 8, 4, 128, dtype=torch.bfloat16, device="cuda")
    o = torch.zeros(1, 8, 4, 128, dtype=torch.bfloat16, device="cuda")
    of = torch.zeros(1, 8, 4, 128, dtype=torch.float32, device="cuda")
    l = torch.zeros(1, 4, 8, dtype=torch.float32, device="cuda")
    units = torch.arange(4, dtype=torch.int32, device="cuda")
    bad = []
    for what, kw in (("head_dim=80", dict(head_dim=80)), ("head_dim=512", dict(head_dim=512)),
                     ("heads_q % heads_kv != 0", dict(heads_kv=3))):
        rb = K.run_base(K.params(q, k, k, o, l, False, 0.1, **kw))
        rr = K.run_ref(K.params(q, k, k, of, l, False, 0.1, **kw), units, 4)
        if rb == 0:
            bad.append(f"baseline accepted {what}")
        if rr == 0:
            bad.append(f"reference accepted {what}")
    p = K.params(q, k, k, o, l, False, 0.1)
    p.seqlen_k = 0
    if K.run_base(p) == 0:
        bad.append("baseline accepted seqlen_k=0")
    torch.cuda.synchronize()
    return bad


def check_stream(K, gen):
    """The baseline and reference must run on the given (non-default) stream."""
    import torch
    b, s, h, d = 2, 300, 4, 128
    q = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
    k = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
    v = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
    o = torch.empty_like(q)
    l = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
    of = torch.empty(b, s, h, d, dtype=torch.float32, device="cuda")
    lf = torch.empty_like(l)
    units = torch.arange(b * h, dtype=torch.int32, device="cuda")
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        rb = K.run_base(K.params(q, k, v, o, l, True, 0.125), stream=st)
        rr = K.run_ref(K.params(q, k, v, of, lf, True, 0.125), units, b * h, stream=st)
    st.synchronize()
    if rb or rr:
        return [f"side-stream calls returned baseline {rb}, reference {rr}"]
    e = (o.float() - of).abs().max().item()
    return [] if e < 2e-2 else [f"side-stream baseline vs reference O max err {e:.3e}"]


# ------------------------------------------------------------------------------------------
# timing
# ------------------------------------------------------------------------------------------
def time_fn(fn, target_ms=120.0, max_reps=60):
    import torch
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    est = (time.perf_counter() - t0) * 1e3
    reps = int(max(5, min(max_reps, target_ms / max(est, 1e-3))))
    for _ in range(2):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    ts = sorted(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))
    return ts[len(ts) // 2]


def bench(K, quick, gen, failures, big_rows):
    import torch
    from torch.nn.attention import SDPBackend
    seqs = [1024, 2048, 4096, 8192, 16384] if not quick else [1024, 4096, 16384]
    rows = []
    for d, h in ((64, 32), (128, 16), (256, 8)):
        for causal in (False, True):
            for s in seqs:
                b = 16384 // s
                scale = 1.0 / math.sqrt(d)
                q = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
                k = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
                v = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
                o = torch.empty_like(q)
                l = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
                p = K.params(q, k, v, o, l, causal, scale)
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                row = dict(d=d, s=s, b=b, h=h, causal=causal)
                rc = K.run_base(p)
                if rc != 0:
                    failures.append((dict(id=f"bench d{d} s{s} {'causal' if causal else 'full'}"),
                                     [f"    baseline returned {rc}"]))
                    row["base"] = None
                else:
                    ms = time_fn(lambda p=p: K.run_base(p))
                    row["base"] = flops / ms / 1e9
                qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
                sd_out = None
                for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        from torch.nn.attention import sdpa_kernel
                        def f(be=be, qt=qt, kt=kt, vt=vt, causal=causal, scale=scale):
                            with sdpa_kernel([be]):
                                return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, scale=scale)
                        out = f()
                        if name == "flash":
                            sd_out = out.transpose(1, 2)
                        row[name] = flops / time_fn(f) / 1e9
                    except Exception as ex:
                        row[name] = None
                        row[name + "_why"] = type(ex).__name__
                # big-shape correctness: baseline vs the fp32 reference on 2 units (first and last)
                if row["base"] is not None:
                    units_l = [0, b * h - 1]
                    units = torch.tensor(units_l, dtype=torch.int32, device="cuda")
                    of = torch.zeros(b, s, h, d, dtype=torch.float32, device="cuda")
                    lf = torch.zeros(b, h, s, dtype=torch.float32, device="cuda")
                    rr = K.run_ref(K.params(q, k, v, of, lf, causal, scale), units, 2)
                    K.run_base(p)
                    torch.cuda.synchronize()
                    eb, es, el = [], [], []
                    for u in units_l:
                        bi, hi = u // h, u % h
                        eb.append((o[bi, :, hi].float() - of[bi, :, hi]).abs().max().item())
                        if sd_out is not None:
                            es.append((sd_out[bi, :, hi].float() - of[bi, :, hi]).abs().max().item())
                        el.append((l[bi, hi] - lf[bi, hi]).abs().max().item())
                    e_b, e_s, e_l = max(eb), (max(es) if es else 0.0), max(el)
                    tol = max(2 * e_s, BASE_FLOOR_O)
                    ok = rr == 0 and e_b <= tol and e_l <= BASE_TOL_LSE and not math.isnan(e_b) and not math.isnan(e_l)
                    big_rows.append(dict(id=f"d{d}-s{s}-b{b}-h{h}-{'causal' if causal else 'full'}", base_o=e_b,
                                         sdpa_o=e_s, base_lse=e_l, ok=ok))
                    if not ok:
                        failures.append((dict(id=f"big d{d} s{s} b{b} h{h} {'causal' if causal else 'full'}"),
                                         [f"    reference rc {rr}; baseline vs fp32 reference on units {units_l}: O max err "
                                          f"{e_b:.3e} (tol {tol:.3e}, SDPA-flash {e_s:.3e}), LSE max err {e_l:.3e} "
                                          f"(tol {BASE_TOL_LSE:.0e})"]))
                rows.append(row)
                log(f"  bench d={d:3d} s={s:5d} b={b:2d} h={h:2d} {'causal' if causal else 'full  '}: "
                    f"baseline {fmt(row['base'])}  flash {fmt(row.get('flash'))}  cudnn {fmt(row.get('cudnn'))} TFLOP/s")
                del q, k, v, o
    return rows


def bench_reference(K, gen, quick):
    """Reference throughput on the largest grid shapes (all units, non-causal, seqlen 16k)."""
    import torch
    rows = []
    for d, h in ((64, 32), (128, 16), (256, 8)) if not quick else ((128, 16),):
        s, b = 16384, 1
        q = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
        k = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
        v = torch.randn(b, s, h, d, generator=gen, device="cuda").to(torch.bfloat16)
        of = torch.empty(b, s, h, d, dtype=torch.float32, device="cuda")
        lf = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
        units = torch.arange(b * h, dtype=torch.int32, device="cuda")
        p = K.params(q, k, v, of, lf, False, 1.0 / math.sqrt(d))
        K.run_ref(p, units, 1)  # warm-up (one unit)
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        rc = K.run_ref(p, units, b * h)
        e1.record()
        torch.cuda.synchronize()
        ms = e0.elapsed_time(e1)
        flops = 4 * b * h * s * s * d
        rows.append(dict(d=d, s=s, b=b, h=h, rc=rc, ms=ms, tflops=flops / ms / 1e9))
        log(f"  reference d={d} s={s} b={b} h={h} full: {ms:.1f} ms, {flops / ms / 1e9:.2f} TFLOP/s (rc {rc})")
    return rows


def fmt(x, w=6):
    return f"{x:{w}.1f}" if isinstance(x, (int, float)) and x is not None else f"{'n/a':>{w}}"


# ------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer correctness shapes and timing points")
    ap.add_argument("--no-bench", action="store_true", help="correctness only")
    ap.add_argument("--only", default=None, help="regex over case ids (correctness cases only)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--nvcc", default=None)
    args = ap.parse_args()
    t_start = time.time()
    import warnings
    warnings.filterwarnings("ignore", category=UserWarning)  # SDPA mask-alignment chatter

    import torch
    if not torch.cuda.is_available():
        raise SystemExit("FATAL: no CUDA device visible to torch")
    props = torch.cuda.get_device_properties(0)
    nvcc = find_nvcc(args.nvcc)
    nv = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    log(f"GPU {props.name} (cc {props.major}.{props.minor}, {props.multi_processor_count} SMs), torch {torch.__version__} "
        f"(CUDA {torch.version.cuda}), nvcc: {nvcc} [{nv}]")

    tmp = Path(tempfile.mkdtemp(prefix="attn_check_", dir="/tmp"))
    t0 = time.time()
    built = build(nvcc, tmp)
    log(f"built baseline.cu and reference.cu in {time.time() - t0:.1f}s into {tmp}")
    print_ptxas("baseline", built["baseline"][1])
    print_ptxas("reference", built["reference"][1])
    K = Kernels(built["baseline"][0], built["reference"][0])
    torch.cuda.init()
    gen = torch.Generator(device="cuda").manual_seed(args.seed)

    failures, results, big_rows, misc = [], [], [], []
    bad = check_args(K)
    if bad:
        failures.append((dict(id="argument checks"), ["    " + b for b in bad]))
    misc.append(("argument rejection", not bad))
    try:
        bad = check_stream(K, gen)
    except Exception:
        bad = ["exception:\n" + traceback.format_exc()]
    if bad:
        failures.append((dict(id="side stream"), ["    " + b for b in bad]))
    misc.append(("side-stream run", not bad))

    cases = make_cases(args.quick)
    if args.only:
        cases = [c for c in cases if re.search(args.only, c["id"])]
    log(f"correctness: {len(cases)} cases")
    t0 = time.time()
    for c in cases:
        try:
            ok = check_case(K, c, gen, results, failures)
        except Exception:
            ok = False
            failures.append((c, ["    exception:\n" + traceback.format_exc()]))
            results.append(dict(id=c["id"], ok=False))
            if "illegal" in traceback.format_exc() or "CUDA error" in traceback.format_exc():
                log(f"  case {c['id']}: CUDA error, the context is probably dead; stopping here")
                break
        if not ok:
            log(f"  FAIL {c['id']}")
    log(f"correctness done in {time.time() - t0:.1f}s: {sum(r.get('ok', False) for r in results)}/{len(results)} ok")

    bench_rows, ref_rows = [], []
    if not args.no_bench:
        t0 = time.time()
        try:
            bench_rows = bench(K, args.quick, gen, failures, big_rows)
            ref_rows = bench_reference(K, gen, args.quick)
        except Exception:
            failures.append((dict(id="bench"), ["    exception:\n" + traceback.format_exc()]))
        log(f"bench done in {time.time() - t0:.1f}s")

    # ---------------------------------------------------------------- report
    if failures:
        c, detail = failures[0]
        log("\n==== FIRST FAILURE: " + c["id"] + " ====")
        if "d" in c:
            log(f"    batch={c['b']} seqlen_q={c['sq']} seqlen_k={c['sk']} heads_q={c['hq']} heads_kv={c['hkv']} "
                f"head_dim={c['d']} causal={c['causal']} scale=1/sqrt({c['d']})")
        for line in detail:
            log(line)
        if len(failures) > 1:
            log(f"    ... and {len(failures) - 1} more failing checks: " + ", ".join(f[0]["id"] for f in failures[1:20])
                + (" ..." if len(failures) > 20 else ""))

    log(f"\n==== correctness (max abs errors vs float64; ref tol O/LSE {REF_TOL_O:.0e}, "
        f"baseline tol max(2xSDPA, {BASE_FLOOR_O:.0e}), LSE {BASE_TOL_LSE:.0e}) ====")
    log(f"{'case':44s} {'ref O':>9s} {'ref LSE':>9s} {'poison':>6s} {'SDPA O':>9s} {'base O':>9s} {'base LSE':>9s}  ok")
    def e(x):
        return f"{x:9.2e}" if isinstance(x, float) else f"{'-':>9s}"
    for r in results:
        log(f"{r['id']:44s} {e(r.get('ref_o'))} {e(r.get('ref_lse'))} {str(r.get('ref_poison', '-')):>6s} "
            f"{e(r.get('sdpa_o'))} {e(r.get('base_o'))} {e(r.get('base_lse'))}  {'ok' if r.get('ok') else 'FAIL'}")
    for name, ok in misc:
        log(f"{name:44s} {'ok' if ok else 'FAIL'}")
    if big_rows:
        log("\n==== large shapes: baseline vs fp32 reference (2 units each) ====")
        for r in big_rows:
            log(f"{r['id']:44s} SDPA-flash O {e(r['sdpa_o'])}  base O {e(r['base_o'])}  base LSE {e(r['base_lse'])}  "
                f"{'ok' if r['ok'] else 'FAIL'}")
    if bench_rows:
        log("\n==== TFLOP/s on the FA3 grid (4*b*h*s^2*d, halved for causal; median of CUDA-event times) ====")
        log(f"{'d':>4s} {'seqlen':>6s} {'batch':>5s} {'heads':>5s} {'mask':>6s} {'baseline':>8s} {'flash':>7s} {'cudnn':>7s} {'base/flash':>10s}")
        for r in bench_rows:
            ratio = (r["base"] / r["flash"]) if r.get("base") and r.get("flash") else None
            log(f"{r['d']:4d} {r['s']:6d} {r['b']:5d} {r['h']:5d} {'causal' if r['causal'] else 'full':>6s} "
                f"{fmt(r.get('base'), 8)} {fmt(r.get('flash'), 7)} {fmt(r.get('cudnn'), 7)} "
                f"{(f'{ratio:10.2f}' if ratio else 'n/a'.rjust(10))}")
        for r in ref_rows:
            log(f"reference (fp32) d={r['d']} s={r['s']} h={r['h']} full: {r['ms']:.1f} ms = {r['tflops']:.2f} TFLOP/s")
    n_ok = sum(r.get("ok", False) for r in results)
    log(f"\nSUMMARY: {n_ok}/{len(results)} correctness cases ok, {len(failures)} failing checks, "
        f"{time.time() - t_start:.0f}s total -> {'PASS' if not failures else 'FAIL'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
