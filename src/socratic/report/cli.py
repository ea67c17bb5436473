"""`socratic report SESSION... [--json] [--md] [--html FILE] [--window N] [--bank-dir DIR]`.

Cheap to import: the report and matplotlib are imported inside the handler.
"""

from __future__ import annotations

import argparse

from socratic.cliargs import add_bank_dir, add_json, path_arg, positive_int


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="what campaigns did and what the questions changed",
        description="Re-derive a campaign's figures from its session folder (events.jsonl, "
        "evals/, candidates/): evaluations, best speedups, questions by trigger and group "
        "and what followed each, churn, correctness failures, cost. Several sessions, or a "
        "folder of sessions (a fleet), are also compared side by side.")
    p.add_argument("paths", nargs="+", type=path_arg, metavar="SESSION",
                   help="a session folder, a folder whose subfolders are sessions, or the "
                   "name of a bundled campaign (demo, fa3-h200)")
    out = p.add_mutually_exclusive_group()
    add_json(out)
    out.add_argument("--md", action="store_true", help="print the full report as Markdown")
    p.add_argument("--html", type=path_arg, metavar="FILE",
                   help="also write one self-contained HTML file with plots "
                   "(needs the `report` extra: matplotlib)")
    p.add_argument("--window", type=positive_int, default=5, metavar="N",
                   help="a question's gain: best geomean and min after the next N "
                   "evaluations of the goal set (default 5)")
    add_bank_dir(p)  # the groups of user entries
    p.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    import json
    import sys

    from socratic.errors import InputError
    from socratic.report import build_report, text

    if args.html is not None and args.html.is_dir():
        raise InputError(f"--html {args.html}: is a folder; give a file name")
    from socratic.resources import resolve_session_dir

    paths = [resolve_session_dir(p) for p in args.paths]
    if args.html is not None and args.html.exists() and args.html.suffix != ".html":
        # a session's files are its record: a page (a new one, or one written before) may
        # sit beside them, never over them
        from socratic.report.source import session_dirs

        target = args.html.resolve()
        for d in session_dirs(paths):
            if target.is_relative_to(d.resolve()):
                raise InputError(f"--html {args.html}: a file of the session {d}, which is its "
                                 f"record; write the page elsewhere")
    report = build_report(paths, window=args.window, bank_dirs=args.bank_dirs)
    for note in report.notes:
        print(f"socratic report: {note}", file=sys.stderr)
    if args.html is not None:
        from socratic.report.html import render

        page = render(report)
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"--html {args.html}: cannot write ({exc.strerror or exc})") from None
        print(f"socratic report: wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict(), indent=1, ensure_ascii=False))
    elif args.md:
        print(text.markdown(report), end="")
    elif args.html is None:
        print(text.text(report), end="")
    return 0
