"""socratic question bank: short, checkable questions posed at the five trigger moments.

Public API (the harness and the TUI code against exactly this):

    from socratic.bank import load_bank, Bank, Entry, SuggestContext, suggest, search, BankError
    bank = load_bank(extra_dirs=None)      # shipped, then user config dir, then extra_dirs
    suggest(bank, "plateau", SuggestContext(arch="hopper"), limit=5)
    search(bank, "spill registers", limit=20)
    arch_from_cc("9.0")                    # -> "hopper" (extra helper for SuggestContext.arch)

See bank/README.md for the file schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Loaded on first use, so that `import socratic.bank.cli` (and `socratic --help`) stays cheap.
_WHERE = {
    "load_bank": ".loader", "Bank": ".model", "Entry": ".model",
    "BankError": ".model", "SuggestContext": ".rank", "suggest": ".rank",
    "arch_from_cc": ".rank", "search": ".fuzzy",
}

__all__ = ["load_bank", "Bank", "Entry", "SuggestContext", "suggest", "search", "BankError",
           "arch_from_cc"]

if TYPE_CHECKING:
    from socratic.bank.fuzzy import search
    from socratic.bank.loader import load_bank
    from socratic.bank.model import Bank, BankError, Entry
    from socratic.bank.rank import SuggestContext, arch_from_cc, suggest


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'socratic.bank' has no attribute '{name}'")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
