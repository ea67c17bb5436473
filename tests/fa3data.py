"""The recorded H200 attention campaign for tests: the shipped pack (sessions/fa3-h200.socratic,
frozen) and a trimmed, frozen copy of its first session (tests/data/fa3-h200-trimmed.socratic).

`python tests/fa3data.py CAMPAIGN_FOLDER` writes the trimmed copy again from a folder of the
campaign (`socratic unpack fa3-h200 FOLDER`).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from socratic.resources import resolve_session_dir
from socratic.sessionfiles import open_session, unpack, write_pack

TRIMMED = Path(__file__).parent / "data" / "fa3-h200-trimmed.socratic"
TRIM_EVENTS = 2722   # the first session's events, its end, then the retraction of 1-12


def shipped() -> Path:
    """The bundled campaign's pack (`socratic replay fa3-h200`)."""
    return resolve_session_dir(Path("fa3-h200"))


def unpacked(pack: Path, dest: Path) -> Path:
    """A folder of the pack's session at `dest` (named as tests need: `.../fa3-h200`)."""
    unpack(pack, dest)
    return dest


def trimmed_folder(tmp_path: Path) -> Path:
    """The trimmed campaign as a session folder named fa3-h200 (the name its bank evidence
    cites), to write in."""
    return unpacked(TRIMMED, tmp_path / "fa3-h200")


def eval_docs(pack: Path) -> dict[int, dict]:
    """Every saved evaluation of a pack, by number."""
    s = open_session(pack)
    return {int(rel[6:10]): s.read_json(rel) for rel in s.names("evals") if rel.endswith(".json")}


def trim(src: Path, dest: Path, n_events: int = TRIM_EVENTS) -> None:
    """A session folder of `src`'s first `n_events` events, with the evaluations and
    candidates they name, and its settings, task and workspace."""
    lines = (src / "events.jsonl").read_bytes().splitlines(keepends=True)[:n_events]
    dest.mkdir(parents=True)
    (dest / "events.jsonl").write_bytes(b"".join(lines))
    for name in ("config.json", "attach.json", "inbox.jsonl", "state.json"):
        shutil.copy(src / name, dest / name)
    for name in ("task", "workspace"):
        shutil.copytree(src / name, dest / name)
    (dest / "evals").mkdir()
    (dest / "candidates").mkdir()
    for e in map(json.loads, lines):
        if e["type"] == "eval.end":
            shutil.copy(src / e["result"], dest / e["result"])
            sha = json.loads((src / e["result"]).read_text())["candidate"]["sha256"]
            cand = src / "candidates" / f"{sha[:16]}.cu"
            if cand.exists():
                shutil.copy(cand, dest / "candidates" / cand.name)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        trim(Path(sys.argv[1]), Path(tmp) / "fa3-h200")
        TRIMMED.unlink(missing_ok=True)
        print(write_pack(Path(tmp) / "fa3-h200", TRIMMED))
