"""The parts' import rules (docs/ARCHITECTURE.md, "Import rules"; pyproject.toml's
[tool.importlinter]) hold, and a crossing breaks them.

import-linter finds a package's files from where it lies on disk; an editable install
maps core/, bank/, ... onto `socratic`, which it cannot follow, so the check runs on a copy
of the package's Python files laid out as installed (the same for an installed package).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "pyproject.toml"


def package_copy(dest: Path) -> Path:
    """The Python files of every package pyproject.toml lists, as `dest/socratic/...`."""
    packages = tomllib.loads(CONFIG.read_text())["tool"]["setuptools"]["packages"]
    for name in packages:
        src = Path(importlib.import_module(name).__path__[0])
        out = dest.joinpath(*name.split("."))
        out.mkdir(parents=True, exist_ok=True)
        for f in src.glob("*.py"):
            shutil.copy(f, out / f.name)
    return dest


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")
    return subprocess.run([sys.executable, "-c", code, str(CONFIG)], cwd=tree,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
                          capture_output=True, text=True, timeout=300)


def test_the_parts_keep_their_import_rules(tmp_path):
    r = lint_imports(package_copy(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 broken" in r.stdout


@pytest.mark.parametrize("module, line, broken", [
    # the harness never imports the TUI (the layers), nor another part's internals
    ("harness/cli.py", "from socratic.tui.app import run_watch",
     "socratic.harness.cli -> socratic.tui.app"),
    ("tui/widgets/question_picker.py", "from socratic.bank.model import by_group",
     "socratic.tui.widgets.question_picker -> socratic.bank.model"),
    # the shared layer imports no part, even inside a function
    ("eventlog.py", "def _f():\n    from socratic.bank import load_bank",
     "socratic.eventlog -> socratic.bank"),
])
def test_a_crossing_breaks_them(tmp_path, module, line, broken):
    tree = package_copy(tmp_path)
    target = tree / "socratic" / module
    target.write_text(target.read_text() + f"\n\n{line}\n")
    r = lint_imports(tree)
    assert r.returncode == 1, r.stdout
    assert broken in r.stdout, r.stdout
