"""The bundled packs' reports stay byte-identical (issue 44): the report is the one reading of
the log plus formatting, so a change to the reading that moves a figure shows here. Golden
files: tests/data/golden_reports/, written by `socratic report PACK [--json|--md]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from socratic.cli import main
from socratic.resources import bundled_dir

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_reports"


def normalized(out: str) -> str:
    """The report with the bundled sessions' folder (wherever this checkout is) as <sessions>."""
    return out.replace(str(bundled_dir("socratic.sessions")), "<sessions>")


@pytest.mark.parametrize("pack", ["demo", "fa3-h200"])
@pytest.mark.parametrize("flag", ["", "--json", "--md"])
def test_bundled_report_is_unchanged(pack: str, flag: str, capsys, monkeypatch) -> None:
    monkeypatch.delenv("SOCRATIC_BANK_DIR", raising=False)  # the shipped bank only, as the goldens were made
    assert main(["report", pack, *([flag] if flag else [])]) == 0
    want = (GOLDEN / f"{pack}{flag or '.text'}.out").read_text()
    assert normalized(capsys.readouterr().out) == want
