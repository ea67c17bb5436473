"""socratic question bank: short, checkable questions posed at the five trigger moments.

Public API (the harness and the TUI code against exactly this):

    from bank import load_bank, Bank, Entry, SuggestContext, suggest, search, BankError
    bank = load_bank(extra_dirs=None)      # shipped, then user config dir, then extra_dirs
    suggest(bank, "plateau", SuggestContext(arch="hopper"), limit=5)
    search(bank, "spill registers", limit=20)

See bank/README.md for the file schema.
"""

from bank.fuzzy import search
from bank.loader import load_bank
from bank.model import Bank, BankError, Entry
from bank.rank import SuggestContext, suggest

__all__ = ["load_bank", "Bank", "Entry", "SuggestContext", "suggest", "search", "BankError"]
