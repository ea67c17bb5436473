"""The one GPU probe (socratic.gpuinfo), with a stand-in nvidia-smi on PATH."""

from __future__ import annotations

import os
import stat

import pytest

from socratic import gpuinfo


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """Write `nvidia-smi` printing `out` and exiting `rc`; PATH holds only it."""
    def make(out: str, rc: int = 0) -> None:
        exe = tmp_path / "nvidia-smi"
        exe.write_text(f"#!/bin/sh\nprintf '%s' '{out}'\nexit {rc}\n")
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin:/bin")
    return make


def test_gpu_info_is_the_first_gpu_and_the_count(fake_smi):
    fake_smi("NVIDIA H200, 570.1, 9.0\nNVIDIA H200, 570.1, 9.0\n")
    assert gpuinfo.gpu_info() == {"name": "NVIDIA H200", "driver": "570.1", "cc": "9.0",
                                  "count": 2}


def test_a_failing_nvidia_smi_is_no_gpu(fake_smi):
    # its complaint is on stdout: it must not be taken for a GPU's name
    fake_smi("NVIDIA-SMI has failed because it could not communicate with the driver\n", rc=9)
    assert gpuinfo.gpu_info() is None
    assert gpuinfo.visible_gpus({}) == []


def test_visible_gpus(fake_smi):
    fake_smi("0\n1\n")
    assert gpuinfo.visible_gpus({}) == ["0", "1"]
    assert gpuinfo.visible_gpus({"CUDA_VISIBLE_DEVICES": "3, GPU-ab"}) == ["3", "GPU-ab"]
    assert gpuinfo.visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []


def test_no_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpuinfo.gpu_info() is None and gpuinfo.visible_gpus({}) == []
