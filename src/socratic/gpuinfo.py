"""What GPUs this machine has, asked without a CUDA context of our own: the one probe
every part uses.

    gpu_info()        nvidia-smi's first GPU (name, driver, compute capability) and the
                      count: recorded in campaign.start, picks the bank's arch questions
    visible_gpus(env) the GPUs a fleet spreads its campaigns over: CUDA_VISIBLE_DEVICES
                      when set, else nvidia-smi's indices
    gpu_present()     None when this process can use a CUDA device, else why not (the CUDA
                      driver asked, which honours CUDA_VISIBLE_DEVICES as nvidia-smi does not)
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any


def nvidia_smi(fields: Sequence[str], timeout_s: float) -> list[list[str]] | None:
    """One row per GPU of `nvidia-smi --query-gpu=FIELDS` (each field stripped); None when
    there is no nvidia-smi, or it fails or outlasts `timeout_s` (no driver, a hung GPU)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:  # its complaint ("failed to communicate ...") is on stdout
        return None
    return [[p.strip() for p in line.split(",")] for line in out.stdout.splitlines()
            if line.strip()]


def gpu_info(timeout_s: float = 10.0) -> dict[str, Any] | None:
    """{"name", "driver", "cc", "count"} of this node's first GPU (None: none found)."""
    rows = nvidia_smi(("name", "driver_version", "compute_cap"), timeout_s)
    if not rows:
        return None
    first = rows[0]
    return {"name": first[0], "driver": first[1] if len(first) > 1 else None,
            "cc": first[2] if len(first) > 2 else None, "count": len(rows)}


def visible_gpus(env: Mapping[str, str], timeout_s: float = 30.0) -> list[str]:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES when set (indices or UUIDs, as
    written), else nvidia-smi's indices; none without a driver."""
    if "CUDA_VISIBLE_DEVICES" in env:
        return [g.strip() for g in env["CUDA_VISIBLE_DEVICES"].split(",") if g.strip()]
    rows = nvidia_smi(("index",), timeout_s) or []
    return [row[0] for row in rows if row[0].isdigit()]


def gpu_present() -> str | None:
    """None when a CUDA device is usable, else why not (checked without a context)."""
    try:
        from cuda.bindings import driver
        err, = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return f"the CUDA driver did not initialise ({err.name})"
        err, count = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS or count == 0:
            return "no CUDA device found"
    except Exception as exc:
        return f"no NVIDIA driver ({type(exc).__name__})"
    return None


def device_cc(timeout_s: float = 10.0) -> tuple[int, int] | None:
    """The compute capability of the GPU this process would use (CUDA device 0: the driver
    honours CUDA_VISIBLE_DEVICES), else nvidia-smi's first GPU; None on a machine without one."""
    try:
        from cuda.bindings import driver
        if driver.cuInit(0)[0] == driver.CUresult.CUDA_SUCCESS:
            attr = driver.CUdevice_attribute
            err, dev = driver.cuDeviceGet(0)
            e1, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
            e2, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
            if err == e1 == e2 == driver.CUresult.CUDA_SUCCESS:
                return int(major), int(minor)
    except Exception:
        pass
    return parse_cc((gpu_info(timeout_s) or {}).get("cc"))


def parse_cc(text: Any) -> tuple[int, int] | None:
    """"9.0" → (9, 0); anything else → None."""
    if not isinstance(text, str):
        return None
    major, _, minor = text.strip().partition(".")
    return (int(major), int(minor or 0)) if major.isdigit() and (minor or "0").isdigit() else None


def arch_for_cc(cc: tuple[int, int], arch_specific: bool) -> str:
    """The nvcc arch for a compute capability: sm_89, or sm_90a / sm_100a where the task asks
    for arch-specific features (wgmma, setmaxnreg, tcgen05: Hopper and later only run them
    from an `a` build)."""
    major, minor = cc
    return f"sm_{major}{minor}" + ("a" if arch_specific and major >= 9 else "")
