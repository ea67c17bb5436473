"""`mypy --strict` holds for core (the top-level modules, src/socratic/*.py) and the evaluator
through pyproject.toml's per-module flags (mypy's `strict` cannot be set per module): plain
`mypy`, which .ci/run runs, fails on a regression. The override lists core's modules one by
one, so a new top-level module must join it."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
STRICT_FLAGS = {
    "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls",
    "disallow_untyped_defs", "disallow_incomplete_defs", "check_untyped_defs",
    "disallow_untyped_decorators", "warn_return_any", "strict_equality", "extra_checks",
}


def strict_override() -> dict:
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    found = [o for o in mypy["overrides"] if "socratic.evaluator.*" in o["module"]]
    assert len(found) == 1, "one override holds the strict flags"
    return found[0]


# the parts (docs/ARCHITECTURE.md); every other package under src/socratic/ is core's
PARTS = {"evaluator", "harness", "bank", "report", "fleet", "tui", "kernels", "sessions"}


def core_packages() -> list[str]:
    return sorted(d.name for d in (REPO / "src" / "socratic").iterdir()
                  if (d / "__init__.py").is_file() and d.name not in PARTS)


def test_every_core_module_and_the_evaluator_are_strict():
    core = {"socratic" if f.stem == "__init__" else f"socratic.{f.stem}"
            for f in (REPO / "src" / "socratic").glob("*.py")}
    for name in core_packages():   # a core package: itself and its modules
        core |= {f"socratic.{name}", f"socratic.{name}.*"}
    override = strict_override()
    missing = core - set(override["module"])
    assert not missing, f"add to pyproject.toml's strict mypy override: {sorted(missing)}"
    assert {"socratic.evaluator", "socratic.evaluator.*"} <= set(override["module"])


def test_the_contracts_package_is_a_core_package():
    assert "contracts" in core_packages()


def test_the_override_turns_on_the_strict_flags():
    override = strict_override()
    assert all(override.get(flag) is True for flag in STRICT_FLAGS), override
    assert override.get("implicit_reexport") is False
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy.get("warn_unused_ignores") and mypy.get("warn_redundant_casts")   # global only
