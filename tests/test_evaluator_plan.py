"""Launch plans (evaluator/plan.py), CPU side: the judge reads a plan from the candidate's
process as untrusted bytes and refuses, with one line naming the rule, what it will not
replay; the device code comes from the built library's fatbin section; the candidate's
process confines itself (no writes, no capabilities, no new processes, no reach into the
judge's memory or signals)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys

import pytest

from socratic.evaluator.plan import Empty, Kernel, Memcpy, Memset, PlanError, check, fatbin_images, parse
from tests.evalcli import ROOT, socratic

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
OUT, WS, INP = 0x7F0000000000, 0x7F0000100000, 0x7F0000200000
WRITABLE = [(OUT, 4096), (WS, 1 << 20)]
READABLE = WRITABLE + [(INP, 8192)]


def kernel(name: str = "k", grid=(1, 1, 1), block=(128, 1, 1), smem: int = 0, cluster=(0, 0, 0),
           window: int = 0, params: tuple[bytes, ...] = (struct.pack("<Q", OUT),)) -> bytes:
    head = struct.pack("<II", 0, len(name)) + name.encode()
    body = struct.pack("<3I3II3I4iQI", *grid, *block, smem, *cluster, 0, 0, 0, -1, window, len(params))
    return head + body + b"".join(struct.pack("<I", len(p)) + p for p in params)


def memset(dst: int, width: int, elem: int = 4, height: int = 1, pitch: int = 0) -> bytes:
    return struct.pack("<IQQIIQQ", 1, dst, pitch, 0, elem, width, height)


def memcpy(src: int, dst: int, n: int, src_type: int = 2, dst_type: int = 2) -> bytes:
    return struct.pack("<IQQQQQII", 2, src, dst, n, 1, 1, src_type, dst_type)


def plan(*nodes: bytes, edges: tuple[tuple[int, int], ...] = ()) -> bytes:
    out = b"SPLN" + struct.pack("<III", 1, len(nodes), len(edges)) + b"".join(nodes)
    return out + b"".join(struct.pack("<IIBBBB", a, b, 0, 0, 0, 0) for a, b in edges)


def test_a_plan_reads_back_as_its_nodes_and_order():
    p = parse(plan(memset(WS, 4), kernel("attn", grid=(132, 2, 1), cluster=(2, 1, 1)), struct.pack("<I", 3),
                   memcpy(INP, OUT, 64), edges=((0, 1), (1, 2), (2, 3))))
    assert [type(n) for n in p.nodes] == [Memset, Kernel, Empty, Memcpy]
    k = p.kernels[0]
    assert (k.name, k.grid, k.cluster, k.params) == ("attn", (132, 2, 1), (2, 1, 1), [struct.pack("<Q", OUT)])
    assert [(e.src, e.dst) for e in p.edges] == [(0, 1), (1, 2), (2, 3)]
    check(p, WRITABLE, READABLE)   # within the rules


@pytest.mark.parametrize("data, rule", [
    (b"", "cut short"),
    (b"XXXX" + bytes(12), "bad magic"),
    (plan(kernel())[:-3], "cut short"),
    (plan(kernel()) + b"\0", "trailing bytes"),
    (b"SPLN" + struct.pack("<III", 1, 10**6, 0), "at most 4096"),
    (plan(kernel(), edges=((0, 5),)), "names operations it does not have"),
    (plan(struct.pack("<I", 103)), "host function"),
    (plan(struct.pack("<I", 110)), "allocates device memory inside the entry"),
    (plan(struct.pack("<I", 104)), "child graph"),
    (plan(struct.pack("<I", 77)), "unknown node kind"),
])
def test_malformed_or_unreplayable_plans_are_refused_in_one_line(data, rule):
    with pytest.raises(PlanError, match=rule) as err:
        parse(data)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("node, rule", [
    (kernel(grid=(0, 1, 1)), "grid"),
    (kernel(block=(2048, 1, 1)), "block"),
    (kernel(smem=300_000), "shared memory"),
    (kernel(cluster=(32, 1, 1)), "cluster"),
    (kernel(window=1 << 20), "L2 access-policy window"),
    (kernel(params=(bytes(40_000),)), "arguments exceed"),
    (memset(INP, 16), "outside the output and workspace"),          # an input is not written
    (memset(WS + (1 << 20) - 8, 4), "outside the output and workspace"),   # runs past the end
    (memset(WS, 16, elem=3), "invalid shape"),
    (memcpy(0x1000, OUT, 64, src_type=1), "between host and device"),
    (memcpy(INP, INP, 64), "reaches outside the buffers"),
    (memcpy(0x5000_0000, OUT, 64), "reaches outside the buffers"),   # a __device__ variable of its own
])
def test_plans_that_break_a_rule_are_refused_naming_it(node, rule):
    with pytest.raises(PlanError, match=rule):
        check(parse(plan(kernel(), node)), WRITABLE, READABLE)


@needs_nvcc
def test_the_device_code_is_read_from_the_built_library(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_CACHE", str(tmp_path / "cache"))
    res = socratic("eval", "src/socratic/kernels/rmsnorm", "--check-only", "--json")
    assert res.code == 0, res.stderr
    libs = sorted((tmp_path / "cache").glob("builds/*/lib.so"))   # the candidate's and the task's reference
    assert len(libs) == 2, libs
    for lib in libs:
        images = fatbin_images(lib)
        assert images and all(struct.unpack_from("<I", img)[0] == 0xBA55ED50 for img in images)
        kept = b"".join(p.read_bytes() for p in lib.parent.glob("keep/*.cubin"))
        assert any(b"rmsnorm" in img for img in images) and b"rmsnorm" in kept


def test_a_library_without_device_code_is_refused(tmp_path):
    lib = tmp_path / "host_only.so"
    src = tmp_path / "x.c"
    src.write_text("int f(void) { return 1; }\n")
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    with pytest.raises(PlanError, match="no device code"):
        fatbin_images(lib)
    (tmp_path / "text.so").write_text("not an ELF file")
    with pytest.raises(PlanError, match="not a 64-bit ELF"):
        fatbin_images(tmp_path / "text.so")


CONFINED = r'''
import os, subprocess, sys, threading
from socratic.evaluator.sandbox import confine_launcher
parent = os.getppid()
print("state", confine_launcher())
def attempt(what, fn):
    try:
        fn(); print(what, "allowed")
    except OSError as exc:
        print(what, "denied")
t = threading.Thread(target=lambda: print("thread allowed")); t.start(); t.join()
attempt("fork", lambda: os._exit(0) if os.fork() == 0 else None)
attempt("exec", lambda: subprocess.run(["true"]))
attempt("signal", lambda: os.kill(parent, 0))
attempt("memory", lambda: open(f"/proc/{parent}/mem", "rb").read(1))
attempt("write", lambda: open(sys.argv[1], "w").write("x"))
'''


def test_the_candidate_process_confines_itself(tmp_path):
    out = subprocess.run([sys.executable, "-c", CONFINED, str(tmp_path / "poison")], capture_output=True,
                         text=True, cwd=ROOT, timeout=60).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    if "landlock" not in lines["state"] or "seccomp" not in lines["state"]:
        pytest.skip(f"this kernel lacks Landlock or seccomp: {lines['state']}")
    assert lines["thread"] == "allowed"   # CUDA and Python still make threads
    for what in ("fork", "exec", "signal", "memory", "write"):
        assert lines[what] == "denied", out
    assert not (tmp_path / "poison").exists()




def test_timed_samples_use_the_first_distributions_input_sets_only():
    """Timed copies reuse the correctness input sets of the task's first distribution (the
    inputs its comparisons are timed on), at most one copy each; the copies past them get
    input sets of their own (never one set twice in a sample)."""
    from socratic.evaluator.worker import timed_sets, timing_slots

    dists = ["normal", "large_logits", "outlier_channels"]
    assert timed_sets(dists) == [0]
    assert timed_sets(["normal", "extreme_rows", "normal"]) == [0, 2]
    assert timing_slots(["normal", "extreme_rows", "normal"], 1) == [0]
    assert timing_slots(["normal", "extreme_rows", "normal"], 31) == [0, 2]
