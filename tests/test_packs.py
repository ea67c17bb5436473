"""Packed sessions (socratic.sessionfiles, `socratic pack`/`unpack`): a pack reads exactly as
its folder does (report text, Markdown, HTML, JSON but its path; bank trace and stats; the
replay's screen), is read-only, and a damaged one is one line naming the file. Proved on the
frozen trimmed campaign (tests/data), packed again here from its folder."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from socratic.cli import main
from socratic.resources import bundled_sessions, resolve_session_dir, session_arg
from socratic.sessionfiles import MANIFEST, PACK_FORMAT, is_pack, open_session, read_pack
from tests.fa3data import TRIM_EVENTS, TRIMMED, trimmed_folder
from tests.test_tui_app import replay_app


@pytest.fixture
def folder_and_pack(tmp_path, capsys):
    folder = trimmed_folder(tmp_path / "dir")
    pack = tmp_path / "fa3-h200.socratic"
    assert main(["pack", str(folder), "-o", str(pack)]) == 0
    assert "wrote" in capsys.readouterr().err
    return folder, pack


def out(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [["report"], ["report", "--md"], ["bank", "trace"],
                                  ["bank", "trace", "--json"], ["bank", "stats", "--sessions"]])
def test_a_pack_reads_as_its_folder(folder_and_pack, capsys, argv):
    folder, pack = folder_and_pack
    assert out(capsys, *argv, str(folder)) == out(capsys, *argv, str(pack))


def test_the_report_json_and_html_are_the_folders(folder_and_pack, capsys, tmp_path):
    folder, pack = folder_and_pack
    a, b = (json.loads(out(capsys, "report", str(p), "--json")) for p in (folder, pack))
    assert b["sessions"][0].pop("path") == str(pack)
    a["sessions"][0].pop("path")
    assert a == b and b["sessions"][0]["session"] == "fa3-h200"
    pages = []
    for p in (folder, pack):
        page = tmp_path / f"{p.name}.html"
        assert main(["report", str(p), "--html", str(page)]) == 0
        pages.append(page.read_text())
    assert pages[0] == pages[1]


async def test_the_replay_shows_what_the_folder_shows(folder_and_pack):
    shown = []
    for p in folder_and_pack:
        app = replay_app(p, start="end")
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            shown.append((app.main.pos, app.main.state.best_geomean,
                          [e.n for e in app.main.state.evals]))
    assert shown[0] == shown[1] and shown[0][0] == TRIM_EVENTS


def test_unpack_gives_back_the_folder(folder_and_pack, tmp_path, capsys):
    folder, pack = folder_and_pack
    dest = tmp_path / "again"
    assert main(["unpack", str(pack), str(dest)]) == 0
    capsys.readouterr()
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert all((folder / f).read_bytes() == (dest / f).read_bytes() for f in files)
    assert os.access(dest / "workspace" / "evaluate", os.X_OK)
    code = main(["unpack", str(pack), str(dest)])   # not over a folder that holds files
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(dest) in err[0]


def test_the_layout_is_a_tar_xz_with_its_manifest_first_and_bytes_stored_once(folder_and_pack):
    folder, pack = folder_and_pack
    (folder / "candidates" / "copy.cu").write_bytes(
        next((folder / "candidates").iterdir()).read_bytes())
    again = pack.with_name("again.socratic")
    assert main(["pack", str(folder), "-o", str(again)]) == 0
    with tarfile.open(again, "r:xz") as tar:
        members = tar.getmembers()
    assert members[0].name == MANIFEST and "events.jsonl" in [m.name for m in members[:8]]
    links = [m for m in members if m.islnk()]
    assert "candidates/copy.cu" in [m.name for m in links]   # (and workspace/task/: task/)
    manifest = read_pack(again).manifest
    assert manifest["format"] == PACK_FORMAT and manifest["name"] == "fa3-h200"
    assert open_session(again).read_bytes("candidates/copy.cu") == \
        (folder / "candidates" / "copy.cu").read_bytes()


def test_the_trimmed_copy_is_small_and_frozen():
    assert TRIMMED.stat().st_size < 400_000
    s = open_session(TRIMMED)
    assert s.name == "fa3-h200-trimmed" and len(s.names("evals")) == 43


def test_the_bundled_campaign_is_a_pack_found_by_name():
    path = resolve_session_dir(Path("fa3-h200"))
    assert is_pack(path) and path.name == "fa3-h200.socratic"
    assert {"demo", "fa3-h200"} <= set(bundled_sessions()) and session_arg(path) == "fa3-h200"
    assert path.stat().st_size < 3_000_000


@pytest.mark.parametrize("argv", [["retract", "{p}", "1", "--why", "x"],
                                  ["inject", "{p}", "--text", "why?"],
                                  ["watch", "{p}"], ["run", "--resume", "{p}", "--headless"]])
def test_a_verb_that_writes_refuses_a_pack(folder_and_pack, capsys, monkeypatch, argv):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    _, pack = folder_and_pack
    before = pack.read_bytes()
    code = main([a.replace("{p}", str(pack)) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(pack) in err[0] and "read-only" in err[0], err
    assert pack.read_bytes() == before


@pytest.mark.parametrize("damage", ["text", "torn", "no manifest"])
@pytest.mark.parametrize("verb", [["report"], ["replay"], ["bank", "trace"], ["unpack"]])
def test_a_damaged_pack_is_one_line_naming_it(tmp_path, capsys, damage, verb):
    import io
    import lzma

    bad = tmp_path / "bad.socratic"
    if damage == "no manifest":   # an xz tar, but not a pack
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w:") as tar:
            tar.addfile(tarfile.TarInfo("events.jsonl"))
        bad.write_bytes(lzma.compress(raw.getvalue()))
    else:
        bad.write_bytes(b"not a pack at all" if damage == "text" else TRIMMED.read_bytes()[:50_000])
    code = main([*verb, str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(bad) in err[0], err


def test_pack_refuses_to_overwrite_or_to_pack_a_pack(folder_and_pack, capsys):
    folder, pack = folder_and_pack
    for argv in (["pack", str(folder), "-o", str(pack)], ["pack", str(pack)]):
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and str(pack) in err[0], err


def test_unpack_refuses_a_member_outside_the_folder(tmp_path, capsys):
    import io
    import lzma

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:") as tar:
        for name, data in ((MANIFEST, json.dumps({"format": PACK_FORMAT}).encode()),
                           ("../escape.txt", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bad = tmp_path / "evil.socratic"
    bad.write_bytes(lzma.compress(raw.getvalue()))
    code = main(["unpack", str(bad), str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "outside the session" in err[0]
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out").exists()


def test_a_folder_of_packs_reports_as_a_fleet(folder_and_pack, tmp_path, capsys):
    import shutil

    _, pack = folder_and_pack
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for name in ("a", "b"):
        shutil.copy(pack, fleet / f"{name}.socratic")
    doc = json.loads(out(capsys, "report", str(fleet), "--json"))
    assert [s["session"] for s in doc["sessions"]] == ["a", "b"]
