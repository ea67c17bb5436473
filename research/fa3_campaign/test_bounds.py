"""research/fa3_campaign/bounds.py: the pipes' cycles per pair, the two bounds, and a bad
anchors file named in one line."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().with_name("bounds.py")
_spec = importlib.util.spec_from_file_location("bounds", TOOL)
assert _spec and _spec.loader
bounds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bounds)


def test_at_head_dim_64_the_exponentials_take_as_long_as_both_matrix_products():
    c = bounds.cycles(64)
    assert c["tensor"] == pytest.approx(c["exp"], rel=1e-3)
    assert bounds.tflops(64, "serial") == pytest.approx(bounds.PEAK / 2e12, rel=1e-3)
    assert bounds.cycles(128)["exp"] == pytest.approx(bounds.cycles(128)["tensor"] / 2, rel=1e-3)


def test_the_overlap_bound_is_the_tensor_peak_and_serial_grows_with_the_head_dim():
    assert bounds.tflops(256, "overlap") == pytest.approx(bounds.PEAK / 1e12, rel=1e-3)
    serial = [bounds.tflops(d, "serial") for d in (64, 96, 128, 192, 256)]
    assert serial == sorted(serial) and serial[-1] == pytest.approx(0.8 * bounds.PEAK / 1e12, rel=1e-3)


def test_prints_fa3_against_both_bounds_and_names_a_bad_file(tmp_path):
    good = tmp_path / "a.json"
    good.write_text(json.dumps([{"causal": False, "d": 128, "s": 8192, "fa3": 660.0, "cudnn": 600.0}]))
    out = subprocess.run([sys.executable, str(TOOL), str(good)], capture_output=True, text=True)
    assert out.returncode == 0 and "0.67" in out.stdout and "1.00" in out.stdout, out.stdout
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    out = subprocess.run([sys.executable, str(TOOL), str(bad)], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "b.json" in out.stderr
