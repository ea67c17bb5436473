"""research/fa3_campaign/make.py's named lines (lines.txt): a line builds on an earlier one,
replaces or drops its macros, and a bad line is a one-line error naming the file and line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("campaign_make", HERE / "make.py")
make = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make)


def lines(tmp_path: Path, text: str) -> dict[str, list[str]]:
    f = tmp_path / "lines.txt"
    f.write_text(text)
    return make.named_lines(f)


def test_a_line_builds_on_its_base(tmp_path):
    got = lines(tmp_path, "# a comment\nv1: A=1 B=2 C=3\nv2: v1 B=5 -C D=4   # on v1\n\nv3: v2\n")
    assert got["v1"] == ["A=1", "B=2", "C=3"]
    assert got["v2"] == ["A=1", "B=5", "D=4"]        # replaced in place, dropped, added
    assert got["v3"] == got["v2"]


@pytest.mark.parametrize("text, says", [
    ("v2: v1 A=1\n", "base 'v1' is not an earlier line"),
    ("v1: A=1\nv2: v1 -B\n", "B is not in the base"),
    ("v1: A=1 junk\n", "'junk' is neither MACRO=VALUE nor -MACRO"),
    ("no colon here\n", "not 'NAME: [BASE] MACRO=VALUE ...'"),
])
def test_bad_lines_are_one_line_errors(tmp_path, text, says):
    with pytest.raises(SystemExit) as e:
        lines(tmp_path, text)
    msg = str(e.value)
    assert says in msg and "lines.txt:" in msg and "\n" not in msg


def test_the_campaign_lines_resolve():
    """v98 is v96's line and HOP_ST128=1; v88 is v96's without its two newest knobs."""
    got = make.named_lines(HERE / "lines.txt")
    assert got["v98"] == got["v96"] + ["HOP_ST128=1"]
    assert "HOP_TILE_ARITH=1" in got["v96"] and "HOP_TILE_ARITH=1" not in got["v88"]
    assert set(got["v96"]) - set(got["v88"]) == {"HOP_K_AHEAD_64=0", "HOP_TILE_ARITH=1"}


def test_the_command_line_without_a_line_or_arguments():
    """As a user runs it: a name with no line and no macros, and no arguments at all, are
    one-line refusals that write nothing."""
    before = set((HERE / "cands").glob("*.cu")) if (HERE / "cands").is_dir() else set()
    r = subprocess.run([sys.executable, str(HERE / "make.py"), "no_such_candidate"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "'no_such_candidate' has no line in" in r.stderr and "lines.txt" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(HERE / "make.py")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "make.py NAME" in r.stderr
    after = set((HERE / "cands").glob("*.cu")) if (HERE / "cands").is_dir() else set()
    assert after == before
