"""socratic's Python children import nothing from where socratic was started and inherit
no interpreter settings (issue 39: a `statistics.py` in the folder where `socratic eval` was
typed tripled FA3's measured time)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from socratic.evaluator.comparisons import ComparisonRun
from socratic.taskfile import load_task
from tests.evalcli import ROOT

PLANT = "import pathlib; pathlib.Path({marker!r}).write_text(__name__)\n"


def _plant(folder: Path, marker: Path) -> None:
    for name in ("statistics", "json", "sitecustomize", "usercustomize"):
        (folder / f"{name}.py").write_text(PLANT.format(marker=str(marker)))


def test_the_comparison_process_imports_no_planted_module(tmp_path, monkeypatch):
    plant, marker = tmp_path / "workspace", tmp_path / "imported"
    plant.mkdir()
    _plant(plant, marker)
    monkeypatch.chdir(plant)
    monkeypatch.setenv("PYTHONPATH", str(plant))
    monkeypatch.setenv("PYTHONSTARTUP", str(plant / "statistics.py"))
    run = ComparisonRun(load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"))
    assert run.proc is not None
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and run.proc.poll() is None and not marker.exists():
            time.sleep(0.2)   # it imports its modules (and torch, where present) at once
        assert not marker.exists(), f"a planted module was imported: {marker.read_text()}"
        env = Path(f"/proc/{run.proc.pid}/environ")
        if run.proc.poll() is None and env.exists():
            names = {kv.split(b"=", 1)[0] for kv in env.read_bytes().split(b"\0") if kv}
            assert not {n for n in names if n.startswith((b"PYTHON", b"LD_"))}
            assert os.readlink(f"/proc/{run.proc.pid}/cwd") != str(plant)
    finally:
        run.cancel()
