"""Ceilings per GPU: the physical limits (datasheet peaks: nothing can run faster) and the
ceilings measured on our machines (what good kernels reach). A candidate time below the
physical limit is impossible and fails; the measured ceilings give `bound_fraction`
(on a GPU we have not measured, the datasheet's: a fraction of the physical bound).
A GPU not listed here has no bound: its rows say `-` and the table says so."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ceiling:
    flops: float                  # datasheet dense bf16 tensor FLOP/s
    bytes: float                  # datasheet DRAM B/s
    measured_flops: float | None = None   # bf16 GEMM reached on our machine
    measured_bytes: float | None = None   # device copy reached on our machine


# name substrings as nvidia-smi and the driver spell them, most specific first
CEILINGS: tuple[tuple[str, Ceiling], ...] = (
    ("H200 NVL", Ceiling(835e12, 4.8e12)),
    ("H200", Ceiling(989.4e12, 4.8e12, 790e12, 4.3e12)),
    ("H100 PCIe", Ceiling(756e12, 2.0e12)),
    ("H100 NVL", Ceiling(835e12, 3.9e12)),
    ("H100", Ceiling(989.4e12, 3.35e12, 760e12, 3.0e12)),          # SXM (80GB HBM3)
    ("GB200", Ceiling(2.5e15, 8.0e12)),
    ("B200", Ceiling(2.25e15, 8.0e12)),
    ("A100-SXM4-80GB", Ceiling(312e12, 2.039e12)),
    ("A100 80GB PCIe", Ceiling(312e12, 1.935e12)),
    ("A100-PCIE-80GB", Ceiling(312e12, 1.935e12)),
    ("A100", Ceiling(312e12, 1.555e12)),                            # the 40 GB parts
    ("L40S", Ceiling(362.05e12, 0.864e12)),
)


def ceiling(gpu_name: str) -> Ceiling | None:
    for key, value in CEILINGS:
        if key in gpu_name:
            return value
    return None


def no_bound_note(gpu_name: str) -> str | None:
    """One line for a GPU without datasheet figures here (None when it has them)."""
    if ceiling(gpu_name) is not None:
        return None
    return (f"unknown GPU {gpu_name!r}: no time bound (bound columns empty; datasheet figures "
            f"are known for A100, L40S, H100 PCIe/SXM/NVL, H200, B200)")


def bound_ms(gpu_name: str, flops: float, nbytes: float) -> dict[str, float | None]:
    """Lower bounds on a kernel's time in ms: `physical` from the datasheet peaks,
    `measured` from the measured ceilings, else the datasheet's (max of the compute and
    memory terms each)."""
    c = ceiling(gpu_name)
    if c is None:
        return {"physical": None, "measured": None}
    meas_f, meas_b = c.measured_flops or c.flops, c.measured_bytes or c.bytes
    return {
        "physical": max(flops / c.flops, nbytes / c.bytes) * 1e3,
        "measured": max(flops / meas_f, nbytes / meas_b) * 1e3,
    }
