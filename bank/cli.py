"""`socratic bank list|show ID|search TEXT|validate|stats [--bank-dir DIR] [--json]`;
`socratic bank stats --sessions SESSION...`: the entries asked there and what followed.

Human output goes to stdout and fits 80 columns; `--json` prints one JSON document.
`--bank-dir` and `--json` are accepted before or after the action.
"""

from __future__ import annotations

import argparse

WIDTH = 80
ACTIONS = ("list", "show", "search", "validate", "stats")


def _common(p: argparse.ArgumentParser, suffix: str, suppress: bool) -> None:
    p.add_argument("--bank-dir", dest=f"bank_dirs{suffix}", action="append", metavar="DIR",
                   default=argparse.SUPPRESS if suppress else None,
                   help="also load the bank files in DIR (or the file DIR); repeatable")
    p.add_argument("--json", dest=f"json{suffix}", action="store_true",
                   default=argparse.SUPPRESS if suppress else False,
                   help="print one JSON document on stdout")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a positive whole number")
    return value


def register(sub) -> None:
    p = sub.add_parser("bank", help="question bank: list, show, search, validate, stats",
                       description="The question bank: shipped files, then the user config "
                       "directory ($SOCRATIC_BANK_DIR or ~/.config/socratic/bank), then "
                       "each --bank-dir.")
    _common(p, "", suppress=False)
    p.set_defaults(handler=_handler, bank_action=None)
    actions = p.add_subparsers(dest="bank_action", metavar="ACTION")
    helps = {
        "list": "every entry, grouped by group",
        "show": "every field of one entry",
        "search": "fuzzy search over id, group and text",
        "validate": "load every bank file and check it",
        "stats": "counts by kind, group, arch, provenance and trigger; with --sessions, "
                 "the entries asked in those sessions and what followed",
    }
    for name in ACTIONS:
        a = actions.add_parser(name, help=helps[name], description=helps[name])
        if name == "show":
            a.add_argument("id", metavar="ID")
        if name == "search":
            a.add_argument("text", nargs="+", metavar="TEXT")
            a.add_argument("--limit", type=_positive_int, default=20, metavar="N",
                           help="at most N results (20)")
        if name == "stats":
            a.add_argument("--sessions", nargs="+", metavar="SESSION",
                           help="session folders or folders of sessions: which entries were "
                           "asked there, and whether the best geomean or min went up after")
            a.add_argument("--window", type=_positive_int, default=5, metavar="N",
                           help="with --sessions: progress within the next N evaluations (5)")
        _common(a, "_after", suppress=True)


def _handler(args: argparse.Namespace) -> int:
    import sys

    action = args.bank_action
    if action is None:
        print("socratic bank: error: choose an action: " + ", ".join(ACTIONS), file=sys.stderr)
        return 2
    dirs = (args.bank_dirs or []) + (getattr(args, "bank_dirs_after", None) or [])
    as_json = bool(args.json or getattr(args, "json_after", False))

    from pathlib import Path

    from socratic.bank import load_bank

    bank = load_bank([Path(d) for d in dirs])
    return {"list": _list, "show": _show, "search": _search, "validate": _validate,
            "stats": _stats}[action](bank, args, as_json)


def _emit(doc) -> None:
    import json

    print(json.dumps(doc, indent=2))


def _wrap(text: str, indent: str, first: str | None = None) -> str:
    import textwrap

    return textwrap.fill(text, WIDTH, initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def _tag(entry) -> str:
    if entry.kind == "arch":
        return f"  [{entry.arch}]"
    if entry.kind == "comparison":
        return "  [comparison]"
    return ""


def _brief(entry) -> str:
    return f"  {entry.id}{_tag(entry)}\n{_wrap(entry.text, '      ')}"


def _list(bank, args, as_json: bool) -> int:
    from socratic.bank.model import by_group

    if as_json:
        _emit([e.to_dict() for e in bank.entries])
        return 0
    blocks = [f"{group} ({len(entries)})\n" + "\n".join(_brief(e) for e in entries)
              for group, entries in by_group(bank.entries).items()]
    print("\n\n".join(blocks))
    return 0


def close_ids(ids: list[str], typed: str, n: int = 3, cutoff: float = 0.75) -> list[str]:
    """Ids that look like a mistyped `typed`: the whole id, or its name without the group
    (`stall-reasons` for `gap.stall-reasons`), spelled nearly alike. Unrelated words get none."""
    from difflib import SequenceMatcher

    typed = typed.strip().lower()
    tail = typed.rsplit(".", 1)[-1]
    scored = []
    for i in ids:
        r = max(SequenceMatcher(None, typed, i.lower()).ratio(),
                SequenceMatcher(None, tail, i.rsplit(".", 1)[-1].lower()).ratio())
        if r >= cutoff:
            scored.append((-r, i))
    return [i for _, i in sorted(scored)[:n]]


def _show(bank, args, as_json: bool) -> int:
    from socratic.bank.model import BankError

    entry = bank.get(args.id)
    if entry is None:
        near = close_ids([e.id for e in bank.entries], args.id)
        hint = f" (did you mean: {', '.join(near)})" if near else \
            " (`socratic bank list` shows every id; `socratic bank search WORDS` searches them)"
        raise BankError(f"no bank entry with id '{args.id}'{hint}")
    if as_json:
        _emit(entry.to_dict())
        return 0
    rows = [
        ("id", entry.id), ("kind", entry.kind), ("group", entry.group),
        ("level", entry.level), ("triggers", ", ".join(entry.triggers)),
        ("arch", entry.arch or "any"),
        ("requires_comparison", "yes" if entry.requires_comparison else "no"),
        ("provenance", entry.provenance), ("source", entry.source or "-"),
        ("file", f"{entry.file}:{entry.line}"),
    ]
    print(_wrap(entry.text, ""))
    print()
    for name, value in rows:
        print(_wrap(str(value), " " * 21, first=f"{name + ':':<21}"))
    print()
    print("why:")
    print(_wrap(entry.why, "  "))
    return 0


def _search(bank, args, as_json: bool) -> int:
    from socratic.bank import search

    found = search(bank, " ".join(args.text), limit=args.limit)
    if as_json:
        _emit([e.to_dict() for e in found])
        return 0
    if not found:
        print("no match")
        return 0
    print("\n".join(_brief(e) for e in found))
    return 0


def _validate(bank, args, as_json: bool) -> int:
    stats = bank.stats()
    if as_json:
        _emit({"ok": True, "entries": len(bank), "files": bank.files, **stats})
        return 0
    print(f"ok: {len(bank)} entries in {len(bank.files)} files "
          f"({stats['core']} core, {stats['comparison']} comparison, "
          f"{sum(stats['arch'].values())} arch)")
    return 0


def _stats(bank, args, as_json: bool) -> int:
    if getattr(args, "sessions", None):
        from pathlib import Path

        from socratic.report import bank_usage
        from socratic.report.bankuse import usage_lines

        doc = bank_usage([Path(p) for p in args.sessions], bank, args.window)
        if as_json:
            _emit(doc)
        else:
            print("\n".join(usage_lines(doc)))
        return 0
    stats = bank.stats()
    if as_json:
        _emit(stats)
        return 0
    groups = stats["groups"]
    arch = stats["arch"]
    print(f"core        {stats['core']} entries in "
          f"{sum(1 for n in groups.values() if n)} groups")
    for name, n in groups.items():
        print(f"  {name:<14}{n:>4}")
    print(f"comparison  {stats['comparison']}")
    print(f"arch        {sum(arch.values())} "
          f"({', '.join(f'{k} {v}' for k, v in arch.items())})")
    print("provenance  " + ", ".join(f"{k} {v}" for k, v in stats["provenance"].items()))
    print("by trigger")
    for name, n in stats["by_trigger"].items():
        print(f"  {name:<20}{n:>4}")
    return 0
