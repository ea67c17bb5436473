"""`socratic bank list|show ID|search TEXT|validate|stats [--bank-dir DIR] [--json]`;
`socratic bank stats --sessions SESSION...`: the entries asked there and what followed;
`socratic bank trace SESSION... [--write]`: the entries asked there that a measured gain
followed, recorded as provenance `trace` with --write.

Human output goes to stdout and fits 80 columns; `--json` prints one JSON document.
`--bank-dir` and `--json` are accepted before or after the action.
"""

from __future__ import annotations

import argparse

from socratic.cliargs import add_bank_dir, add_json, path_text, positive_int

WIDTH = 80
ACTIONS = ("list", "show", "search", "validate", "stats", "trace")


def _common(p: argparse.ArgumentParser, suffix: str, suppress: bool) -> None:
    add_bank_dir(p, dest=f"bank_dirs{suffix}", suppress=suppress)
    add_json(p, dest=f"json{suffix}", suppress=suppress)


def _gain(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 1.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}': expected a ratio above 1 (1.02 = +2%)")
    return value


def register(sub) -> None:
    p = sub.add_parser("bank", help="question bank: list, show, search, validate, stats, trace",
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
        "trace": "the entries asked in these sessions that a measured gain followed; "
                 "--write records them as provenance trace",
    }
    for name in ACTIONS:
        a = actions.add_parser(name, help=helps[name], description=helps[name])
        if name == "list":
            a.add_argument("--provenance", metavar="P",
                           help="only entries of provenance P (trace, public or new)")
        if name == "show":
            a.add_argument("id", metavar="ID", help="an entry's id, e.g. gap.stall-reasons "
                           "(`socratic bank list` shows them; a near miss is suggested)")
        if name == "search":
            a.add_argument("text", nargs="+", metavar="TEXT",
                           help="words to look for in ids, groups and texts (typos and "
                           "partial words match)")
            a.add_argument("--limit", type=positive_int, default=20, metavar="N",
                           help="at most N results (20)")
        if name == "stats":
            a.add_argument("--sessions", nargs="+", metavar="SESSION",
                           help="session folders, packs (NAME.socratic) or folders of "
                           "sessions: which entries were asked there, and whether the best "
                           "geomean or min went up after")
            a.add_argument("--window", type=positive_int, default=5, metavar="N",
                           help="with --sessions: progress within the next N evaluations (5)")
        if name == "trace":
            a.add_argument("sessions", nargs="+", type=path_text, metavar="SESSION",
                           help="session folders, packs (NAME.socratic) or folders of sessions")
            a.add_argument("--min-gain", type=_gain, metavar="X",
                           help="a trace needs the best geomean after the question to be at "
                           "least X times the best before (1.02)")
            a.add_argument("--against", metavar="NAME",
                           help="judge on the geomean against NAME (baseline, or a "
                           "comparison such as fa3); default: each session's goal")
            a.add_argument("--window", type=positive_int, default=5, metavar="N",
                           help="at most N goal-set evaluations after a question, up to "
                           "the next questions (5)")
            a.add_argument("--write", action="store_true",
                           help="record each trace in the bank file holding the entry")
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
            "stats": _stats, "trace": _trace}[action](bank, args, as_json)


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
    out = f"  {entry.id}{_tag(entry)}\n{_wrap(entry.text, '      ')}"
    if entry.trace:  # what confirmed it, where a reader can replay it
        out += "\n" + _wrap(f"trace {entry.trace}" + (
            f"; evidence {', '.join(entry.evidence)}" if entry.evidence else ""), " " * 8,
            first="      ")
    return out


def _list(bank, args, as_json: bool) -> int:
    from socratic.bank.model import PROVENANCES, BankError, by_group

    entries = bank.entries
    if args.provenance is not None:
        if args.provenance not in PROVENANCES:
            raise BankError(f"--provenance {args.provenance}: unknown provenance (one of: "
                            f"{', '.join(PROVENANCES)})")
        entries = [e for e in entries if e.provenance == args.provenance]
    if as_json:
        _emit([e.to_dict() for e in entries])
        return 0
    if not entries:
        print(f"no entry of provenance {args.provenance}")
        return 0
    blocks = [f"{group} ({len(items)})\n" + "\n".join(_brief(e) for e in items)
              for group, items in by_group(entries).items()]
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
        ("evidence", ", ".join(entry.evidence) or "-"),
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

        from socratic.report import bank_usage, usage_lines

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
    print(f"traced      {stats['traced']} (provenance trace, or a trace in its evidence)")
    print("by trigger")
    for name, n in stats["by_trigger"].items():
        print(f"  {name:<20}{n:>4}")
    return 0


def _trace(bank, args, as_json: bool) -> int:
    import sys
    from pathlib import Path

    from socratic.bank.model import is_trace_ref
    from socratic.errors import InputError
    from socratic.report import DEFAULT_MIN_GAIN, bank_traces

    min_gain = args.min_gain or DEFAULT_MIN_GAIN
    if args.write:  # README: the demo's agent is scripted, so its gains confirm nothing
        from socratic.resources import demo_session_dir, resolve_session_dir

        demo = demo_session_dir().resolve()
        for p in args.sessions:
            if resolve_session_dir(Path(p)).resolve() == demo:
                raise InputError(f"{p}: the bundled demo campaign: its agent is scripted, so "
                                 f"its gains confirm nothing; --write records real campaigns")
    found = bank_traces([Path(p) for p in args.sessions], bank, against=args.against,
                        min_gain=min_gain, window=args.window)
    best = found.best()
    for a in best if args.write else ():
        if not is_trace_ref(a.trace):
            raise InputError(f"{a.path}: the session folder's name cannot name a trace "
                             f"('{a.trace}': no spaces, '#' or '/'); rename the folder")
    for note in found.notes:
        print(f"socratic bank trace: {note}", file=sys.stderr)
    changes = []
    if args.write:
        from socratic.bank.record import record

        changes = record([(bank.get(a.id), a.trace, a.evidence) for a in best])
    if as_json:
        doc = found.to_dict()
        if args.write:
            doc["changes"] = [vars(c) for c in changes]
        _emit(doc)
        return 0
    print("\n".join(_trace_lines(found, changes, args.write)))
    return 0


def _trace_lines(found, changes, wrote: bool) -> list[str]:
    def short(p) -> str:
        return p.result.rsplit("/", 1)[-1] if p is not None and p.result else "-"

    against = found.against or ", ".join(sorted({a.against for a in found.askings})) or \
        "the goal's"
    head = (f"{len(found.askings)} bank question(s) asked in {len(found.sessions)} "
            f"session(s) ({found.free_text} free text). Gain: the best correct goal-set "
            f"geomean (against {against}) after the question, up to the next questions and "
            f"at most {found.window} evaluations, over the best before; a trace needs "
            f"{found.min_gain:g}x.")
    lines = [_wrap(head, ""), ""]
    if not found.askings:
        return lines + ["no bank question was asked in these sessions"]
    lines.append(f"{'entry':<34} {'asked at':<12} {'evaluations':<22} gain")
    for a in found.askings:
        gain = f"{a.gain:.3f}x" if a.gain is not None else "-"
        mark = " *" if a.candidate and a.in_bank else " ?" if not a.in_bank else ""
        rest = f"{a.trace:<12} {short(a.before) + ' -> ' + short(a.after):<22} {gain}{mark}"
        row = f"{a.id:<34} {rest}"
        lines.append(row if len(row) <= WIDTH else f"{a.id}\n{'':<34} {rest}")
    best = found.best()
    lines.append("")
    if any(not a.in_bank for a in found.askings):
        lines.append("? not in the loaded bank (pass --bank-dir for user entries)")
    if not best:
        lines.append(f"no entry was followed by a gain of {found.min_gain:g}x or more")
    else:
        n = len(best)
        lines.append(_wrap(f"* {n} entr{'y' if n == 1 else 'ies'} followed by a gain of "
                           f"{found.min_gain:g}x or more" + (
                               ": recorded in the bank" if wrote else
                               f"; --write records {'it' if n == 1 else 'them'} in the bank"),
                           "  ", first=""))
    for c in changes:
        what = {"trace": f"provenance trace, source {c.trace}",
                "evidence": f"public, trace {c.trace} added as evidence",
                "unchanged": f"unchanged (already traced to {c.trace})",
                "kept": f"kept ({c.detail}; not {c.trace})"}[c.action]
        lines.append(_wrap(f"{c.id}: {what}" + (f" in {c.file}" if c.action in (
            "trace", "evidence") else ""), "    "))
    return lines
