"""Evaluator without a GPU: task files, build cache, layered ban check, result schema and
every bad-input path, through the real CLI where a user would meet them."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from socratic import landlock
from socratic.contracts import parse_eval
from socratic.evaluator import bans
from socratic.evaluator.build import build, find_nvcc
from socratic.evaluator.runner import gpu_present
from socratic.expr import ExprError, evaluate, k
from socratic.taskfile import load_task
from tests.candidates.rmsnorm_hostile import source
from tests.evalcli import ROOT, socratic

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                reason="needs nvcc")
RMSNORM = ROOT / "src" / "socratic" / "kernels" / "rmsnorm"


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


def test_an_expression_parsed_once_still_reads_each_scenarios_values():
    # the parse is cached (the judge evaluates shapes every timed pair): the tree, never a value
    for rows in (2, 5, 2):
        assert evaluate("4*rows*cols", {"rows": rows, "cols": 3}) == 12 * rows
    with pytest.raises(ExprError, match="unknown name 'cols'"):
        evaluate("4*rows*cols", {"rows": 2})
    for _ in range(2):   # a bad one fails the same way every time
        with pytest.raises(ExprError, match="bad expression"):
            evaluate("4*rows*", {"rows": 2})


# task files -----------------------------------------------------------------------
def test_shipped_tasks_load_with_their_sets():
    attn = load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")
    assert {n: len(s) for n, s in attn.sets.items()} == {"smoke": 3, "bench": 26, "full": 210}
    norm = load_task(RMSNORM)
    assert len(norm.sets["smoke"]) == 3 and 8 <= len(norm.sets["bench"]) <= 12 and len(norm.sets["full"]) >= 50
    for task in (attn, norm):
        for scenarios in task.sets.values():
            ids = [s.id for s in scenarios]
            assert len(ids) == len(set(ids))


def test_list_shows_the_sets_with_sizes():
    res = socratic("eval", "src/socratic/kernels/flash_attn_fwd", "--list")
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
    (lambda t: t.replace('entry = "rmsnorm_fwd"\n', ""), "task.toml: missing required key `entry`"),
    (lambda t: t.replace('role = "output"', 'role = "result"'), "task.toml:53: buffer 'y': role must be one of"),
    (lambda t: t.replace('value = "cols"', 'value = "colz"'), "unknown name 'colz'"),
    (lambda t: t.replace('{ rows = 17, cols = 1000 }', '{ rows = 1, cols = 4096 }'), "duplicate scenario ids"),
    (lambda t: t.replace('"{src}"', '"x"').replace("{src}", ""), "`build.command` lacks {src}"),
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
    (["eval", "rmsnorm", "--timeout", "nan", "--check-only"], "--timeout must be a positive number"),
    (["eval", "rmsnorm", "--timeout", "inf", "--check-only"], "--timeout must be a positive number"),
    (["eval", "rmsnorm", "--scenarios", "", "--check-only"], "--scenarios: empty"),
    (["eval", "rmsnorm", "--scenarios", " ", "--check-only"], "--scenarios: empty"),
    (["eval", "rmsnorm", "--candidate", "tests/candidates", "--check-only"],
     "tests/candidates: is a folder, not a candidate file"),
    (["eval", "rmsnorm", "--candidate", "/dev/null", "--check-only"], "/dev/null: not a regular file"),
])
def test_bad_input_paths_exit_2_with_one_line(args, expected):
    res = socratic(*args)
    assert res.code == 2
    assert expected in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_task_file_is_named(tmp_path):
    res = socratic("eval", str(tmp_path))
    assert res.code == 2 and f"{tmp_path}/task.toml: missing task file" in res.stderr
    import os
    os.mkfifo(tmp_path / "task.toml")   # there, but no file to read (a read would wait forever)
    res = socratic("eval", str(tmp_path))
    assert res.code == 2 and f"{tmp_path}/task.toml: not a regular file" in res.stderr, res.stderr


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
def test_a_damaged_or_unusable_build_cache(cache, tmp_path):
    import os

    ok = socratic("eval", "rmsnorm", "--check-only", env={**os.environ, "SOCRATIC_CACHE": str(cache)})
    assert ok.code == 0, ok.stderr
    for meta in cache.glob("builds/*/build.json"):      # a full disk, an edit: a JSON traceback
        meta.write_text('{"comm')
    again = socratic("eval", "rmsnorm", "--check-only", env={**os.environ, "SOCRATIC_CACHE": str(cache)})
    assert again.code == 0 and "Traceback" not in again.stderr, again.stderr
    import json  # built again, not reused
    assert all(json.loads(m.read_text()) for m in cache.glob("builds/*/build.json"))
    blocked = tmp_path / "a file"
    blocked.write_text("")
    res = socratic("eval", "rmsnorm", "--check-only", env={**os.environ, "SOCRATIC_CACHE": str(blocked)})
    assert res.code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert f"{blocked}/builds: cannot create the build cache (Not a directory" in res.stderr


@needs_nvcc
def test_build_failure_is_a_failed_check_with_the_log(cache, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("this is not C++\n")
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json")
    assert res.code == 1
    assert not res.doc["build"]["ok"] and "error" in res.doc["build"]["log"]
    # the compiler's messages name the user's file, not the cache's copy of it
    assert str(src) in res.doc["build"]["log"] and "/builds/" not in res.doc["build"]["log"]
    # and the failed build leaves no folder (red team, s27: one failing on purpose filled the disk)
    assert [p.name for p in (cache / "builds").iterdir() if "." in p.name] == []


@needs_nvcc
@pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")
@pytest.mark.parametrize("how", ["include", "incbin"])
def test_the_build_reads_no_file_outside_the_toolchain_and_the_candidates_folder(cache, tmp_path, how):
    # a candidate that pulls another file into its build (a campaign's chain key, ~/.ssh):
    # the build log the result carries, and the library, hold none of it (red team, session
    # 27: nvcc echoed an #included chain key into the result a confined agent reads)
    secret = tmp_path / "private" / "key"
    secret.parent.mkdir()
    secret.write_text("SECRET_" + "ab12" * 16 + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    src = ws / "cand.cu"
    if how == "include":
        src.write_text(f'#include "{secret}"\n')
    else:   # the assembler's .incbin: the bytes would go into the library, not the log
        src.write_text(source("correct") + f'\n__asm__(".section .rodata\\n.incbin \\"{secret}\\"\\n.previous");\n')
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json")
    assert res.code == 1 and not res.doc["build"]["ok"], res.stderr
    assert "SECRET_" not in res.stdout + res.stderr
    assert str(secret) in res.doc["build"]["log"]   # it says which file it could not read
    # its own folder is still on its include path (a stray header builds; the ban check names it)
    (ws / "helper.cuh").write_text("#define HELPER_SCALE 1\n")
    src.write_text('#include "helper.cuh"\n' + source("correct"))
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json")
    assert res.doc["build"]["ok"], res.doc["build"]["log"]


@needs_nvcc
def test_ctrl_c_during_a_build_leaves_no_build_folder(cache, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    src = tmp_path / "slow.cu"
    src.write_text(source("correct") + "\n// " + str(time.time()) + "\n")
    env = {**os.environ, "SOCRATIC_CACHE": str(cache)}
    p = subprocess.Popen([sys.executable, "-m", "socratic", "eval", "rmsnorm", "--candidate",
                          str(src), "--check-only"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any((cache / "builds").glob("*.*/candidate.cu")):
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    assert not [d for d in (cache / "builds").iterdir() if "." in d.name], "a temporary build left"


@needs_nvcc
def test_a_candidate_that_is_not_text_fails_its_build_in_one_line(cache, tmp_path):
    # nvcc echoes the offending source line: bytes that are not UTF-8 must not crash the
    # evaluator (it was a UnicodeDecodeError traceback)
    src = tmp_path / "binary blob.cu"
    src.write_bytes(bytes(range(256)) * 8)
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only")
    assert res.code == 1 and "Traceback" not in res.stderr, res.stderr
    assert "build FAILED" in res.stdout and res.stdout.splitlines()[-1] == "FAIL"


@needs_nvcc
@pytest.mark.parametrize("body,why", [
    (None, "it exports rmsnorm_fwd_typo"),                                # a misspelt name
    ("int rmsnorm_fwd(const void*, void*) { return 0; }\n", 'declare it extern "C"'),
    ('extern "C" int rmsnorm_fwd = 3;\n', "exports no function"),        # data, not code
])
def test_a_library_without_the_entry_point_fails(cache, tmp_path, body, why):
    src = tmp_path / "cand.cu"
    src.write_text(source("correct").replace("rmsnorm_fwd", "rmsnorm_fwd_typo")
                   if body is None else body)
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json")
    assert res.code == 1 and res.doc["exit_code"] == 1, res.stderr
    b = res.doc["build"]
    assert b["ok"] is False and "rmsnorm_fwd" in b["error"] and why in b["error"], b["error"]
    text = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only")
    assert text.code == 1 and text.stdout.splitlines()[-1] == "FAIL"
    assert any("does not export the entry point" in ln for ln in text.stdout.splitlines())
    full = socratic("eval", "rmsnorm", "--candidate", str(src), "--scenarios", "smoke")
    assert full.code == 1 and "does not export" in full.stdout   # before any GPU work


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


# ways around the one-file rule: each planted in the correct candidate and built for real
PY_CALL = r"""
extern "C" int PyRun_SimpleString(const char*);
extern "C" int PyGILState_Ensure(void);
extern "C" int rmsnorm_hijack(void) { PyGILState_Ensure(); return PyRun_SimpleString("import os"); }
"""
PY_DLOPEN = r"""
#include <dlfcn.h>
extern "C" void* rmsnorm_hijack(void) { return dlopen("libpython3.12.so.1.0", RTLD_NOW); }
"""
RUNTIME_CODE = r"""
extern "C" int cuModuleLoadData(void** module, const void* image);
extern "C" int nvrtcCreateProgram(void*, const char*, const char*, int, const char* const*, const char* const*);
extern "C" int rmsnorm_load(const void* image) {
  void* m; nvrtcCreateProgram(0, "", "", 0, 0, 0); return cuModuleLoadData(&m, image); }
"""
STATIC_CUDART_LOAD = r"""
#define CAT(a, b) a##b
extern "C" int rmsnorm_load(const void* image) {
  cudaLibrary_t lib; return (int)CAT(cudaLibrary, LoadData)(&lib, image, 0, 0, 0, 0, 0, 0); }
"""
INCBIN = r"""
asm(".pushsection .rodata\n.globl hidden_blob\nhidden_blob:\n.incbin \"BLOB\"\n.popsection");
"""
ELF_ARRAY = r"""
extern "C" const unsigned char hidden_image[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
extern "C" const unsigned char hidden_fatbin[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 0x10};
"""
PASTED_CUBLAS = r"""
#define CAT(a, b) a##b
extern "C" int CAT(cubl, asCreate_v2)(void**);
extern "C" int rmsnorm_handle(void) { void* h; return CAT(cubl, asCreate_v2)(&h); }
"""
RAW_STRING_CUBLAS = r"""
extern "C" int cublasCreate_v2(void**);
static const char* a = R"(" /*)"; extern "C" int rmsnorm_handle(void) { void* h; return cublasCreate_v2(&h); } static const char* b = R"(*/)";
"""


def _planted(tmp_path: Path, extra: str, name: str = "cand.cu", headers: dict[str, str] | None = None) -> Path:
    return _plant(tmp_path, name, source("correct") + extra, headers)


def _layers(res, library: str) -> set[str]:
    return {h["layer"] for h in res.doc["bans"]["hits"] if h["library"] == library}


@needs_nvcc
def test_python_c_api_from_a_candidate_is_caught(cache, tmp_path):
    res, _ = _check(_planted(tmp_path, PY_CALL))
    assert res.code == 1 and {"host-symbols", "source", "preprocessed"} <= _layers(res, "python-api")
    details = {h["detail"] for h in res.doc["bans"]["hits"] if h["layer"] == "host-symbols"}
    assert "undefined symbol PyRun_SimpleString" in details and "undefined symbol PyGILState_Ensure" in details
    res, _ = _check(_planted(tmp_path, PY_DLOPEN, "dl.cu"))
    assert res.code == 1 and "dlopen" in _layers(res, "python-api")
    assert {"source", "preprocessed"} <= _layers(res, "runtime-code")    # dlopen itself


@needs_nvcc
def test_gpu_code_loaded_or_compiled_at_run_time_is_caught(cache, tmp_path):
    res, _ = _check(_planted(tmp_path, RUNTIME_CODE))
    assert res.code == 1 and {"host-symbols", "source", "preprocessed"} <= _layers(res, "runtime-code")
    details = {h["detail"] for h in res.doc["bans"]["hits"] if h["layer"] == "host-symbols"}
    assert {"undefined symbol cuModuleLoadData", "undefined symbol nvrtcCreateProgram"} <= details
    # static cudart defines cudaLibraryLoadData itself: the pasted call is seen after preprocessing
    res, _ = _check(_planted(tmp_path, STATIC_CUDART_LOAD, "lib.cu"))
    assert res.code == 1 and "preprocessed" in _layers(res, "runtime-code"), res.doc["bans"]


@needs_nvcc
def test_embedded_binaries_are_caught(cache, tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(57))
    res, _ = _check(_planted(tmp_path, INCBIN.replace("BLOB", str(blob))))
    assert res.code == 1 and {"source", "preprocessed", "host-binary"} <= _layers(res, "embedded-binary")
    res, _ = _check(_planted(tmp_path, ELF_ARRAY, "arr.cu"))
    assert res.code == 1 and _layers(res, "embedded-binary") == {"host-binary"}
    details = " ".join(h["detail"] for h in res.doc["bans"]["hits"])
    assert "ELF image in section .rodata" in details and "fatbin image in section .rodata" in details
    # bytes placed among the CUDA fatbins (whose ELF images are not scanned) by a section attribute
    placed = ELF_ARRAY.replace('"C" const', '"C" __attribute__((section(".nv_fatbin"))) const')
    res, _ = _check(_planted(tmp_path, placed, "sec.cu"))
    assert res.doc["build"]["ok"] and res.code == 1
    assert _layers(res, "embedded-binary") == {"source", "preprocessed", "device-origin"}, res.doc["bans"]


@needs_nvcc
def test_the_builds_confinement_can_be_turned_off_and_says_so(cache, tmp_path):
    # the agent's switch ($SOCRATIC_CONFINE=0), for a machine whose toolchain lies where the
    # policy does not look: the build runs, and its log says it ran unconfined
    import os

    src = _plant(tmp_path, "cand.cu", source("correct"))
    res = socratic("eval", "rmsnorm", "--candidate", str(src), "--check-only", "--json",
                   env={**os.environ, "SOCRATIC_CACHE": str(cache), "SOCRATIC_CONFINE": "0"})
    assert res.code == 0 and "the build runs unconfined ($SOCRATIC_CONFINE=0)" in res.doc["build"]["log"]


def test_the_builds_tools_keep_the_users_library_path(tmp_path, monkeypatch):
    # a module-loaded host compiler may need LD_LIBRARY_PATH; the Python that confines the
    # build starts without any LD_* (pyproc), and hands it to the tool it runs
    from socratic.evaluator.build import run_confined

    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/lib/socratic-probe")
    out = run_confined(["/bin/sh", "-c", 'echo "tool: $LD_LIBRARY_PATH"'], tmp_path, [], 60)
    assert out.returncode == 0 and "tool: /usr/lib/socratic-probe" in out.stdout, out.stdout + out.stderr


FOREIGN_FATBIN = r"""
asm(".SECTION .nv_fatbin,\"a\"\n.BALIGN 8\n.INCBIN \"FATBIN\"\n.text");
"""


@needs_nvcc
def test_device_code_the_build_did_not_compile_is_caught(cache, tmp_path):
    # red team, s27: a fatbin compiled elsewhere (CUTLASS's, or images out of a static
    # library), `.INCBIN`'d into .nv_fatbin in capitals: the judge loads every image there,
    # and the device-symbol check read only the build's own cubins
    foreign = tmp_path / "foreign.cu"
    foreign.write_text("namespace cutlass { __global__ void gemm_tile(float* p) { p[threadIdx.x] *= 2.f; } }\n")
    fatbin = tmp_path / "foreign.fatbin"
    subprocess.run([find_nvcc(), "-fatbin", "-arch=sm_80", str(foreign), "-o", str(fatbin)], check=True,
                   capture_output=True, timeout=300)
    res, _ = _check(_planted(tmp_path, FOREIGN_FATBIN.replace("FATBIN", str(fatbin))))
    assert res.doc["build"]["ok"] and res.code == 1
    assert {"source", "device-origin"} <= _layers(res, "embedded-binary"), res.doc["bans"]
    # the check itself: every image of an honest library is one its build kept, and one
    # missing from what the build kept is named
    ok, _ = _check(_plant(tmp_path, "clean.cu", source("correct")))
    build_dir = next(d for d in (cache / "builds").iterdir()
                     if (d / "candidate.cu").read_text() == source("correct"))
    assert bans.check_device_origin(build_dir / "lib.so", build_dir / "keep") == []
    partial = tmp_path / "keep"
    shutil.copytree(build_dir / "keep", partial)
    next(partial.glob("candidate.fatbin")).unlink()
    hits = bans.check_device_origin(build_dir / "lib.so", partial)
    assert len(hits) == 1 and "not one this build compiled" in hits[0].detail


@needs_nvcc
def test_including_a_file_named_like_the_candidate_is_caught(cache, tmp_path):
    other = tmp_path / "elsewhere" / "candidate.cu"
    body = source("correct").replace("#include <stdint.h>", f'#include <stdint.h>\n#include "{other}"')
    path = _plant(tmp_path, "candidate.cu", body, {"elsewhere/candidate.cu": "static int helper = 1;\n"})
    res, hits = _check(path)
    assert res.code == 1 and ("foreign-header", "depfile") in hits
    assert [h["where"] for h in res.doc["bans"]["hits"]] == [str(other)]


@needs_nvcc
def test_pasted_and_raw_string_hidden_names_are_caught(cache, tmp_path):
    res, hits = _check(_planted(tmp_path, PASTED_CUBLAS))
    assert res.code == 1 and ("cuBLAS", "preprocessed") in hits and ("cuBLAS", "host-symbols") in hits
    res, hits = _check(_planted(tmp_path, RAW_STRING_CUBLAS, "raw.cu"))
    assert res.code == 1 and ("cuBLAS", "source") in hits and ("cuBLAS", "preprocessed") in hits
    # a #line moving the candidate's lines to a system header's name changes nothing
    res, hits = _check(_planted(tmp_path, '#line 1 "/usr/include/stdio.h"\n' + PASTED_CUBLAS, "line.cu"))
    assert res.code == 1 and ("cuBLAS", "preprocessed") in hits and ("line-directive", "source") in hits


# the candidate's own helpers, named after the libraries they imitate: in the source, the
# device code (a kernel and a device function), the exported host symbols and a string
OWN_NAMES = r"""
__device__ __noinline__ float cublas_like_tile(float x) { return 2.f * x; }
__global__ void cudnn_style_epilogue(float* y) { y[threadIdx.x] = cublas_like_tile(y[threadIdx.x]); }
struct cutlass_like_shape { int m, n; };
namespace cute_free_helpers { inline int twice(int x) { return x + x; } }
extern "C" const char* cudnn_style_name(void) { return "cudnn_style_epilogue of libcudnn_style"; }
int cublas_like_host(cutlass_like_shape s) { return cute_free_helpers::twice(s.m * s.n); }
"""
# real uses of the libraries, each with the layer that must see it
LIBRARY_USES = r"""
#include <dlfcn.h>
extern "C" int cudnnCreate(void** handle);
extern "C" int rmsnorm_probe(void) { void* h; return cudnnCreate(&h) + (dlopen("libcublas.so", RTLD_NOW) != 0); }
"""


@needs_nvcc
def test_own_names_that_contain_a_library_name_pass_every_layer(cache, tmp_path):
    res, hits = _check(_planted(tmp_path, OWN_NAMES))
    assert res.code == 0 and not hits, res.doc["bans"]
    assert res.doc["build"]["ok"]


@needs_nvcc
def test_real_library_uses_still_fail(cache, tmp_path):
    res, hits = _check(_planted(tmp_path, OWN_NAMES + LIBRARY_USES))
    assert res.code == 1
    assert {("cuDNN", "source"), ("cuDNN", "preprocessed"), ("cuDNN", "host-symbols")} <= hits, hits
    assert {("cuBLAS", "source"), ("cuBLAS", "dlopen")} <= hits, hits
    details = {h["detail"] for h in res.doc["bans"]["hits"] if h["layer"] in ("host-symbols", "dlopen")}
    assert "undefined symbol cudnnCreate" in details and "names the library 'libcublas.so' (dlopen target)" in details
    # a header of the library (not installed here: the source layer names it, the build fails)
    res, hits = _check(_planted(tmp_path, "#include <cublas_v2.h>\n", "inc.cu"))
    assert res.code == 1 and ("cuBLAS", "source") in hits


def test_source_layer_reads_names_includes_and_namespaces(tmp_path):
    own = "void cudnn_style_epilogue();\nint cublas_like_tile;\nint cute = 1, cutlass = 2;\nvoid execute_cute();\n"
    assert not bans.check_source(_plant(tmp_path, "own.cu", own), "own.cu")
    uses = ["cublasSgemm(h);", "cublasLtMatmul(h);", "cudnnCreate(&h);", "#include <cublas_v2.h>",
            '#include "cudnn.h"', "cute::Tensor t;", "cutlass::half_t x;", "namespace cl = cutlass;",
            "using namespace cute;", "#define CUTLASS_DEVICE __device__", 'dlopen("libcublas.so", 0);',
            "cudnn_frontend::graph::Graph g;"]
    labels = ["cuBLAS", "cuBLASLt", "cuDNN", "cuBLAS", "cuDNN", "CuTe", "CUTLASS", "CUTLASS", "CuTe", "CUTLASS",
              "cuBLAS", "cuDNN"]
    path = _plant(tmp_path, "uses.cu", "\n".join(uses) + "\n")
    found = [(h.where, h.library) for h in bans.check_source(path, "uses.cu") if h.library != "runtime-code"]
    assert found == [(f"uses.cu:{i}", lib) for i, lib in enumerate(labels, 1)]


def test_strip_comments_reads_raw_strings_and_digit_separators(tmp_path):
    raw = 'const char* a = R"(" /*)"; cublasCreate(0); const char* b = u8R"x(*/ )" )x";\n'
    assert "cublasCreate" in bans.strip_comments(raw)
    sep = 'int n = 1\'000; const char* s = "\'/*"; cudnnCreate(0); /*"*/\n'
    assert "cudnnCreate" in bans.strip_comments(sep)
    hits = bans.check_source(_plant(tmp_path, "r.cu", raw), "r.cu")
    assert [(h.library, h.where) for h in hits] == [("cuBLAS", "r.cu:1")]
    assert bans.strip_comments('x = fooR"(a)"; // c\n') == 'x = fooR"(a)"; \n'


def test_preprocessed_lines_are_the_candidates_own_at_depth_zero():
    text = ('# 0 "c.cu"\n# 0 "<built-in>"\n# 0 "<command-line>"\n# 1 "/usr/include/stdc-predef.h" 1 3 4\n'
            '# 0 "<command-line>" 2\n# 1 "/cuda/cuda_runtime.h" 1\nint cublasInHeader;\n# 0 "<command-line>" 2\n'
            '# 1 "c.cu"\nint a;\n\nint b;\n# 1 "/usr/include/stdio.h"\nint hidden;\n'
            '# 1 "/usr/include/stdint.h" 1 3 4\nint header;\n# 5 "c.cu" 2\nint c;\n')
    assert bans.candidate_lines(text) == [(1, "int a;"), (3, "int b;"), (1, "int hidden;"), (5, "int c;")]


@needs_nvcc
def test_shipped_baselines_pass_every_static_layer_and_cache_the_preprocessing(cache):
    for task in ("rmsnorm", "flash_attn_fwd"):
        res = socratic("eval", f"src/socratic/kernels/{task}", "--check-only", "--json")
        assert res.code == 0 and res.doc["bans"] == {"ok": True, "hits": []}, res.doc["bans"]
    cached = list(cache.glob(f"builds/*/{bans.PREPROCESSED_CACHE}"))
    assert len(cached) == 2
    t0 = time.monotonic()
    res = socratic("eval", "src/socratic/kernels/rmsnorm", "--check-only", "--json")
    assert res.code == 0 and res.doc["build"]["cached"] and time.monotonic() - t0 < 5


def test_runtime_check_flags_mapped_banned_libraries():
    hits = bans.check_runtime(["/usr/lib/libc.so.6", "/opt/nvidia/lib/libcudnn_ops.so.9", "/x/libcublasLt.so.13"])
    assert [(h.library, h.layer) for h in hits] == [("cuDNN", "runtime"), ("cuBLASLt", "runtime")]


# Hopper: what an FA3-class kernel needs builds with the task's command ---------------------
@needs_nvcc
def test_hopper_probe_builds_links_the_driver_and_passes_the_ban_check(cache):
    probe = ROOT / "tests" / "candidates" / "hopper_probe.cu"
    res = socratic("eval", "flash_attn_fwd", "--candidate", str(probe), "--check-only", "--json")
    assert res.code == 0 and res.doc["build"]["ok"], res.doc["build"]["log"][-2000:]
    assert res.doc["bans"] == {"ok": True, "hits": []}
    (kernel,) = res.doc["build"]["resources"]
    assert kernel["spill_stores"] == 0 and kernel["registers"] == 168   # the setmaxnreg budget at entry
    # the TMA encoder comes from the driver library, linked rather than looked up at run time
    lib = next(p for p in cache.glob("builds/*/lib.so")    # the probe's (the task's own are built too)
               if (p.parent / "candidate.cu").read_bytes() == probe.read_bytes())
    dynamic = subprocess.run(["readelf", "-dW", str(lib)], capture_output=True, text=True).stdout
    assert "Shared library: [libcuda.so.1]" in dynamic
    symbols = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True).stdout
    assert "U cuTensorMapEncodeTiled" in symbols


# worker failures ---------------------------------------------------------------------------
def test_fatal_worker_reports_are_one_clean_line():
    from socratic.evaluator.protocol import Fatal

    def fatal_message(msg: dict) -> str:
        return Fatal.from_dict({"id": None, **msg}).message()
    # what a Python 3.11+ traceback's second-to-last line is: carets under the failing call
    internal = {"type": "fatal", "kind": "internal", "error": "OSError: lib.so: undefined symbol: X",
                "where": "worker.py:277 in _call"}
    line = fatal_message(internal)
    assert line == "evaluator error: OSError: lib.so: undefined symbol: X (at worker.py:277 in _call)"
    assert "^" not in fatal_message({**internal, "trace": "  x = f()\n      ^^^^^^^^\nOSError: boom"})
    assert fatal_message({"kind": "cuda", "error": "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal\n memory access"}) == \
        "CUDA error: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"
    load = {"kind": "load", "error": "the candidate library does not load: undefined symbol: cuTensorMapEncodeTiled"}
    assert fatal_message(load) == load["error"]


@needs_nvcc
def test_a_library_that_does_not_load_is_named_without_its_path(tmp_path):
    from socratic.evaluator.worker import LoadError, load_entry
    src = tmp_path / "u.cu"
    src.write_text('extern "C" int socratic_absent(void);\n'
                   'extern "C" int rmsnorm_fwd(const void*, void*) { return socratic_absent(); }\n')
    lib = tmp_path / "u.so"
    subprocess.run([find_nvcc(), "-shared", "-Xcompiler", "-fPIC", str(src), "-o", str(lib)], check=True, timeout=300)
    with pytest.raises(LoadError) as err:
        load_entry(str(lib), "rmsnorm_fwd")
    assert str(err.value) == "the candidate library does not load: undefined symbol: socratic_absent"
    src.write_text('extern "C" int other(void) { return 0; }\n')
    lib = tmp_path / "v.so"
    subprocess.run([find_nvcc(), "-shared", "-Xcompiler", "-fPIC", str(src), "-o", str(lib)], check=True, timeout=300)
    with pytest.raises(LoadError, match="^the candidate library does not export rmsnorm_fwd$"):
        load_entry(str(lib), "rmsnorm_fwd")


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
    assert parse_eval(doc).to_dict() == doc   # built through the declared types, nothing else
