"""The shipped tasks: both baselines build and pass the static ban check (CPU); on a GPU,
both pass every `full` scenario and the fp32 references agree with float64 torch."""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import pytest

from socratic.taskfile import load_task
from tests.evalcli import ROOT, socratic

TASKS = ["flash_attn_fwd", "rmsnorm"]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                reason="needs nvcc")


@needs_nvcc
@pytest.mark.parametrize("task", TASKS)
def test_baseline_builds_and_passes_the_static_ban_check(task):
    res = socratic("eval", f"src/socratic/kernels/{task}", "--check-only", "--json")
    assert res.code == 0, res.stderr
    doc = res.doc
    assert doc["build"]["ok"] and doc["bans"] == {"ok": True, "hits": []}
    assert all(r["spill_stores"] == 0 for r in doc["build"]["resources"])


def test_attention_sets_cover_the_edge_cases():
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")
    full = [s.values for s in task.sets["full"]]
    assert len(full) >= 180
    assert {v["head_dim"] for v in full} == {64, 96, 128, 192, 256}
    assert {v["causal"] for v in full} == {0, 1}
    assert {v["heads_q"] // v["heads_kv"] for v in full} == {1, 4, 8}
    assert {1, 17, 127, 129, 1000} <= {v["seqlen_q"] for v in full} | {v["seqlen_k"] for v in full}
    assert any(v["seqlen_q"] > v["seqlen_k"] for v in full) and any(v["seqlen_q"] < v["seqlen_k"] for v in full)
    assert {v["batch"] for v in full} >= {1, 2}
    bench = [s.values for s in task.sets["bench"]]
    assert len(bench) == 26
    assert any(v["seqlen_q"] % 128 for v in bench) and any(v["seqlen_q"] != v["seqlen_k"] for v in bench)
    assert {(v["heads_q"], v["heads_kv"]) for v in bench} >= {(32, 8), (64, 8)}
    assert {v["head_dim"] for v in bench} == {64, 128, 256}


def test_rmsnorm_bench_spans_one_row_to_64k_rows():
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "rmsnorm")
    rows = [(s.values["rows"], s.values["cols"]) for s in task.sets["bench"]]
    assert (1, 4096) in rows and (65536, 8192) in rows


# GPU -------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("task", TASKS)
def test_baseline_passes_every_full_scenario(task):
    res = socratic("eval", task, "--scenarios", "full", "--no-timing", "--json", timeout=900)
    assert res.code == 0, [r["failures"] for r in res.doc["scenarios"] if not r["correct"]][:5]
    assert res.doc["summary"]["n_correct"] == res.doc["summary"]["n"] == len(load_task(ROOT / "src" / "socratic" / "kernels" / task).sets["full"])


def _library(task, which: str) -> ctypes.CDLL:
    from socratic.evaluator.build import build
    path = task.reference.source if which == "reference" else task.baseline
    result = build(path, task.build_command)
    assert result.ok, result.log
    return ctypes.CDLL(str(result.library))


def _attention_params(task, q, k, v, o, lse, causal: int):
    from socratic.evaluator.worker import params_type
    b, sq, hq, d = q.shape
    p = params_type(task)()
    p.q, p.k, p.v, p.o, p.lse = (t.data_ptr() for t in (q, k, v, o, lse))
    p.workspace, p.workspace_bytes = 0, 0
    p.batch, p.seqlen_q, p.seqlen_k, p.heads_q, p.heads_kv, p.head_dim = b, sq, k.shape[1], hq, k.shape[2], d
    p.softmax_scale, p.causal = d ** -0.5, causal
    return p


def _float64_attention(torch, q, k, v, causal: int):
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    kd, vd = kd.repeat_interleave(hq // hkv, 1), vd.repeat_interleave(hq // hkv, 1)
    s = qd @ kd.transpose(-1, -2) * d ** -0.5
    if causal:
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + sk - sq, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return (p @ vd).transpose(1, 2), lse


@pytest.mark.gpu
@pytest.mark.parametrize("d, sq, sk, hq, hkv, causal", [
    (64, 17, 17, 2, 2, 0), (96, 129, 1000, 8, 2, 1), (128, 1000, 127, 8, 1, 1), (192, 127, 129, 4, 1, 0),
    (256, 1, 129, 8, 2, 1), (128, 300, 300, 4, 4, 1),
])
def test_attention_reference_and_baseline_agree_with_float64(d, sq, sk, hq, hkv, causal):
    torch = pytest.importorskip("torch")
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")
    ref, base = _library(task, "reference"), _library(task, "baseline")
    g = torch.Generator(device="cuda").manual_seed(d * 7 + sq)
    q = torch.randn(2, sq, hq, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(2, sk, hkv, d, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(2, sk, hkv, d, device="cuda", dtype=torch.bfloat16, generator=g)
    o_exact, lse_exact = _float64_attention(torch, q, k, v, causal)
    stream = torch.cuda.current_stream().cuda_stream

    o32 = torch.full((2, sq, hq, d), float("nan"), device="cuda")
    lse32 = torch.full((2, hq, sq), float("nan"), device="cuda")
    units = torch.arange(2 * hq, device="cuda", dtype=torch.int32)
    p = _attention_params(task, q, k, v, o32, lse32, causal)
    assert ref.attn_fwd_ref(ctypes.byref(p), ctypes.c_void_p(units.data_ptr()), 2 * hq, ctypes.c_void_p(stream)) == 0
    torch.cuda.synchronize()
    assert (o32.double() - o_exact).abs().max().item() < 1e-4
    finite = torch.isfinite(lse_exact)
    assert torch.equal(torch.isinf(lse32), ~finite)          # empty rows: LSE = -inf
    assert (lse32.double()[finite] - lse_exact[finite]).abs().max().item() < 1e-4

    o16 = torch.full((2, sq, hq, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    lse = torch.full((2, hq, sq), float("nan"), device="cuda")
    p = _attention_params(task, q, k, v, o16, lse, causal)
    assert base.attn_fwd(ctypes.byref(p), ctypes.c_void_p(stream)) == 0
    torch.cuda.synchronize()
    assert (o16.double() - o_exact).abs().max().item() < 2e-2
    assert torch.equal(torch.isinf(lse), ~finite)
    assert (lse.double()[finite] - lse_exact[finite]).abs().max().item() < 1e-3


@pytest.mark.gpu
def test_rmsnorm_reference_agrees_with_float64():
    torch = pytest.importorskip("torch")
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "rmsnorm")
    ref = _library(task, "reference")
    from socratic.evaluator.worker import params_type
    x = torch.randn(37, 1000, device="cuda", dtype=torch.bfloat16)
    w = (1 + 0.1 * torch.randn(1000, device="cuda")).bfloat16()
    y = torch.full((37, 1000), float("nan"), device="cuda")
    p = params_type(task)()
    p.x, p.w, p.y, p.rows, p.cols, p.eps = x.data_ptr(), w.data_ptr(), y.data_ptr(), 37, 1000, 1e-6
    units = torch.tensor([0, 5, 36], device="cuda", dtype=torch.int32)
    assert ref.rmsnorm_fwd_ref(ctypes.byref(p), ctypes.c_void_p(units.data_ptr()), 3,
                               ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)) == 0
    torch.cuda.synchronize()
    xd = x.double()
    exact = xd / torch.sqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * w.double()
    assert (y[[0, 5, 36]].double() - exact[[0, 5, 36]]).abs().max().item() < 1e-5
    assert torch.isnan(y[1]).all()     # rows not listed are left untouched
