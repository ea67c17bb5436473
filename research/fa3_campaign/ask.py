"""ask.py TRIGGER [asked ids...]: the bank's top suggestions for a trigger (what the harness poses)"""
import sys

from socratic.bank.loader import load_bank
from socratic.bank.rank import SuggestContext, suggest

ctx = SuggestContext(arch="hopper", has_comparison=True, asked=sys.argv[2:])
for e in suggest(load_bank(), sys.argv[1], ctx, limit=3):
    print(f"{e.id}: {e.text}")
