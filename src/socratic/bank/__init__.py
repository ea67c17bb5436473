"""socratic question bank: short, checkable questions posed at the five trigger moments.

Public API (the harness, the TUI and the report code against exactly this):

    from socratic.bank import load_bank, Bank, Entry, SuggestContext, suggest, search, BankError
    bank = load_bank(extra_dirs=None)      # shipped, then user config dir, then extra_dirs
    suggest(bank, "plateau", SuggestContext(arch="hopper"), limit=5)
    search(bank, "spill registers", limit=20)
    arch_from_cc("9.0")                    # -> "hopper" (extra helper for SuggestContext.arch)
    by_group(entries)                      # {group: [entries]}, in the groups' order (`bank list`)

See bank/README.md for the file schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socratic.lazyexports import lazy_exports

# Loaded on first use, so that `import socratic.bank.cli` (and `socratic --help`) stays cheap.
_WHERE = {
    "load_bank": ".loader", "Bank": ".model", "Entry": ".model", "BankError": ".model",
    "by_group": ".model", "SuggestContext": ".rank", "suggest": ".rank",
    "arch_from_cc": ".rank", "search": ".fuzzy",
}

__all__ = ["load_bank", "Bank", "Entry", "SuggestContext", "suggest", "search", "BankError",
           "arch_from_cc", "by_group"]

if TYPE_CHECKING:
    from socratic.bank.fuzzy import search
    from socratic.bank.loader import load_bank
    from socratic.bank.model import Bank, BankError, Entry, by_group
    from socratic.bank.rank import SuggestContext, arch_from_cc, suggest

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
