"""Bad input a reviewer found answered wrongly: each is one line naming the file or value
(exit code 2), never a traceback, never a message about something else."""

from __future__ import annotations

import pytest

from socratic.cli import main


def _one_line(capsys, args: list[str], *words: str) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize("make, words", [
    (lambda p: p.mkdir(), ["no bank files (*.toml) in this folder"]),
    (lambda p: p.write_text(""), ["not a bank file", "no [[entry]] tables"]),
    (lambda p: (p.mkdir(), (p / "a.toml").write_text("# nothing yet\n")),
     ["its bank files (*.toml) hold no [[entry]] tables"]),
])
@pytest.mark.parametrize("verb", [["bank", "validate"], ["bank", "list"], ["report", "demo"]])
def test_a_bank_dir_that_adds_nothing_is_an_error_naming_it(tmp_path, capsys, monkeypatch,
                                                             make, words, verb):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(tmp_path / "no-user-bank"))
    make(tmp_path / "empty.cu")
    err = _one_line(capsys, [*verb, "--bank-dir", "empty.cu"], *words)
    assert err.startswith("socratic: error: empty.cu: "), err
