"""Thin layer over cuda.core / cuda.bindings for the evaluation worker: the device, a
non-blocking stream, owned allocations, the evaluator's own helper kernels, events and
host copies. Only evaluator.worker imports this (it needs a GPU)."""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from cuda.bindings import driver
from cuda.core import (
    Buffer,
    Device,
    EventOptions,
    LaunchConfig,
    MemoryResource,
    ObjectCode,
    StreamOptions,
    launch,
)

from socratic.evaluator.build import cache_root, find_nvcc, toolchain_id

if TYPE_CHECKING:   # cuda.core ships no stubs: to mypy these are Any, named for the reader
    from cuda.core import Event

HELPERS_SRC = Path(__file__).with_name("helpers.cu")
DIST = {"normal": 0, "uniform": 1, "zeros": 2}
STATS_DTYPE = np.dtype([
    ("checked", "<u8"), ("c_bad", "<u8"), ("b_bad", "<u8"), ("inf_mismatch", "<u8"),
    ("c_max", "<f4"), ("b_max", "<f4"), ("cb_max", "<f4"), ("pad", "<f4"),
    ("c_sum", "<f8"), ("b_sum", "<f8"),
])
BF16_NAN = np.array([0x7FC1], dtype=np.uint16)
F32_NAN = np.array([0x7FC00001], dtype=np.uint32)
TOUCH_STRIDE = 4096   # bytes between two reads of `touch`: no GPU page is smaller
HASHES_PER_LAUNCH = 512   # digests one hash_many launch computes (blockIdx.y)


class GpuError(RuntimeError):
    """A CUDA error; after a fault the context is unusable and the worker must exit."""


def check(result: object) -> Any:
    """Raise GpuError for a failed cuda.bindings call; return its value(s) otherwise (Any:
    cuda.bindings ships no stubs, so its values are untyped)."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        _, text = driver.cuGetErrorString(err)
        raise GpuError(f"{name.decode() if name else err}: {text.decode() if text else ''}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def helpers_fatbin() -> bytes:
    """The helper kernels, compiled once per toolchain (cached beside the builds)."""
    code = HELPERS_SRC.read_bytes()
    key = hashlib.sha256(code + toolchain_id().encode()).hexdigest()[:16]
    path = cache_root().parent / "helpers" / f"{key}.fatbin"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([find_nvcc(), "-fatbin", "-O3", "-std=c++17",
                        "-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_80,code=compute_80",
                        str(HELPERS_SRC), "-o", str(tmp)], check=True, capture_output=True, timeout=300)
        os.replace(tmp, path)
    return path.read_bytes()


class DirectMemory(MemoryResource):  # type: ignore[misc]  # cuda.core ships no stubs
    """Device memory from cuMemAlloc, freed by cuMemFree: the judge's buffers the same kind of
    allocation as the candidate context's (CandidateContext.alloc), not cuda.core's
    stream-ordered pool. On an H100 (s24c1, RMSNorm's baseline against itself, no marks
    between copies) the microsecond rows read 0 of 14 outside [0.99, 1.01] in both runs
    with it, 3 of 14 without (s23). Ours, not cuda.core's private synchronous resource: the
    device's cuda.core may differ from this one's, and the free needs the judge's context."""

    def __init__(self, device_id: int):
        self._device_id = device_id
        self._context = check(driver.cuCtxGetCurrent())   # the judge's (made current before)

    def allocate(self, size: int, stream: Any = None) -> Buffer:
        n = max(int(size), 256)
        return Buffer.from_handle(int(check(driver.cuMemAlloc(n))), n, mr=self)

    def deallocate(self, ptr: Any, size: int, stream: Any = None) -> None:
        # a buffer may be collected while the candidate's context is current
        check(driver.cuCtxPushCurrent(self._context))
        try:
            check(driver.cuMemFree(int(ptr)))
        finally:
            check(driver.cuCtxPopCurrent())

    @property
    def device_id(self) -> int:
        return self._device_id

    @property
    def is_device_accessible(self) -> bool:
        return True

    @property
    def is_host_accessible(self) -> bool:
        return False

    @property
    def is_managed(self) -> bool:
        return False


@dataclass
class DeviceInfo:
    name: str
    cc: str
    sms: int
    driver: int
    l2_bytes: int


class Gpu:
    def __init__(self, device_id: int = 0):
        self.device = Device(device_id)
        self.device.set_current()
        # non-blocking: work a candidate puts on the legacy default stream cannot hide in ours
        self.stream = self.device.create_stream(options=StreamOptions(nonblocking=True))
        self.module = ObjectCode.from_fatbin(helpers_fatbin())
        self.kernels = {n: self.module.get_kernel(n) for n in (
            "fill_bf16", "fill_f16", "fill_f32", "hash_many", "compare_bf16", "compare_f32", "spin", "work",
            "transform_bf16", "transform_f16", "transform_f32", "touch")}
        self._timing = EventOptions(timing_enabled=True)
        props = self.device.properties
        self.info = DeviceInfo(
            name=self.device.name, cc=f"{self.device.compute_capability[0]}.{self.device.compute_capability[1]}",
            sms=props.multiprocessor_count, driver=check(driver.cuDriverGetVersion()),
            l2_bytes=props.l2_cache_size,
        )
        self.grid = self.info.sms * 8
        self._memory = DirectMemory(device_id)
        self._flush = self.alloc(max(2 * self.info.l2_bytes, 64 << 20) + 4096)
        self._scratch = self.alloc(4096)
        self._digests = self.alloc(8 * HASHES_PER_LAUNCH)
        self._hash_table = self.alloc(16 * HASHES_PER_LAUNCH)
        self._hash_key = secrets.randbits(64)   # in no buffer of ours: kernel arguments only
        self._hash_round = 0   # hash_later's launches so far (one set of digests is kept)
        self._salt = 0

    # memory -----------------------------------------------------------------
    def alloc(self, nbytes: int) -> Buffer:
        return self._memory.allocate(max(int(nbytes), 256))

    def foreign(self, ptr: int, nbytes: int) -> Buffer:
        """Memory of another context of this process (one address space), as a buffer the
        helpers here can fill and read; never freed through it."""
        return Buffer.from_handle(ptr, nbytes)

    def free_memory(self) -> int:
        free, _total = check(driver.cuMemGetInfo())
        return int(free)

    def poison(self, buf: Buffer, dtype: str) -> None:
        if dtype == "f32":
            buf.fill(F32_NAN, stream=self.stream)
        else:
            buf.fill(BF16_NAN, stream=self.stream)

    def scramble(self, buf: Buffer, salt: int) -> None:
        buf.fill(np.array([(salt * 2654435761) & 0xFFFFFFFF | 1], dtype=np.uint32), stream=self.stream)

    def touch(self, buf: Buffer) -> None:
        """Read `buf` once every TOUCH_STRIDE bytes (its pages' translations cached here)."""
        n = int(buf.size)
        launch(self.stream, LaunchConfig(grid=(n // TOUCH_STRIDE) // 256 + 1, block=256), self.kernels["touch"],
               int(buf.handle), np.uint64(n), np.uint64(TOUCH_STRIDE))

    @property
    def flush_region(self) -> tuple[int, int]:
        """(address, bytes) of the memory flush_l2 writes, for a flush inside a graph."""
        return int(self._flush.handle), int(self._flush.size) // 4 * 4

    def flush_l2(self) -> None:
        """Overwrite a buffer twice the L2's size, so the next launch starts from DRAM."""
        self._salt = (self._salt + 1) & 0xFFFFFFFF
        self._flush.fill(np.array([self._salt], dtype=np.uint32), stream=self.stream)

    def to_host(self, buf: Buffer, nbytes: int, out: np.ndarray) -> np.ndarray:
        check(driver.cuMemcpyDtoHAsync(out.ctypes.data, int(buf.handle), nbytes, self.stream.handle))
        self.stream.sync()
        return out

    def from_host(self, buf: Buffer, arr: np.ndarray) -> None:
        arr = np.ascontiguousarray(arr)
        check(driver.cuMemcpyHtoDAsync(int(buf.handle), arr.ctypes.data, arr.nbytes, self.stream.handle))
        self.stream.sync()

    # helper kernels -----------------------------------------------------------
    def _launch(self, name: str, *args: object) -> None:
        launch(self.stream, LaunchConfig(grid=self.grid, block=256), self.kernels[name], *args)

    def fill(self, buf: Buffer, dtype: str, count: int, seed: int, init: str, a: float, b: float) -> None:
        if init == "zeros":
            buf.fill(0, stream=self.stream)
            return
        lo, hi = (a, b) if init == "normal" else (a - b * 3 ** 0.5, a + b * 3 ** 0.5)  # same mean and std
        self._launch(f"fill_{dtype}", int(buf.handle), np.uint64(count), np.uint64(seed),
                     np.int32(DIST[init]), np.float32(lo), np.float32(hi))

    def transform(self, buf: Buffer, dtype: str, count: int, scale: float, period: int, channels: int, factor: float,
                  row_length: int, spread: int, seed: int) -> None:
        """Reshape a filled input's distribution in place (helpers.cu `transform`)."""
        self._launch(f"transform_{dtype}", int(buf.handle), np.uint64(count), np.float32(scale), np.uint64(period),
                     np.uint64(channels), np.float32(factor), np.uint64(row_length), np.int32(spread), np.uint64(seed))

    def hash(self, buf: Buffer, nbytes: int) -> int:
        return self.hashes([(buf, nbytes)])[0]

    def hashes(self, bufs: list[tuple[Buffer, int]]) -> list[int]:
        """Keyed digests of several buffers: one launch and one sync for up to
        HASHES_PER_LAUNCH of them (the judge's memory around every candidate run). Returns
        once the stream has reached it, work enqueued before included (also for none).
        Call it only while the candidate's context is idle (hash_later says why)."""
        if not bufs:
            self.stream.sync()
            return []
        out: list[int] = []
        for start in range(0, len(bufs), HASHES_PER_LAUNCH):
            out += self.hash_results(self.hash_later(bufs[start:start + HASHES_PER_LAUNCH]))
        return out

    def hash_later(self, bufs: list[tuple[Buffer, int]]) -> tuple[int, int]:
        """Enqueue the keyed digests of 1..HASHES_PER_LAUNCH buffers (no wait): work enqueued
        after them may run before `hash_results` reads them (the judge's own, never the
        candidate's). The address table lies in the judge's memory, which a candidate's
        kernel can write: enqueue only while the candidate's context is idle (before its
        run, or after a sync of its whole context), so that the table the launch reads is
        the one written here. Returns the ticket `hash_results` takes."""
        if not 0 < len(bufs) <= HASHES_PER_LAUNCH:
            raise ValueError(f"hash_later takes 1 to {HASHES_PER_LAUNCH} buffers, not {len(bufs)}")
        table = np.array([(int(buf.handle), nbytes) for buf, nbytes in bufs], dtype=np.uint64)
        # from pageable memory: staged before the call returns, so `table` may go
        check(driver.cuMemcpyHtoDAsync(int(self._hash_table.handle), table.ctypes.data, table.nbytes,
                                       self.stream.handle))
        self._digests.fill(0, stream=self.stream)
        launch(self.stream, LaunchConfig(grid=(self.grid, len(bufs)), block=256), self.kernels["hash_many"],
               int(self._hash_table.handle), int(self._digests.handle), np.uint64(self._hash_key))
        self._hash_round += 1
        return self._hash_round, len(bufs)

    def hash_results(self, ticket: tuple[int, int]) -> list[int]:
        """The digests of `ticket`, once the stream has reached them (and everything enqueued
        after them); only the last hash_later's are there."""
        round_, n = ticket
        if round_ != self._hash_round:
            raise ValueError(f"hash_results: digests of round {round_} read after round {self._hash_round} overwrote them")
        return [int(x) for x in self.to_host(self._digests, 8 * n, np.zeros(n, np.uint64))]

    def compare(self, dtype: str, cand: Buffer, base: Buffer | None, ref: Buffer | None, count: int,
                stats: Buffer) -> None:
        """Accumulate comparison statistics into the device `stats` record (no sync)."""
        self._launch(f"compare_{dtype}", int(cand.handle), int(base.handle) if base else 0,
                     int(ref.handle) if ref else 0, np.uint64(count), int(stats.handle))

    def new_stats(self) -> Buffer:
        buf = self.alloc(STATS_DTYPE.itemsize)
        buf.fill(0, stream=self.stream)
        return buf

    def read_stats_many(self, bufs: Sequence[Buffer]) -> list[np.void]:
        """Several statistics records, read back with one wait."""
        out = np.zeros(len(bufs), dtype=STATS_DTYPE)
        for k, buf in enumerate(bufs):
            check(driver.cuMemcpyDtoHAsync(out[k:].ctypes.data, int(buf.handle), STATS_DTYPE.itemsize,
                                           self.stream.handle))
        self.stream.sync()
        return list(out)

    def read_stats(self, buf: Buffer) -> np.void:
        record: np.void = self.read_stats_many([buf])[0]   # one STATS_DTYPE record
        return record

    def delay(self, seconds: float = 100e-6) -> None:
        """Keep the GPU busy for a moment (one warp), so that the host has enqueued the
        timed launch before the GPU reaches its start event: host latency never lands
        inside a measurement, which matters for kernels of a few microseconds."""
        launch(self.stream, LaunchConfig(grid=1, block=32), self.kernels["spin"],
               np.int64(int(seconds * 2.0e9)), int(self._scratch.handle))

    def spin(self, seconds: float) -> None:
        cycles = int(seconds * 2.0e9)
        launch(self.stream, LaunchConfig(grid=self.info.sms * 4, block=128), self.kernels["spin"],
               np.int64(cycles), int(self._scratch.handle))
        self.stream.sync()

    def work_ms(self, iters: int = 500_000) -> float:
        """Milliseconds a fixed amount of arithmetic on every SM takes (about 1 ms alone
        at full clocks); events around it, on our stream."""
        start, end = self.event(), self.event()
        self.record(start)
        launch(self.stream, LaunchConfig(grid=self.info.sms, block=128), self.kernels["work"],
               np.int64(iters), int(self._scratch.handle))
        self.record(end)
        self.stream.sync()
        return float(end - start)

    def settings(self) -> dict[str, int]:
        """Device-wide and stream settings a candidate could change to slow the baseline
        down (L2 persistence, fetch granularity, cache config, our stream's access window)."""
        out: dict[str, int] = {}
        for name in ("CU_LIMIT_PERSISTING_L2_CACHE_SIZE", "CU_LIMIT_MAX_L2_FETCH_GRANULARITY"):
            try:
                out[name] = int(check(driver.cuCtxGetLimit(getattr(driver.CUlimit, name))))
            except (GpuError, AttributeError):
                pass
        try:
            out["cache_config"] = int(check(driver.cuCtxGetCacheConfig()))
            window = check(driver.cuStreamGetAttribute(
                self.stream.handle, driver.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW))
            out["stream_access_window_bytes"] = int(window.accessPolicyWindow.num_bytes)
        except (GpuError, AttributeError):
            pass
        return out

    # events -------------------------------------------------------------------
    def event(self) -> Event:
        return self.device.create_event(options=self._timing)

    def record(self, event: Event) -> None:
        self.stream.record(event)

    def sync(self) -> None:
        self.stream.sync()

    def sync_all(self) -> None:
        check(driver.cuCtxSynchronize())

    @property
    def stream_handle(self) -> int:
        return int(self.stream.handle)

