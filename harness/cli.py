"""`socratic run` and `socratic inject` (placeholder until the harness lands)."""


def register(sub) -> None:
    p = sub.add_parser("run", help="run an agent campaign on a task")
    p.set_defaults(handler=None)
    p = sub.add_parser("inject", help="send a question or control command to a campaign")
    p.set_defaults(handler=None)
