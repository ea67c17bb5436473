"""`socratic pack SESSION [-o FILE]` and `socratic unpack FILE [DIR]`: a recorded session as
one compressed file (socratic.sessionfiles), to ship or send, and back to a folder.

Cheap to import: the pack code is imported inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from socratic.cliargs import path_arg
from socratic.errors import InputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "pack", help="pack a recorded session into one compressed file (NAME.socratic)",
        description="Write a session folder as one file (xz-compressed, each file's bytes "
        "stored once) that replay, report, bank trace and bank stats read directly and "
        "that unpacks back into the folder (`socratic unpack`).")
    p.add_argument("session", type=path_arg, metavar="SESSION",
                   help="a session folder, or the name of a bundled campaign")
    p.add_argument("-o", "--output", type=path_arg, metavar="FILE",
                   help="the file to write (default: ./NAME.socratic)")
    p.set_defaults(handler=_pack)

    p = sub.add_parser(
        "unpack", help="unpack a packed session (NAME.socratic) into a folder",
        description="Write a pack's files into a new folder: the session as it was packed, "
        "to retract in, resume or read with other tools.")
    p.add_argument("pack", type=path_arg, metavar="FILE",
                   help="a .socratic file, or the name of a bundled packed campaign")
    p.add_argument("dest", type=path_arg, nargs="?", metavar="DIR",
                   help="a new or empty folder (default: ./NAME)")
    p.set_defaults(handler=_unpack)


def _pack(args: argparse.Namespace) -> int:
    from socratic.ownership import session_held
    from socratic.resources import PACK_SUFFIX, resolve_session_dir, unknown_session_hint
    from socratic.sessionfiles import is_pack, read_pack, write_pack

    folder = resolve_session_dir(args.session)
    if is_pack(folder):
        try:
            read_pack(folder)   # a damaged or foreign file named *.socratic is no pack
        except InputError as exc:
            raise InputError(f"{exc}, and not a session folder to pack") from None
        raise InputError(f"{args.session}: packed already ({folder})")
    if not folder.is_dir():
        raise InputError(f"{args.session}: no such session folder{unknown_session_hint(folder)}")
    if session_held(folder):
        raise InputError(f"{folder}: a campaign is running there; pack it once it has ended")
    dest = args.output or Path(folder.resolve().name + PACK_SUFFIX)
    if dest.exists():
        raise InputError(f"{dest}: exists; remove it or name another file with -o")
    if not dest.parent.is_dir():   # else the error named the temporary file beside it
        raise InputError(f"{dest}: no folder {dest.parent} to write it in; create it or name "
                         f"another file with -o")
    if dest.resolve().is_relative_to(folder.resolve()):
        raise InputError(f"{dest}: inside the session it packs; write it elsewhere")
    manifest = write_pack(folder, dest)
    print(f"socratic pack: wrote {dest} ({manifest['files']} files, "
          f"{_size(manifest['bytes'])} → {_size(dest.stat().st_size)})", file=sys.stderr)
    return 0


def _unpack(args: argparse.Namespace) -> int:
    from socratic.resources import resolve_session_dir, unknown_session_hint
    from socratic.sessionfiles import is_pack, pack_name, unpack

    path = resolve_session_dir(args.pack)
    if not is_pack(path):
        what = "a folder, not a pack" if path.is_dir() else \
            f"no such pack{unknown_session_hint(path)}" if not path.exists() else "not a pack"
        raise InputError(f"{args.pack}: {what}")
    dest = args.dest or Path(pack_name(path))
    n = unpack(path, dest)
    print(f"socratic unpack: wrote {n} files into {dest}", file=sys.stderr)
    return 0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"
