"""What an install puts into site-packages: only `socratic` (plus its dist-info), with the
bundled tasks, the demo session and the TUI styles as package data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Local state that is no part of the source (and may be large or in use by another build).
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info",
                                     "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    # Build from a copy: setuptools writes build/ and *.egg-info into the tree it builds.
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=_NOT_SOURCE)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "out"),
                           str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = (tmp / "out").glob("socratic-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


@pytest.mark.slow
def test_the_wheel_holds_only_the_socratic_package(wheel_names: list[str]) -> None:
    top = {name.split("/", 1)[0] for name in wheel_names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1 and next(iter(dist_info)).startswith("socratic-")
    assert top - dist_info == {"socratic"}


@pytest.mark.slow
def test_the_wheel_holds_the_package_data(wheel_names: list[str]) -> None:
    names = set(wheel_names)
    src = ROOT / "src"
    tasks = {p.parent.name for p in src.glob("socratic/kernels/*/task.toml")}
    assert tasks, "no tasks in the checkout"
    for task in tasks:
        assert f"socratic/kernels/{task}/task.toml" in names
    data = [*(src / "socratic" / "sessions" / "demo").rglob("*"), *src.glob("socratic/tui/**/*.tcss")]
    for p in data:
        if p.is_file() and "__pycache__" not in p.parts:
            assert p.relative_to(src).as_posix() in names
    assert "socratic/py.typed" in names  # mypy checks an installed package through it
    assert not any(n.startswith("socratic_doubles") for n in names)   # the test doubles stay out


def test_the_parts_import_from_outside_the_checkout(tmp_path: Path) -> None:
    code = "import socratic.evaluator, socratic.harness, socratic.tui, socratic.bank"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
