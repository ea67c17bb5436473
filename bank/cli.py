"""`socratic bank ...` (placeholder until the bank lands)."""


def register(sub) -> None:
    p = sub.add_parser("bank", help="question bank: list, show, search, validate, stats")
    p.set_defaults(handler=None)
