"""A part's public API, loaded on first use (PEP 562).

Importing a part's cli module imports the part's package first; were its `__init__` to
import the modules behind its API, every `socratic ...` (and every hook) would pay for
them. The package names its public names instead, and each loads when first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, namespace: dict[str, Any], where: dict[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(__getattr__, __dir__) for `package`'s `__init__` (`namespace`: its globals()):
    each name of `where` comes from the submodule written beside it ('.model')."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value   # asked once
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
