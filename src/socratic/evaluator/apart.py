"""Where a timed copy's output parted from the baseline's, said in one clause of a failure line.

The timed runs' spot check (worker: every copy against the baseline's same copy) keeps only a
running maximum on the device. When it first passes its tolerance, the worker reads that pair's
outputs back and asks this module where the two lie farthest apart, then runs both kernels
again on the same inputs, untimed: a kernel whose second run differs from its timed one is the
one that is not deterministic. Host arithmetic only (no GPU here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def host_values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """A device buffer's bytes as float32 values (bf16, f16 or f32)."""
    raw = np.ascontiguousarray(raw).view(np.uint8)
    if dtype == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if dtype == "f16":
        return raw.view(np.float16).astype(np.float32)
    return raw.view(np.float32).copy()


def rounding_step(base: np.ndarray, dtype: str) -> np.ndarray:
    """One rounding step of `dtype` at each baseline value (finite): the step above |base|, or
    at the largest finite value the one below (the device's rounding_step; the allowance is
    read from the baseline's value alone, out of the candidate's reach)."""
    m = np.abs(np.asarray(base, dtype=np.float32))
    if dtype == "bf16":
        u = (m.view(np.uint32) >> 16).astype(np.uint32)
        up = ((u + 1) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
        down = ((np.maximum(u, 1) - 1) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
        return np.asarray(np.where(np.isinf(up), m - down, up - m))
    small = np.float16 if dtype == "f16" else np.float32
    with np.errstate(over="ignore"):
        up = np.nextafter(m.astype(small), small(np.inf)).astype(np.float64)
        down = np.nextafter(m.astype(small), small(0)).astype(np.float64)
    return np.asarray(np.where(np.isinf(up), m - down, up - m))


def farthest(cand: np.ndarray, base: np.ndarray, dtype: str = "f32") -> tuple[int, float]:
    """The flat index where |cand - base| lies farthest beyond one rounding step of `dtype` at
    the baseline's value, and that distance, over the elements where both are finite, as the
    device's spot check measures it (a NaN or an infinity is counted by other checks); (0, 0.0)
    where none is."""
    both = np.isfinite(cand) & np.isfinite(base)
    if not both.any():
        return 0, 0.0
    c, b = np.where(both, cand, 0).astype(np.float32), np.where(both, base, 0).astype(np.float32)
    beyond = np.abs(c.astype(np.float64) - b) - rounding_step(b, dtype)
    d = np.where(both, np.maximum(beyond, 0.0), -1.0)
    i = int(np.argmax(d))
    return i, float(d[i])


def position(index: int, dims: Sequence[int], names: Sequence[str]) -> str:
    """A flat row-major index as `name i, ...` over the buffer's shape."""
    coords = np.unravel_index(index, tuple(dims)) if dims else ()
    return ", ".join(f"{n} {int(c)}" for n, c in zip(names, coords, strict=True))


@dataclass
class Apart:
    """One output's first parting in a timed run: pair, copy, where, the two values, and what a
    second, untimed run of each kernel on the same inputs gave at that place."""
    pair: int
    copy: int
    copies: int
    where: str
    cand: float
    base: float
    cand_again: float | None = None
    base_again: float | None = None
    warmup: bool = False   # a warm-up pair (numbered apart from the timed ones)

    def clause(self) -> str:
        line = (f"{'warm-up ' if self.warmup else ''}pair {self.pair}, copy {self.copy + 1} of {self.copies}, "
                f"at [{self.where}]: "
                f"candidate {self.cand:.6g}, baseline {self.base:.6g}")
        if self.cand_again is None or self.base_again is None:
            return line
        def again(first: float, second: float) -> str:
            return "the same" if first == second or (np.isnan(first) and np.isnan(second)) else f"{second:.6g}"
        return (line + f"; run again on the same inputs: candidate {again(self.cand, self.cand_again)}, "
                f"baseline {again(self.base, self.base_again)}")
