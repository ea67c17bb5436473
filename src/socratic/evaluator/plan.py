"""Launch plans: the candidate's host code runs in one process, its device code is timed
and judged in another.

The candidate's library is loaded only by the launcher (evaluator.launcher), a sandboxed
child of the judge (evaluator.worker) that holds nothing the verdict depends on. The
launcher calls the entry point under CUDA stream capture with the judge's parameter struct
(device pointers as plain numbers) and sends back what it launched: a plan of kernel,
memset, memcpy and empty nodes and their order. The judge parses the plan as untrusted
data (`parse`, `check`), loads the candidate's device code from the built library's
fatbin section (`fatbin_images`) and replays the plan in its own context, where it times
and checks it. The baseline is captured and replayed the same way, so both sides are
measured alike. plan.cpp does the CUDA work of both sides (`PlanLib`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.evaluator.build import cache_root, find_nvcc, libcuda_stub_dir, toolchain_id

SOURCE = Path(__file__).with_name("plan.cpp")
MAGIC = b"SPLN"
FATBIN_MAGIC = 0xBA55ED50

# what a plan may hold; anything beyond is refused before CUDA sees it
MAX_NODES = 4096
MAX_PARAMS = 1024
MAX_PARAM_BYTES = 32764            # CUDA's limit on one launch's arguments
MAX_NAME = 4096
MAX_SMEM = 232448                  # 227 KB: Hopper's opt-in shared memory per block
MAX_CLUSTER = 16
NODE_TYPES = {100 + i: n for i, n in enumerate((
    "kernel", "memcpy", "memset", "host function", "child graph", "empty", "event wait", "event record",
    "external semaphore signal", "external semaphore wait", "memory allocation", "memory free",
    "batched memory operation", "conditional"))}
NODE_RULES = {
    "host function": "a host function in the stream (cudaLaunchHostFunc) would run the candidate's host code "
                     "in the judge: not allowed",
    "memory allocation": "allocates device memory inside the entry (cudaMallocAsync): device memory comes "
                         "from the given workspace",
    "memory free": "frees device memory inside the entry (cudaFreeAsync)",
}


class PlanError(Exception):
    """A plan the judge will not replay: one line naming the rule."""


@dataclass
class Kernel:
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    cluster: tuple[int, int, int]
    cluster_policy: int
    cooperative: int
    priority: int
    carveout: int
    access_window: int
    params: list[bytes]


@dataclass
class Memset:
    dst: int
    pitch: int
    value: int
    element_size: int
    width: int
    height: int

    def extent(self) -> tuple[int, int]:
        rows = max(1, self.height)
        return self.dst, self.pitch * (rows - 1) + self.width * self.element_size


@dataclass
class Memcpy:
    src: int
    dst: int
    width: int
    height: int
    depth: int
    src_type: int
    dst_type: int


@dataclass
class Empty:
    pass


Node = Kernel | Memset | Memcpy | Empty


@dataclass
class Edge:
    src: int
    dst: int
    from_port: int
    to_port: int
    type: int


@dataclass
class Plan:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    @property
    def kernels(self) -> list[Kernel]:
        return [n for n in self.nodes if isinstance(n, Kernel)]


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple[Any, ...]:   # struct.unpack_from's type (ints: the plan's formats)
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise PlanError("the launch plan is cut short")
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values

    def raw(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise PlanError("the launch plan is cut short")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out


def parse(data: bytes) -> Plan:
    """The plan's bytes (from an untrusted process) as records; PlanError when malformed."""
    r = _Reader(data)
    if r.raw(4) != MAGIC:
        raise PlanError("the launch plan is not one (bad magic)")
    version, n_nodes, n_edges = r.take("<III")
    if version != 1:
        raise PlanError(f"the launch plan has version {version}, expected 1")
    if n_nodes > MAX_NODES or n_edges > MAX_NODES * 8:
        raise PlanError(f"the entry launched {n_nodes} operations (at most {MAX_NODES})")
    plan = Plan()
    for _ in range(n_nodes):
        (kind,) = r.take("<I")
        if kind == 0:
            (name_len,) = r.take("<I")
            if name_len > MAX_NAME:
                raise PlanError("a kernel name in the launch plan is too long")
            name = r.raw(name_len).decode("ascii", errors="replace")
            g = r.take("<3I")
            b = r.take("<3I")
            (smem,) = r.take("<I")
            c = r.take("<3I")
            policy, coop, prio, carve = r.take("<4i")
            (window,) = r.take("<Q")
            (n_params,) = r.take("<I")
            if n_params > MAX_PARAMS:
                raise PlanError(f"kernel {name} has {n_params} arguments (at most {MAX_PARAMS})")
            params = []
            for _ in range(n_params):
                (size,) = r.take("<I")
                params.append(r.raw(size))
            plan.nodes.append(Kernel(name, g, b, smem, c, policy, coop, prio, carve, window, params))
        elif kind == 1:
            plan.nodes.append(Memset(*r.take("<QQIIQQ")))
        elif kind == 2:
            plan.nodes.append(Memcpy(*r.take("<QQQQQII")))
        elif kind == 3:
            plan.nodes.append(Empty())
        elif kind in NODE_TYPES:
            what = NODE_TYPES[kind]
            raise PlanError(NODE_RULES.get(what, f"the entry put a {what} node in its stream, which is not replayed "
                                                 "(kernels, memsets and device-to-device copies are)"))
        else:
            raise PlanError(f"the launch plan has an unknown node kind {kind}")
    for _ in range(n_edges):
        a, b_, fp, tp, t, _pad = r.take("<IIBBBB")
        if a >= n_nodes or b_ >= n_nodes or a == b_:
            raise PlanError("the launch plan's order names operations it does not have")
        plan.edges.append(Edge(a, b_, fp, tp, t))
    if r.at != len(data):
        raise PlanError("the launch plan has trailing bytes")
    return plan


Range = tuple[int, int]   # (address, bytes)


def _inside(start: int, size: int, ranges: list[Range]) -> bool:
    return size >= 0 and any(lo <= start and start + size <= lo + n for lo, n in ranges)


def check(plan: Plan, writable: list[Range], readable: list[Range]) -> None:
    """The rules a plan must keep to be replayed (PlanError otherwise): launch shapes
    within Hopper's limits, no L2 persistence windows, memsets and copies only inside the
    buffers the judge gave (outputs and workspace written; inputs read), copies device to
    device only."""
    for node in plan.nodes:
        if isinstance(node, Kernel):
            k = node
            if not all(1 <= d for d in k.grid) or k.grid[0] > 2**31 - 1 or max(k.grid[1:]) > 65535:
                raise PlanError(f"kernel {k.name}: grid {k.grid} is out of range")
            if not all(1 <= d for d in k.block) or k.block[0] * k.block[1] * k.block[2] > 1024:
                raise PlanError(f"kernel {k.name}: block {k.block} is out of range")
            if k.smem > MAX_SMEM:
                raise PlanError(f"kernel {k.name}: {k.smem} bytes of shared memory (at most {MAX_SMEM})")
            if any(k.cluster) and (min(k.cluster) < 1 or k.cluster[0] * k.cluster[1] * k.cluster[2] > MAX_CLUSTER):
                raise PlanError(f"kernel {k.name}: cluster {k.cluster} is out of range")
            if not 0 <= k.cluster_policy <= 2 or not -1 <= k.carveout <= 100:
                raise PlanError(f"kernel {k.name}: launch attributes out of range")
            if k.access_window:
                raise PlanError(f"kernel {k.name} sets an L2 access-policy window: L2 persistence is not allowed "
                                "(every launch starts from a flushed L2)")
            if sum(len(p) for p in k.params) > MAX_PARAM_BYTES:
                raise PlanError(f"kernel {k.name}: arguments exceed {MAX_PARAM_BYTES} bytes")
        elif isinstance(node, Memset):
            if node.element_size not in (1, 2, 4) or node.width < 1 or node.height < 1 or \
                    (node.height > 1 and node.pitch < node.width * node.element_size):
                raise PlanError("a memset in the launch plan has an invalid shape")
            start, size = node.extent()
            if not _inside(start, size, writable):
                raise PlanError(f"a memset writes {size} bytes at {start:#x}, outside the output and workspace "
                                "buffers given to the entry")
        elif isinstance(node, Memcpy):
            if node.height != 1 or node.depth != 1:
                raise PlanError("a copy in the launch plan is not a plain 1-D copy")
            if node.src_type == 1 or node.dst_type == 1:   # CU_MEMORYTYPE_HOST
                raise PlanError("the entry copies between host and device memory: constants belong in the "
                                "parameter struct or the kernel arguments, results in the outputs")
            if not _inside(node.src, node.width, readable) or not _inside(node.dst, node.width, writable):
                raise PlanError(f"a copy of {node.width} bytes reaches outside the buffers given to the entry "
                                "(a __device__ or __constant__ variable written from the host is not carried)")


def fatbin_images(library: Path) -> list[bytes]:
    """The CUDA fatbin images in a built library's .nv_fatbin section (the device code the
    build made and the ban check read); each loads as one module."""
    data = Path(library).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise PlanError(f"{library}: not a 64-bit ELF library")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(i: int) -> tuple[int, int, int]:
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size

    _n, str_off, _s = section(shstrndx)
    images = []
    for i in range(shnum):
        name_at, offset, size = section(i)
        name = data[str_off + name_at:data.index(b"\0", str_off + name_at)]
        if name != b".nv_fatbin":
            continue
        at, end = offset, offset + size
        while at + 16 <= end:
            magic, _version, header, fat = struct.unpack_from("<IHHQ", data, at)
            if magic != FATBIN_MAGIC:
                at += 8   # images are 8-byte aligned; padding between them
                continue
            images.append(data[at:at + header + fat])
            at += header + fat
    if not images:
        raise PlanError(f"{library}: no device code (.nv_fatbin) in the built library")
    return images


# --- the CUDA side (plan.cpp) ----------------------------------------------------------------

class _PlanKernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("cluster", ctypes.c_uint * 3), ("cluster_policy", ctypes.c_int),
                ("cooperative", ctypes.c_int), ("priority", ctypes.c_int), ("carveout", ctypes.c_int),
                ("n_params", ctypes.c_uint), ("param_sizes", ctypes.POINTER(ctypes.c_uint)),
                ("param_data", ctypes.POINTER(ctypes.c_void_p))]


class _PlanNode(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("k", _PlanKernel), ("dst", ctypes.c_ulonglong),
                ("pitch", ctypes.c_ulonglong), ("width", ctypes.c_ulonglong), ("height", ctypes.c_ulonglong),
                ("src", ctypes.c_ulonglong), ("value", ctypes.c_uint), ("element_size", ctypes.c_uint)]


class _PlanEdge(ctypes.Structure):
    _fields_ = [("src", ctypes.c_uint), ("dst", ctypes.c_uint), ("from_port", ctypes.c_ubyte),
                ("to_port", ctypes.c_ubyte), ("type", ctypes.c_ubyte)]


def library_path() -> Path:
    """plan.cpp built once per toolchain, beside the builds (linked against an empty
    libcuda stub where the machine has no driver library, as candidates are)."""
    code = SOURCE.read_bytes()
    key = hashlib.sha256(code + toolchain_id().encode()).hexdigest()[:16]
    path = cache_root().parent / "plan" / f"libplan-{key}.so"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    argv = [find_nvcc(), "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", str(SOURCE), "-o", str(tmp), "-lcuda"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 and "cannot find -lcuda" in proc.stderr and (stub := libcuda_stub_dir()):
        argv[-1:] = ["-Xlinker", "--no-as-needed", "-L", str(stub), "-lcuda"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise PlanError(f"{SOURCE}: the evaluator's plan library does not build: {proc.stderr.strip()[-300:]}")
    os.replace(tmp, path)
    return path


class PlanLib:
    """plan.cpp through ctypes. One per process; `init` makes or adopts its CUDA context."""

    def __init__(self, path: Path | None = None):
        lib = self.lib = ctypes.CDLL(str(path or library_path()), mode=ctypes.RTLD_LOCAL)
        c_err: list[type] = [ctypes.c_char_p, ctypes.c_size_t]
        lib.plan_init.argtypes = [ctypes.c_int, *c_err]
        lib.plan_mirror.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int, ctypes.POINTER(ctypes.c_int), *c_err]
        lib.plan_capture.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int), *c_err]
        lib.plan_free.argtypes = [ctypes.c_void_p]
        lib.plan_free_memory.restype = ctypes.c_ulonglong
        lib.plan_load_image.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), *c_err]
        lib.plan_unload.argtypes = [ctypes.c_void_p]
        lib.plan_build.argtypes = [ctypes.POINTER(_PlanNode), ctypes.c_uint, ctypes.POINTER(_PlanEdge), ctypes.c_uint,
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), *c_err]
        lib.plan_destroy_graph.argtypes = [ctypes.c_void_p]
        lib.plan_chain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.c_uint64, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), *c_err]
        lib.plan_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.plan_destroy_exec.argtypes = [ctypes.c_void_p]
        self.err = ctypes.create_string_buffer(512)

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise PlanError(self.err.value.decode(errors="replace") or f"error {rc}")

    def init(self, ordinal: int = 0) -> None:
        self._check(self.lib.plan_init(ordinal, self.err, len(self.err)))

    def mirror(self, ranges: list[Range]) -> int:
        flat = (ctypes.c_uint64 * (2 * len(ranges)))(*[v for r in ranges for v in r])
        placed = ctypes.c_int(0)
        self._check(self.lib.plan_mirror(flat, len(ranges), ctypes.byref(placed), self.err, len(self.err)))
        return placed.value

    def free_memory(self) -> int:
        return int(self.lib.plan_free_memory())

    def capture(self, entry: int, params: bytes, relaxed: bool = False) -> tuple[int, bytes]:
        """(the entry's return value, the plan's bytes); PlanError when capture failed."""
        buf = ctypes.create_string_buffer(params, len(params))
        out, n, rc = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int(0)
        status = self.lib.plan_capture(entry, buf, int(relaxed), ctypes.byref(out), ctypes.byref(n), ctypes.byref(rc),
                                       self.err, len(self.err))
        if status != 0:
            raise PlanError(self.err.value.decode(errors="replace"))
        try:
            return rc.value, ctypes.string_at(out.value or 0, n.value) if n.value else b""
        finally:
            self.lib.plan_free(out)

    def load_image(self, image: bytes) -> int:
        mod = ctypes.c_void_p()
        self._check(self.lib.plan_load_image(image, ctypes.byref(mod), self.err, len(self.err)))
        return int(mod.value or 0)

    def unload(self, module: int) -> None:
        self.lib.plan_unload(ctypes.c_void_p(module))

    def build(self, plan: Plan, modules: list[int]) -> int:
        """A CUDA graph of the (checked) plan; the caller owns it (destroy_graph)."""
        keep: list[object] = []   # ctypes buffers that must outlive the call
        nodes = (_PlanNode * len(plan.nodes))()
        for i, node in enumerate(plan.nodes):
            out = nodes[i]
            if isinstance(node, Kernel):
                out.kind = 0
                k = out.k
                k.name = node.name.encode()
                k.grid[:], k.block[:], k.cluster[:] = node.grid, node.block, node.cluster
                k.smem, k.cluster_policy, k.cooperative = node.smem, node.cluster_policy, node.cooperative
                k.priority, k.carveout, k.n_params = node.priority, node.carveout, len(node.params)
                blobs = [ctypes.create_string_buffer(p, max(1, len(p))) for p in node.params]
                sizes = (ctypes.c_uint * max(1, len(blobs)))(*[len(p) for p in node.params])
                ptrs = (ctypes.c_void_p * max(1, len(blobs)))(*[ctypes.addressof(b) for b in blobs])
                keep += [blobs, sizes, ptrs]
                k.param_sizes, k.param_data = sizes, ptrs
            elif isinstance(node, Memset):
                out.kind, out.dst, out.pitch, out.width, out.height = 1, node.dst, node.pitch, node.width, node.height
                out.value, out.element_size = node.value, node.element_size
            elif isinstance(node, Memcpy):
                out.kind, out.src, out.dst, out.width = 2, node.src, node.dst, node.width
            else:
                out.kind = 3
        edges = (_PlanEdge * max(1, len(plan.edges)))(
            *[_PlanEdge(e.src, e.dst, e.from_port, e.to_port, e.type) for e in plan.edges])
        mods = (ctypes.c_void_p * max(1, len(modules)))(*modules)
        graph = ctypes.c_void_p()
        self._check(self.lib.plan_build(nodes, len(plan.nodes), edges, len(plan.edges), mods, len(modules),
                                        ctypes.byref(graph), self.err, len(self.err)))
        return int(graph.value or 0)

    def destroy_graph(self, graph: int) -> None:
        self.lib.plan_destroy_graph(ctypes.c_void_p(graph))

    def chain(self, graphs: list[int], events: Sequence[int] = (), flush: tuple[int, int] = (0, 0)) -> int:
        """An instantiated graph that runs `graphs` back to back, with `events` (one more than
        the graphs, of the current context; or none) recorded before the first and after each.
        With `flush` (address, bytes: memory of the current context) that memory written
        between the copies, outside their marks, which are then each copy's start and end
        (2 a copy)."""
        want = self.marks(len(graphs), bool(flush[1]))
        if events and len(events) != want:
            raise PlanError(f"a chain of {len(graphs)} copies takes {want} events, not {len(events)}")
        arr = (ctypes.c_void_p * len(graphs))(*graphs)
        evs = (ctypes.c_void_p * len(events))(*events) if events else None
        exec_ = ctypes.c_void_p()
        self._check(self.lib.plan_chain(arr, len(graphs), evs, flush[0], flush[1], ctypes.byref(exec_),
                                        self.err, len(self.err)))
        return int(exec_.value or 0)

    @staticmethod
    def marks(copies: int, flush: bool) -> int:
        """How many event marks a chain of `copies` takes."""
        return 2 * copies if flush else copies + 1

    def launch(self, exec_: int, stream: int) -> None:
        rc = self.lib.plan_launch(ctypes.c_void_p(exec_), ctypes.c_void_p(stream))
        if rc != 0:
            raise PlanError(f"launching a replay failed (CUDA error {rc})")

    def destroy_exec(self, exec_: int) -> None:
        self.lib.plan_destroy_exec(ctypes.c_void_p(exec_))
