"""`socratic bank ...` through the real CLI: actions, flags after the action, and every
validator error on malformed user files (exit code 2, one line, file and line named)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ENTRY = """\
[[entry]]
id = "{id}"
group = "gap"
text = "Which part of the loop takes the most cycles in this user scenario?"
triggers = ["plateau"]
level = "scheduling"
provenance = "new"
why = "Points at the hottest part."
"""


def run(*args: str, env_dir: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # keep the user's own ~/.config bank out of the tests
    env["SOCRATIC_BANK_DIR"] = str(env_dir or ROOT / "tests" / "no-such-bank-dir")
    return subprocess.run([sys.executable, "-m", "socratic", "bank", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)


def write(tmp_path: Path, text: str, name: str = "user.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_stats_json_after_action():
    r = run("stats", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"core", "groups", "comparison", "arch", "provenance", "traced",
                        "by_trigger"}
    assert doc["core"] == 101 and len(doc["groups"]) == 10
    assert doc["comparison"] == 5
    assert sum(doc["arch"].values()) == 18 and set(doc["arch"]) == {"hopper", "blackwell"}


def test_json_before_action_too():
    r = run("--json", "stats")
    assert r.returncode == 0 and json.loads(r.stdout)["core"] == 101


def test_validate_and_stats_human():
    r = run("validate")
    assert r.returncode == 0 and r.stdout.startswith("ok: 124 entries"), r.stdout + r.stderr
    r = run("stats")
    assert r.returncode == 0 and "101" in r.stdout and "blackwell" in r.stdout


def test_list_groups_and_fits_80_columns():
    r = run("list")
    assert r.returncode == 0
    assert "measurement (" in r.stdout and "strategy (" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


@pytest.mark.parametrize("entry_id", ["gap.stall-reasons", "hopper.wgmma-in-flight"])
def test_show_prints_every_field(entry_id):
    r = run("show", entry_id)
    assert r.returncode == 0
    for field in ("id:", "kind:", "group:", "level:", "triggers:", "arch:",
                  "requires_comparison:", "provenance:", "source:", "file:", "why:"):
        assert field in r.stdout
    # text is wrapped at 80 columns; the file line is a path (long in a venv) and is not wrapped
    assert max(len(line) for line in r.stdout.splitlines() if not line.startswith("file:")) <= 80


def test_show_json():
    doc = json.loads(run("show", "gap.stall-reasons", "--json").stdout)
    assert doc["id"] == "gap.stall-reasons" and doc["group"] == "gap"


def test_show_unknown_id_is_input_error():
    r = run("show", "gap.no-such-entry")
    assert r.returncode == 2 and "gap.no-such-entry" in r.stderr


def test_search_cli_with_typo():
    r = run("search", "regsiter", "spils", "--json")
    assert r.returncode == 0
    assert "compiler.registers-spills" in [e["id"] for e in json.loads(r.stdout)][:3]


def test_user_dir_adds_entries(tmp_path):
    write(tmp_path, ENTRY.format(id="user.hot-part"))
    r = run("stats", "--json", "--bank-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["core"] == 102
    r = run("show", "user.hot-part", env_dir=tmp_path)  # the user config location
    assert r.returncode == 0 and "user.toml" in r.stdout


def assert_one_line_error(r: subprocess.CompletedProcess, path: Path, line: int, *words: str):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{path.name}:{line}:" in lines[0], lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_duplicate_of_shipped_id_names_both_places(tmp_path):
    path = write(tmp_path, "# mine\n\n" + ENTRY.format(id="gap.stall-reasons"))
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 3, "gap.stall-reasons", "duplicate")
    assert "core_gap.toml:" in r.stderr


def test_duplicate_within_user_files(tmp_path):
    write(tmp_path, ENTRY.format(id="user.twice"), "a.toml")
    path = write(tmp_path, ENTRY.format(id="user.other") + "\n" + ENTRY.format(id="user.twice"),
                 "b.toml")
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 10, "user.twice", "a.toml:1")


@pytest.mark.parametrize("old, new, line, words", [
    ('triggers = ["plateau"]', 'triggers = ["plateau", "lunch"]', 5, ("unknown trigger", "lunch")),
    ('group = "gap"', 'group = "gossip"', 3, ("unknown group", "gossip")),
    ('level = "scheduling"', 'level = "vibes"', 6, ("unknown level",)),
    ('provenance = "new"', 'provenance = "rumour"', 7, ("unknown provenance",)),
    ('provenance = "new"', 'provenance = "new"\narch = "ampere"', 8, ("unknown arch", "ampere")),
    ('provenance = "new"', 'provenance = "new"\nkind = "misc"', 8, ("unknown kind", "misc")),
    ('why = "Points at the hottest part."\n', "", 1, ("missing field 'why'",)),
    ('text = "Which part of the loop takes the most cycles in this user scenario?"',
     'text = "Why ' + "so " * 70 + 'slow?"', 4, ("text too long",)),
    ('text = "Which part of the loop takes the most cycles in this user scenario?"',
     'text = "Look at the loop."', 4, ("question",)),
    ('provenance = "new"', 'provenance = "trace"', 7, ("trace", "source")),
    ('provenance = "new"', 'provenance = "new"\ncolour = "red"', 8, ("unknown field 'colour'",)),
])
def test_schema_errors(tmp_path, old, new, line, words):
    text = ENTRY.format(id="user.bad")
    assert old in text
    path = write(tmp_path, text.replace(old, new))
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, line, "user.bad", *words)


def test_error_names_entry_line_in_later_entry(tmp_path):
    good = ENTRY.format(id="user.good")
    bad = ENTRY.format(id="user.bad").replace('"plateau"', '"someday"')
    path = write(tmp_path, good + "\n" + bad)
    r = run("list", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 14, "user.bad", "someday")


def test_missing_id_names_entry_number(tmp_path):
    path = write(tmp_path, ENTRY.format(id="user.ok") + "\n" +
                 ENTRY.format(id="x").replace('id = "x"\n', ""))
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 10, "entry #2", "missing field 'id'")


def test_malformed_toml_names_parser_line(tmp_path):
    path = write(tmp_path, ENTRY.format(id="user.ok") + '\n[[entry]]\nid = "user.broken\n')
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 11, "malformed TOML")


def test_unknown_top_level_key(tmp_path):
    path = write(tmp_path, 'title = "mine"\n\n' + ENTRY.format(id="user.ok"))
    r = run("validate", "--bank-dir", str(tmp_path))
    assert_one_line_error(r, path, 1, "title")


def test_missing_bank_dir_is_input_error(tmp_path):
    r = run("validate", "--bank-dir", str(tmp_path / "absent"))
    assert r.returncode == 2 and "absent" in r.stderr and len(r.stderr.splitlines()) == 1


def test_no_action_is_usage_error():
    r = run()
    assert r.returncode == 2 and "list" in r.stderr


def test_empty_why_and_single_file_bank_dir(tmp_path):
    path = write(tmp_path, ENTRY.format(id="user.bad").replace(
        'why = "Points at the hottest part."', 'why = ""'))
    r = run("validate", "--bank-dir", str(path))
    assert_one_line_error(r, path, 8, "user.bad", "'why' is empty")


def test_list_and_search_after_action_see_user_entries(tmp_path):
    write(tmp_path, ENTRY.format(id="user.hot-part"))
    r = run("list", "--bank-dir", str(tmp_path))
    assert r.returncode == 0 and "user.hot-part" in r.stdout
    r = run("search", "hottest", "user", "--bank-dir", str(tmp_path))
    assert r.returncode == 0 and r.stdout.splitlines()[0].strip() == "user.hot-part"


@pytest.mark.parametrize("limit", ["0", "-1", "abc"])
def test_bad_limit_is_one_line(limit):
    r = run("search", "bank", "--limit", limit)
    assert r.returncode == 2 and r.stdout == "", r
    assert len(r.stderr.splitlines()) == 1 and f"'{limit}'" in r.stderr, r.stderr


def test_bad_arguments_are_one_line():
    for args in ([], ["show"], ["frobnicate"]):
        r = run(*args)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr


def test_list_groups_in_schema_order_core_first():
    from socratic.bank import load_bank
    from socratic.bank.model import GROUPS, by_group

    groups = by_group(load_bank(user=False).entries)
    assert list(groups) == list(GROUPS)                  # not the files' order (arch_* first)
    for items in groups.values():
        kinds = [e.kind for e in items]
        assert kinds == sorted(kinds, key=("core", "comparison", "arch").index)
    r = run("list")
    heads = [ln.split(" (")[0] for ln in r.stdout.splitlines() if ln and not ln.startswith(" ")]
    assert heads == list(GROUPS)


def test_list_search_validate_json():
    r = run("list", "--json")
    entries = json.loads(r.stdout)
    assert r.returncode == 0 and len(entries) == 124
    assert {"id", "group", "kind", "text", "triggers", "why"} <= set(entries[0])
    r = run("search", "bank", "conflcits", "--json", "--limit", "3")
    found = json.loads(r.stdout)
    assert r.returncode == 0 and found[0]["id"] == "memory.bank-conflicts" and len(found) <= 3
    assert json.loads(run("search", "zzzqqq", "--json").stdout) == []   # no match: []
    r = run("validate", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["ok"] is True and doc["entries"] == 124
    assert len(doc["files"]) == 13 and doc["core"] == 101
    r = run("show", "no.such", "--json")                # errors stay one line on stderr
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
