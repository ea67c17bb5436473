"""`socratic` command line: one verb per part, each registered by that part's cli module.

Each part's `cli` module must stay cheap to import (heavy imports go inside its
handlers) so that `socratic --help` and `socratic bank ...` start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable
from typing import NoReturn, TypeVar, overload

from socratic import __version__
from socratic.errors import InputError

# verb modules, in the order shown by --help; each exposes register(subparsers)
_N = TypeVar("_N")   # a caller's own namespace object (argparse's overloads)

PART_CLIS = ("socratic.evaluator.cli", "socratic.bank.cli", "socratic.harness.cli", "socratic.tui.cli",
             "socratic.report.cli", "socratic.packcli", "socratic.fleet.cli", "socratic.tasknew")


class Parser(argparse.ArgumentParser):
    """Bad arguments are one line naming the value (and exit code 2), like every other bad
    input; the usage is one `--help` away. Subparsers inherit the class."""

    intermixed = False      # a verb whose positionals may follow its options (`hook say`)
    _intermixing = False

    @overload
    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: None = None) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(self, args: Iterable[str] | None, namespace: _N) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...

    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: _N | None = None) -> tuple[_N | argparse.Namespace, list[str]]:
        # argparse hands out positionals in the first run of them: `hook say --session S
        # TEXT` would leave TEXT over; the intermixed parse (which calls back here) does not
        if self.intermixed and not self._intermixing:
            self._intermixing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._intermixing = False
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    @overload
    def parse_args(self, args: Iterable[str] | None = None, namespace: None = None) -> argparse.Namespace: ...
    @overload
    def parse_args(self, args: Iterable[str] | None, namespace: _N) -> _N: ...
    @overload
    def parse_args(self, *, namespace: _N) -> _N: ...

    def parse_args(self, args: Iterable[str] | None = None,
                   namespace: _N | None = None) -> _N | argparse.Namespace:
        # argparse reports leftovers from the top parser; name the verb that was typed,
        # whose --help lists the options it takes
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            self.chosen(ns).error(f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def chosen(self, ns: object) -> argparse.ArgumentParser:
        """The deepest (sub)parser the parsed verbs lead to (`socratic bank show`)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(getattr(ns, action.dest, None) or "")
                if sub is not None:
                    return sub.chosen(ns) if isinstance(sub, Parser) else sub
        return self


def build_parser(parts: tuple[str, ...] = PART_CLIS) -> argparse.ArgumentParser:
    parser = Parser(
        prog="socratic",
        description="Question-driven GPU kernel optimization: evaluate candidates, run "
        "agent campaigns, pose questions, watch and replay.",
    )
    parser.add_argument("--version", action="version", version=f"socratic {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in parts:
        importlib.import_module(name).register(sub)
    return parser


def parts_for(argv: list[str]) -> tuple[str, ...]:
    """The verb modules a command line needs: `socratic hook ...` runs for every tool call
    of an agent that has no session server, so it builds only the harness's verbs (the
    others' modules and parsers cost it ~8 ms); everything else builds them all."""
    return ("socratic.harness.cli",) if argv[:1] == ["hook"] else PART_CLIS


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(parts_for(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except InputError as exc:
        print(f"socratic: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("socratic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a full disk, a file that cannot be written: one line naming it
        where = f": {exc.filename}" if exc.filename else ""
        print(f"socratic: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
