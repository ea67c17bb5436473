"""A recorded session to read: a session folder, or a pack of one (`NAME.socratic`).

Every reader of a finished campaign (replay, report, bank trace, bank stats) opens it with
`open_session` and reads through the `SessionReader` it returns, so a folder and a pack read
the same. A pack is read-only: verbs that write a session refuse it (`refuse_pack`).

The pack format (`socratic.pack/1`, docs/ARCHITECTURE.md): one tar archive compressed with xz
(preset 9e, a 64 MiB dictionary, so the overlapping candidate sources compress against each
other). Its first member is `socratic-pack.json` ({"format": "socratic.pack/1", "name",
"files", "bytes"}); then the session's files at their paths inside the folder (events.jsonl,
config.json, evals/NNNN.json, candidates/*.cu, task/, workspace/, ...). A file whose bytes
were already stored is a hard link to the first copy (content stored once). `tar xJf` unpacks
one as well as `socratic unpack`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from socratic import chain
from socratic.contracts import Parsed, parse_event_lines
from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE, parse_jsonl
from socratic.resources import PACK_SUFFIX

if TYPE_CHECKING:
    import tarfile

PACK_FORMAT = "socratic.pack/1"
MANIFEST = "socratic-pack.json"
# not part of a record: the lock of whoever holds the session, half-written files
_LEFT_OUT = {"session.lock"}
_XZ_MAGIC = b"\xfd7zXZ\x00"


def is_pack(path: Path) -> bool:
    """Whether `path` is a file to read as a pack (named *.socratic, or xz data)."""
    path = Path(path)
    if not path.is_file():
        return False
    if path.suffix == PACK_SUFFIX:
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_XZ_MAGIC)) == _XZ_MAGIC
    except OSError:
        return False


def pack_name(path: Path) -> str:
    """A pack's session name: its file's name without `.socratic`."""
    return Path(path).name.removesuffix(PACK_SUFFIX)


class SessionReader:
    """One session's files, by their path inside the session (`evals/0001.json`)."""

    path: Path      # the folder, or the pack file
    name: str       # the session's name (a trace's `name#seq`, evidence `name/evals/...`)
    packed: bool

    def read_bytes(self, rel: str) -> bytes:
        """The file's bytes; OSError (FileNotFoundError) when the session has no such file."""
        raise NotImplementedError

    def is_file(self, rel: str) -> bool:
        raise NotImplementedError

    def names(self, folder: str) -> list[str]:
        """The paths of the files in one of its folders (`evals`), sorted."""
        raise NotImplementedError

    def where(self, rel: str) -> str:
        """How to name one of its files in a message."""
        return f"{self.path}/{rel}" if not self.packed else f"{self.path}:{rel}"

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8", errors="replace")

    def read_json(self, rel: str) -> Any:
        """A JSON file; OSError when absent, ValueError when not JSON."""
        return json.loads(self.read_bytes(rel))

    def events(self) -> Parsed:
        """The log's typed events (socratic.contracts.read_events, over the whole log)."""
        return parse_event_lines(self.read_bytes(EVENTS_FILE), self.where(EVENTS_FILE))[0]

    def event_records(self) -> tuple[list[dict[str, Any]], int]:
        """The log's lines as JSON objects (the TUI's reading), and how many were not."""
        records, _, skipped = parse_jsonl(self.read_bytes(EVENTS_FILE))
        return records, skipped

    def record(self, data: bytes | None = None) -> chain.ChainCheck:
        """What the log's chain says (socratic.chain): verified with this machine's key for
        the session, broken (the first bad line named), or unverified (no key here: a pack
        says what was found when it was packed)."""
        raise NotImplementedError

    def trusted(self) -> tuple[Parsed, chain.ChainCheck]:
        """The typed events the chain vouches for (all of them when unverified), and the
        chain's verdict."""
        data = self.read_bytes(EVENTS_FILE)
        check = self.record(data)
        parsed, _ = parse_event_lines(chain.without_lines(data, check.bad), self.where(EVENTS_FILE))
        return parsed, check


@dataclass
class FolderReader(SessionReader):
    path: Path

    def __post_init__(self) -> None:
        self.name = self.path.name
        self.packed = False

    def _file(self, rel: str) -> Path:
        if not rel or rel.startswith("/") or ".." in Path(rel).parts:
            raise FileNotFoundError(2, "not a file of the session", rel)  # only files inside it
        return self.path / rel

    def read_bytes(self, rel: str) -> bytes:
        return self._file(rel).read_bytes()

    def is_file(self, rel: str) -> bool:
        try:
            return self._file(rel).is_file()
        except OSError:
            return False

    def names(self, folder: str) -> list[str]:
        try:
            return sorted(f"{folder}/{p.name}" for p in self._file(folder).iterdir() if p.is_file())
        except OSError:
            return []

    def record(self, data: bytes | None = None) -> chain.ChainCheck:
        return chain.verify(self.path, self.read_bytes(EVENTS_FILE) if data is None else data)


@dataclass
class PackReader(SessionReader):
    path: Path
    files: dict[str, bytes]
    manifest: dict[str, Any]

    def __post_init__(self) -> None:
        self.name = pack_name(self.path)
        self.packed = True

    def read_bytes(self, rel: str) -> bytes:
        try:
            return self.files[rel]
        except KeyError:
            raise FileNotFoundError(2, "no such file in the pack", self.where(rel)) from None

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def names(self, folder: str) -> list[str]:
        return sorted(n for n in self.files if n.rpartition("/")[0] == folder)

    def record(self, data: bytes | None = None) -> chain.ChainCheck:
        """Unverified here (the key stays on the machine that made the session); the
        manifest says what the chain was at pack time, and the log's last chain value must
        still be the one recorded then."""
        data = self.read_bytes(EVENTS_FILE) if data is None else data
        packed = self.manifest.get("record")
        if not isinstance(packed, dict) or not isinstance(packed.get("status"), str) or \
                packed["status"] == chain.UNVERIFIED:
            # as its folder reads anywhere but where it was made
            return chain.ChainCheck(chain.UNVERIFIED, why=chain.NO_KEY)
        host = packed.get("host") or "the packing machine"
        last = last_chain_value(data)
        if packed.get("last") and last != packed.get("last"):
            why = ("the log's last chain value is not the one recorded at pack time: changed "
                   "after it was packed")
        elif packed["status"] == chain.BROKEN:
            why = f"at pack time on {host}: {packed.get('why') or 'broken'}"
        else:
            why = f"a pack; at pack time on {host} it read {packed['status']}"
        return chain.ChainCheck(chain.UNVERIFIED, why=why)


def open_session(path: Path) -> SessionReader:
    """The session at `path` (a folder or a pack), to read. A pack that cannot be read is
    InputError naming the file; a folder is returned as is (its readers say what is missing)."""
    path = Path(path)
    if is_pack(path):
        return read_pack(path)
    return FolderReader(path)


def read_pack(path: Path) -> PackReader:
    """A pack's files, decompressed once per process (and again only when the file changes);
    InputError naming the file as given when it cannot be read or is not a pack."""
    try:
        st = Path(path).stat()
        files, manifest = _unpacked(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except BadPack as exc:
        raise InputError(f"{path}: {exc}") from None
    return PackReader(Path(path), files, manifest)


class BadPack(Exception):
    """What is wrong with a pack's content (read_pack names the file)."""


@lru_cache(maxsize=4)
def _unpacked(path: str, mtime_ns: int, size: int) -> tuple[dict[str, bytes], dict[str, Any]]:
    del mtime_ns, size  # only the cache's key: a rewritten pack is read again
    import lzma  # here, not above: the CLI's registration imports this module's callers
    import tarfile

    with open(path, "rb") as fh:
        data = fh.read()
    try:
        files = _members(lzma.decompress(data))
    except (lzma.LZMAError, tarfile.TarError, EOFError, KeyError, ValueError) as exc:
        raise BadPack(f"not a readable socratic pack ({exc})") from None
    try:
        manifest = json.loads(files.pop(MANIFEST))
    except (KeyError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != PACK_FORMAT:
        raise BadPack(f"not a socratic pack (no {MANIFEST} of format {PACK_FORMAT})")
    return files, manifest


def _members(data: bytes) -> dict[str, bytes]:
    """Regular files and hard links of a tar archive, by path."""
    import tarfile

    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for m in tar:
            name = m.name.removeprefix("./")
            if m.islnk():
                files[name] = files[m.linkname.removeprefix("./")]
            elif m.isfile():
                fh = tar.extractfile(m)
                files[name] = fh.read() if fh is not None else b""
    return files


def session_files(folder: Path) -> list[str]:
    """The files of a session folder that make up its record, by path inside it, in the
    order a pack stores them (the log and settings first, then each folder's files)."""
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not p.is_symlink() and rel not in _LEFT_OUT and \
                not p.name.endswith(".tmp"):
            out.append(rel)
    return sorted(out, key=lambda rel: ("/" in rel, rel))


def write_pack(folder: Path, dest: Path) -> dict[str, Any]:
    """Pack the session `folder` into `dest` (written whole, then renamed into place); the
    manifest written."""
    import hashlib
    import lzma
    import tarfile

    names = session_files(folder)
    if "events.jsonl" not in names:
        raise InputError(f"{folder}: not a session (no events.jsonl)")
    manifest = {"format": PACK_FORMAT, "name": folder.name, "files": len(names),
                "bytes": sum((folder / n).stat().st_size for n in names)}
    # the key stays here: the pack carries what its chain said now, and its last value
    log = (folder / EVENTS_FILE).read_bytes()
    check = chain.verify(folder, log)
    import socket

    manifest["record"] = {"status": check.status, "lines": check.lines,
                          "last": last_chain_value(log), "first_bad": check.first_bad,
                          "why": check.why, "host": socket.gethostname()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, MANIFEST, json.dumps(manifest, indent=1).encode() + b"\n")
        first: dict[str, str] = {}  # sha256 -> the path that stored those bytes
        for rel in names:
            data = (folder / rel).read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest in first:
                link = tarfile.TarInfo(rel)
                link.type, link.linkname, link.mode = tarfile.LNKTYPE, first[digest], 0o644
                tar.addfile(link)
            else:
                first[digest] = rel
                _add(tar, rel, data, executable=bool((folder / rel).stat().st_mode & 0o111))
    packed = lzma.compress(raw.getvalue(), preset=9 | lzma.PRESET_EXTREME)
    tmp = dest.with_name(dest.name + ".tmp")
    try:
        tmp.write_bytes(packed)
        tmp.replace(dest)
    except BaseException:   # a full disk: no half-written pack left beside the named one
        tmp.unlink(missing_ok=True)
        raise
    return manifest


def last_chain_value(log: bytes) -> str | None:
    """The chain value of a log's last complete line, if it carries one."""
    end = log.rfind(b"\n")
    start = log.rfind(b"\n", 0, end) + 1 if end > 0 else 0
    return chain.split(log[start:end])[1] if end > 0 else None


def _add(tar: tarfile.TarFile, rel: str, data: bytes, executable: bool = False) -> None:
    import tarfile

    info = tarfile.TarInfo(rel)
    info.size, info.mode = len(data), 0o755 if executable else 0o644
    tar.addfile(info, io.BytesIO(data))


def unpack(path: Path, dest: Path) -> int:
    """Write a pack's files into the new or empty folder `dest`; how many."""
    reader = read_pack(path)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest}: exists and is not an empty folder; name a new one")
    outside = [rel for rel in reader.files if ".." in Path(rel).parts or rel.startswith("/")]
    if outside:
        raise InputError(f"{path}: a member outside the session ({outside[0]}); nothing unpacked")
    executable = _executables(Path(path))
    created = not dest.exists()
    try:
        for rel, data in reader.files.items():
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            if rel in executable:
                out.chmod(0o755)
    except OSError as exc:
        # a full disk: no partial folder left to block the retry; say where it failed
        import shutil

        if created:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            for child in list(dest.iterdir()):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)
        where = exc.filename or dest
        raise InputError(f"{where}: cannot write ({exc.strerror or exc}); nothing unpacked into {dest}") from None
    return len(reader.files)


def _executables(path: Path) -> set[str]:
    """The pack's members stored executable (the workspace's ./evaluate)."""
    import tarfile

    with tarfile.open(path, mode="r:xz") as tar:
        return {m.name for m in tar if m.isfile() and m.mode & 0o111}


def refuse_pack(path: Path, verb: str) -> None:
    """InputError when `path` is a pack: `verb` writes a session, and a pack is read-only."""
    if is_pack(Path(path)):
        raise InputError(f"{path}: a packed campaign, read-only ({verb} writes a session): "
                         f"`socratic unpack {path} DIR` makes a folder to {verb} in")
