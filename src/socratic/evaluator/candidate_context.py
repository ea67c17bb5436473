"""The candidate's device side: a CUDA context of its own inside the judge's process.

The judge replays the candidate's launches (evaluator.plan) here: the candidate's modules,
inputs, outputs, workspace, events and stream live in this context; the judge copies inputs
in and outputs out with the copy engines (cuMemcpyPeerAsync). A context is not a wall: both
contexts of the process share one address space, and a kernel of this one can write the
judge's memory (research/ctx_probe, on an H200). What it buys is its own modules, events and
stream, and allocations the judge can tell apart; what keeps the judge's buffers honest are
the keyed digests around every candidate run and the order of the calls (worker.py).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cuda.bindings import driver

from socratic.evaluator.gpu import BF16_NAN, F32_NAN, TOUCH_STRIDE, check, helpers_fatbin


@dataclass
class DevBuf:
    """An allocation in the candidate's context (the shape worker code expects: `.handle`)."""

    handle: int
    nbytes: int


class CandidateContext:
    def __init__(self, judge_ctx: int, device_ordinal: int = 0, l2_bytes: int = 64 << 20):
        self.judge_ctx = driver.CUcontext(judge_ctx)
        dev = check(driver.cuDeviceGet(device_ordinal))
        self.ctx = check(driver.cuCtxCreate(None, 0, dev))   # current now: pop it back
        try:
            self.stream = check(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
            self.module = check(driver.cuModuleLoadData(helpers_fatbin()))
            self.spin_kernel = check(driver.cuModuleGetFunction(self.module, b"spin"))
            self.touch_kernel = check(driver.cuModuleGetFunction(self.module, b"touch"))
            self._flush_bytes = max(2 * l2_bytes, 64 << 20)
            self._flush = int(check(driver.cuMemAlloc(self._flush_bytes)))
            self._scratch = int(check(driver.cuMemAlloc(4096)))
        finally:
            check(driver.cuCtxPopCurrent())
        self._salt = 0
        self._owned: list[int] = []
        self._ordinal = device_ordinal
        self.events: list[driver.CUevent] = []

    @contextmanager
    def current(self) -> Iterator[None]:
        """Make the candidate's context current for what follows (the judge's again after)."""
        check(driver.cuCtxPushCurrent(self.ctx))
        try:
            yield
        finally:
            check(driver.cuCtxPopCurrent())

    @property
    def stream_handle(self) -> int:
        return int(self.stream)

    # memory -------------------------------------------------------------------
    def alloc(self, nbytes: int) -> DevBuf:
        n = max(int(nbytes), 256)
        with self.current():
            ptr = int(check(driver.cuMemAlloc(n)))
        self._owned.append(ptr)
        return DevBuf(ptr, n)

    def free_all(self) -> None:
        """Free the scenario's buffers (the context and its helpers stay)."""
        with self.current():
            check(driver.cuCtxSynchronize())
            for ptr in self._owned:
                driver.cuMemFree(ptr)
        self._owned.clear()

    # enqueued on the candidate's stream (call inside `current()`) ---------------
    def poison(self, buf: DevBuf, dtype: str) -> None:
        if dtype == "f32":
            check(driver.cuMemsetD32Async(buf.handle, int(F32_NAN[0]), buf.nbytes // 4, self.stream))
        else:
            check(driver.cuMemsetD16Async(buf.handle, int(BF16_NAN[0]), buf.nbytes // 2, self.stream))

    def scramble(self, buf: DevBuf, salt: int) -> None:
        word = (salt * 2654435761) & 0xFFFFFFFF | 1
        check(driver.cuMemsetD32Async(buf.handle, word, buf.nbytes // 4, self.stream))

    @property
    def flush_region(self) -> tuple[int, int]:
        """(address, bytes) of the memory flush_l2 writes, for a flush inside a graph."""
        return self._flush, self._flush_bytes // 4 * 4

    def flush_l2(self) -> None:
        self._salt = (self._salt + 1) & 0xFFFFFFFF
        check(driver.cuMemsetD32Async(self._flush, self._salt, self._flush_bytes // 4, self.stream))

    def touch(self, buf: DevBuf) -> None:
        """Read `buf` once every TOUCH_STRIDE bytes (gpu.Gpu.touch), in this context."""
        n, stride = ctypes.c_uint64(buf.nbytes), ctypes.c_uint64(TOUCH_STRIDE)
        ptr = ctypes.c_uint64(buf.handle)
        args = (ctypes.c_void_p * 3)(ctypes.addressof(ptr), ctypes.addressof(n), ctypes.addressof(stride))
        check(driver.cuLaunchKernel(self.touch_kernel, (buf.nbytes // TOUCH_STRIDE) // 256 + 1, 1, 1, 256, 1, 1, 0,
                                    self.stream, ctypes.addressof(args), 0))

    def delay(self, seconds: float = 100e-6) -> None:
        """The judge's lead-in before a timed call (gpu.Gpu.delay), in this context."""
        cycles = ctypes.c_int64(int(seconds * 2.0e9))
        scratch = ctypes.c_uint64(self._scratch)
        args = (ctypes.c_void_p * 2)(ctypes.addressof(cycles), ctypes.addressof(scratch))
        check(driver.cuLaunchKernel(self.spin_kernel, 1, 1, 1, 32, 1, 1, 0, self.stream, ctypes.addressof(args), 0))

    def copy_in(self, dst: DevBuf, src_judge: int, nbytes: int, judge_stream: int | None) -> None:
        """Judge memory -> this context, in the order of the judge's stream `judge_stream`
        (this context stays idle: nothing of it runs beside the judge's work), or of this
        context's own stream where it is None (the caller keeps the judge's stream done first)."""
        stream = self.stream if judge_stream is None else driver.CUstream(judge_stream)
        check(driver.cuMemcpyPeerAsync(dst.handle, self.ctx, src_judge, self.judge_ctx, nbytes, stream))

    def copy_out(self, dst_judge: int, src: DevBuf, nbytes: int) -> None:
        """This context -> judge memory, in this stream's order (right after the candidate's
        end event: what its outputs hold when the stream gets there)."""
        check(driver.cuMemcpyPeerAsync(dst_judge, self.judge_ctx, src.handle, self.ctx, nbytes, self.stream))

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """Any memory of this process to any (one address space: the driver finds each
        pointer's context), in this stream's order."""
        check(driver.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream))

    def event(self, i: int) -> driver.CUevent:
        while len(self.events) <= i:
            with self.current():
                self.events.append(check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT)))
        return self.events[i]

    def record(self, i: int) -> None:
        check(driver.cuEventRecord(self.event(i), self.stream))

    def elapsed_ms(self, start: int, end: int) -> float:
        return float(check(driver.cuEventElapsedTime(self.event(start), self.event(end))))

    def sync(self) -> None:
        check(driver.cuStreamSynchronize(self.stream))

    def sync_all(self) -> None:
        with self.current():
            check(driver.cuCtxSynchronize())

    def close(self) -> None:
        try:
            driver.cuCtxDestroy(self.ctx)
        except Exception:
            pass
