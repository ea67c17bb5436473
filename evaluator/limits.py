"""Ceilings per GPU: the physical limits (datasheet peaks: nothing can run faster) and the
ceilings measured on our machines (what good kernels reach). A candidate time below the
physical limit is impossible and fails; the measured ceilings give `bound_fraction`."""

from __future__ import annotations

# name substring → (peak dense bf16 FLOP/s, peak DRAM B/s, measured bf16 GEMM FLOP/s, measured copy B/s)
CEILINGS = {
    "H200": (989.4e12, 4.8e12, 790e12, 4.3e12),
    "H100": (989.4e12, 3.35e12, 760e12, 3.0e12),
}


def ceilings(gpu_name: str) -> tuple[float, float, float, float] | None:
    for key, values in CEILINGS.items():
        if key in gpu_name:
            return values
    return None


def bound_ms(gpu_name: str, flops: float, nbytes: float) -> dict[str, float | None]:
    """Lower bounds on a kernel's time in ms: `physical` from the datasheet peaks,
    `measured` from the measured ceilings (max of the compute and memory terms each)."""
    c = ceilings(gpu_name)
    if c is None:
        return {"physical": None, "measured": None}
    peak_f, peak_b, meas_f, meas_b = c
    return {
        "physical": max(flops / peak_f, nbytes / peak_b) * 1e3,
        "measured": max(flops / meas_f, nbytes / meas_b) * 1e3,
    }
