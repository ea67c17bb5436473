"""Evaluator without a GPU: task files, build cache, layered ban check, result schema and
every bad-input path, through the real CLI where a user would meet them."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from evaluator import bans
from evaluator.build import build
from evaluator.expr import ExprError, evaluate, k
from evaluator.runner import gpu_present
from evaluator.task import load_task
from tests.candidates.rmsnorm_hostile import source
from tests.evalcli import ROOT, socratic

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                reason="needs nvcc")
RMSNORM = ROOT / "kernels" / "rmsnorm"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


# expressions --------------------------------------------------------------------
def test_expressions_compute_and_stay_safe():
    assert evaluate("4*rows*cols", {"rows": 2, "cols": 3}) == 24
    assert evaluate("1 / sqrt(d)", {"d": 64}) == 0.125
    assert evaluate("'a' if c else 'b'", {"c": 0}) == "b"
    assert k(8192) == "8k" and k(1000) == "1000" and k(1 << 20) == "1m"
    for bad in ("__import__('os')", "x.real", "[1][0]", "open('f')", "lambda: 1"):
        with pytest.raises(ExprError):
            evaluate(bad, {"x": 1})


# task files -----------------------------------------------------------------------
def test_shipped_tasks_load_with_their_sets():
    attn = load_task(ROOT / "kernels" / "flash_attn_fwd")
    assert {n: len(s) for n, s in attn.sets.items()} == {"smoke": 3, "bench": 26, "full": 210}
    norm = load_task(RMSNORM)
    assert len(norm.sets["smoke"]) == 3 and 8 <= len(norm.sets["bench"]) <= 12 and len(norm.sets["full"]) >= 50
    for task in (attn, norm):
        for scenarios in task.sets.values():
            ids = [s.id for s in scenarios]
            assert len(ids) == len(set(ids))


def test_list_shows_the_sets_with_sizes():
    res = socratic("eval", "kernels/flash_attn_fwd", "--list")
    assert res.code == 0
    assert "smoke (3 scenarios)" in res.stdout and "bench (26 scenarios)" in res.stdout
    assert "full (210 scenarios)" in res.stdout and "d128-s8k-b2-h16-causal" in res.stdout
    res = socratic("eval", "rmsnorm", "--list", "--json")     # a bundled task by name
    assert res.code == 0 and set(res.doc["sets"]) == {"smoke", "bench", "full"}


def _broken_task(tmp_path: Path, mutate) -> Path:
    task = tmp_path / "task"
    shutil.copytree(RMSNORM, task)
    path = task / "task.toml"
    path.write_text(mutate(path.read_text()))
    return task


@pytest.mark.parametrize("mutate, expected", [
    (lambda t: t.replace('entry = "rmsnorm_fwd"\n', 'entry = "rmsnorm_fwd\n'), "task.toml:6: malformed TOML"),
    (lambda t: t.replace('entry = "rmsnorm_fwd"\n', ""), "missing required key entry"),
    (lambda t: t.replace('role = "output"', 'role = "result"'), "role must be one of"),
    (lambda t: t.replace('value = "cols"', 'value = "colz"'), "unknown name 'colz'"),
    (lambda t: t.replace('{ rows = 17, cols = 1000 }', '{ rows = 1, cols = 4096 }'), "duplicate scenario ids"),
    (lambda t: t.replace('"{src}"', '"x"').replace("{src}", ""), "build.command lacks {src}"),
])
def test_bad_task_files_get_one_clear_line(tmp_path, mutate, expected):
    task = _broken_task(tmp_path, mutate)
    res = socratic("eval", str(task), "--list")
    assert res.code == 2, res.stderr
    assert expected in res.stderr and str(task / "task.toml") in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize("args, expected", [
    (["eval", "no/such/task"], "no/such/task: no such task directory"),
    (["eval", "rmsnorm", "--candidate", "missing.cu", "--check-only"], "missing.cu: no such candidate file"),
    (["eval", "rmsnorm", "--scenarios", "r1-c4k,nope", "--check-only"], "unknown scenario or set 'nope'"),
    (["eval", "rmsnorm", "--seeds", "0"], "--seeds must be at least 1"),
])
def test_bad_input_paths_exit_2_with_one_line(args, expected):
    res = socratic(*args)
    assert res.code == 2
    assert expected in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_task_file_is_named(tmp_path):
    res = socratic("eval", str(tmp_path))
    assert res.code == 2 and f"{tmp_path}/task.toml: missing task file" in res.stderr


@pytest.mark.skipif(gpu_present() is None, reason="this machine has a GPU")
@needs_nvcc
def test_full_run_without_a_gpu_is_bad_input():
    res = socratic("eval", "rmsnorm", "--scenarios", "smoke")
    assert res.code == 2 and "needs an NVIDIA GPU" in res.stderr and "--check-only" in res.stderr


# build cache ----------------------------------------------------------------------
@needs_nvcc
def test_build_is_cached_by_content(cache, tmp_path):
    task = load_task(RMSNORM)
    src = tmp_path / "cand.cu"
    src.write_text(source("correct"))
    first = build(src, task.build_command)
    assert first.ok and not first.cached and first.library.is_file()
    t0 = time.monotonic()
    again = build(src, task.build_command)
    assert again.cached and again.library == first.library and time.monotonic() - t0 < 0.5
    assert again.resources and again.resources[0].registers > 0
    src.write_text(source("correct") + "\n// a change\n")
    assert not build(src, task.build_command).cached


@needs_nvcc
def test_build_failure_is_a_failed_check_with_the_log(cache, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("this is not C++\n")
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json")
    assert res.code == 1
    assert not res.doc["build"]["ok"] and "error" in res.doc["build"]["log"]


# ban check ----------------------------------------------------------------------------
def _plant(tmp_path: Path, name: str, body: str, headers: dict[str, str] | None = None) -> Path:
    for rel, text in (headers or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    path = tmp_path / name
    path.write_text(body)
    return path


def _check(path: Path):
    res = socratic("eval", "rmsnorm", "--candidate", str(path), "--check-only", "--json")
    return res, {(h["library"], h["layer"]) for h in res.doc["bans"]["hits"]}


@needs_nvcc
def test_clean_candidate_passes_the_static_checks(cache, tmp_path):
    res, hits = _check(_plant(tmp_path, "clean.cu", source("correct")))
    assert res.code == 0 and not hits and res.doc["bans"]["ok"]


@needs_nvcc
def test_cutlass_include_is_caught_in_source_depfile_and_symbols(cache, tmp_path):
    body = source("correct").replace("#include <stdint.h>", '#include <stdint.h>\n#include "cutlass/numeric.h"')
    body += "\n__global__ void use(cutlass::half_t* p) { p->v = 1; }\n"
    path = _plant(tmp_path, "cand.cu", body, {"cutlass/numeric.h": "namespace cutlass { struct half_t { int v; }; }\n"})
    res, hits = _check(path)
    assert res.code == 1
    assert {("CUTLASS", "source"), ("CUTLASS", "depfile"), ("CUTLASS", "device-symbols")} <= hits


@needs_nvcc
def test_cute_namespace_is_caught_in_device_code(cache, tmp_path):
    header = "namespace cute { template <class T> __device__ T twice(T x) { return x + x; } }\n"
    body = source("correct").replace("#include <stdint.h>", "#include <stdint.h>\n#include <cute/tensor.hpp>")
    body += "\ntemplate <class F> __global__ void k(F f, int* p) { *p = 1; }\n" \
            "template __global__ void k<int (*)(int)>(int (*)(int), int*);\n" \
            "__global__ void use(int* p) { *p = cute::twice(*p); }\n"
    path = _plant(tmp_path, "cand.cu", body, {"cute/tensor.hpp": header})
    res, hits = _check(path)
    assert res.code == 1
    assert ("CuTe", "source") in hits and ("CuTe", "depfile") in hits


@needs_nvcc
def test_cublas_call_is_caught_in_the_host_symbols(cache, tmp_path):
    res, hits = _check(_plant(tmp_path, "cand.cu", source("cublas_call")))
    assert res.code == 1 and ("cuBLAS", "host-symbols") in hits and ("cuBLAS", "source") in hits
    detail = next(h for h in res.doc["bans"]["hits"] if h["layer"] == "host-symbols")
    assert "undefined symbol cublasCreate_v2" in detail["detail"]


@needs_nvcc
def test_dlopen_of_cudnn_by_a_split_string_is_caught(cache, tmp_path):
    res, hits = _check(_plant(tmp_path, "cand.cu", source("dlopen_cudnn")))
    assert res.code == 1 and ("cuDNN", "dlopen") in hits and ("cuDNN", "source") in hits


def test_comments_do_not_count_but_strings_do(tmp_path):
    path = _plant(tmp_path, "c.cu", '// #include <cutlass/gemm.h>\n/* cudnn\n cublas */\nconst char* s = "libcublasLt.so";\n')
    hits = bans.check_source(path, "c.cu")
    assert [(h.library, h.where) for h in hits] == [("cuBLASLt", "c.cu:4")]
    assert not bans.check_source(_plant(tmp_path, "d.cu", "void execute_cute_free();\n"), "d.cu")


def test_runtime_check_flags_mapped_banned_libraries():
    hits = bans.check_runtime(["/usr/lib/libc.so.6", "/opt/nvidia/lib/libcudnn_ops.so.9", "/x/libcublasLt.so.13"])
    assert [(h.library, h.layer) for h in hits] == [("cuDNN", "runtime"), ("cuBLASLt", "runtime")]


# result schema ---------------------------------------------------------------------------
@needs_nvcc
def test_check_only_json_follows_the_schema(cache):
    res = socratic("eval", "rmsnorm", "--check-only", "--json")
    assert res.code == 0
    doc = res.doc
    assert doc["schema"] == "socratic.eval/1" and doc["task"] == "rmsnorm" and doc["set"] == "bench"
    assert set(doc) >= {"candidate", "gpu", "build", "bans", "scenarios", "summary", "exit_code"}
    assert len(doc["candidate"]["sha256"]) == 64
    assert set(doc["build"]) >= {"ok", "cached", "seconds", "command", "log", "resources"}
    assert set(doc["build"]["resources"][0]) == {"kernel", "registers", "spill_stores", "spill_loads",
                                                 "shared_bytes", "stack_bytes"}
    assert set(doc["summary"]) >= {"all_correct", "n", "n_correct", "geomean_speedup", "min_speedup", "worst_scenario"}
