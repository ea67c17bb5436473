"""research/fa3_campaign/cands.sh: the patch chain v101-v106 reverses from the shipped kernel
(v106 since session 24) in order (each step's hunks where the next step left the file), v106 is
v105 with the zero-row fill issued by a warp's lanes, and v100 is the kernel shipped before it
(sessions 20-24), byte for byte; v107 (session 25) goes forward from v106."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
def test_the_chain_rebuilds_every_kernel_from_the_shipped_one(tmp_path):
    out = subprocess.run(["bash", str(HERE / "cands.sh")], env={"CANDS": str(tmp_path), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    names = sorted(p.stem for p in tmp_path.glob("*.cu"))
    assert names == [f"v10{i}" for i in range(8)]
    shipped = (HERE.parents[1] / "tests" / "candidates" / "fa3_h200_best.cu").read_bytes()
    assert (tmp_path / "v106.cu").read_bytes() == shipped
    v100 = hashlib.sha256((tmp_path / "v100.cu").read_bytes()).hexdigest()
    assert v100 == "a707eb95d19dcb7440c28d381c903557775805557eda73cfa50f90318b5cba8e"   # evaluations 265, 270
    v105, v106 = (tmp_path / "v105.cu").read_text(), (tmp_path / "v106.cu").read_text()
    assert "u += gridDim.x) {" in v105 and "u += 32 * gridDim.x) {" in v106
    assert "if (lane != 0) return;" in v105 and "if (lane != 0) return;" not in v106
    v107 = (tmp_path / "v107.cu").read_text()
    assert "cudaMemset2DAsync" in v107 and "cudaMemset2DAsync" not in v106 and "int o_zeroed;" in v107


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
def test_a_patch_that_does_not_apply_stops_the_chain(tmp_path):
    # a copy of the workbench two folders below a tests/candidates/ whose kernel is another
    # (cands.sh finds the shipped kernel at ../../tests/candidates/ from itself)
    shutil.copytree(HERE, tmp_path / "research" / "fa3_campaign", ignore=shutil.ignore_patterns("cands", "results", "__pycache__"))
    (tmp_path / "tests" / "candidates").mkdir(parents=True)
    (tmp_path / "tests" / "candidates" / "fa3_h200_best.cu").write_text("// not the shipped kernel\n")
    out = subprocess.run(["bash", str(tmp_path / "research" / "fa3_campaign" / "cands.sh")],
                         env={"CANDS": str(tmp_path / "out"), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "v106_warp_fill.patch does not reverse from v106" in out.stdout
    assert not list((tmp_path / "out").glob("v105*"))
