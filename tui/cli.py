"""`socratic watch` and `socratic replay` (placeholder until the TUI lands)."""


def register(sub) -> None:
    p = sub.add_parser("watch", help="watch a live campaign")
    p.set_defaults(handler=None)
    p = sub.add_parser("replay", help="replay a recorded campaign (default: the bundled demo)")
    p.set_defaults(handler=None)
