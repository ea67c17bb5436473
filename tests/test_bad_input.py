"""A careless user's input, each as they typed it: one line naming the file or value (exit
code 2), never a traceback, and nothing that silently means something else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from socratic.cli import main


def _rmsnorm_with(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the bundled rmsnorm task whose task.toml has `old` replaced by `new`."""
    from socratic.resources import bundled_dir

    folder = tmp_path / "t"
    shutil.copytree(bundled_dir("socratic.kernels") / "rmsnorm", folder)
    toml = folder / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new, 1))
    return folder


EXTREME = 'inputs = { x = { rows = { length = "cols", log2_spread = 20 } } }'
ROWS = 'rows = { min = 1, max = 65536, scale = "log" }'
GRID = "grid = [\n  { rows = [1, 3, 17, 128, 1000, 4096]"


@pytest.mark.parametrize("old,new,words", [
    # wrong types that crashed the loader (AttributeError, TypeError, ValueError)
    (EXTREME, "inputs = 5", ["distribution 'extreme_rows'", "`inputs` must be a table"]),
    (EXTREME, "inputs = { x = { rows = 5 } }", ["input 'x'", "`rows` must be a table"]),
    (EXTREME, "inputs = { x = { channels = 5 } }", ["`channels` must be a table"]),
    (EXTREME, 'inputs = { x = { rows = { length = "cols", log2_spread = "x" } } }',
     ["`log2_spread` must be a whole number"]),
    (ROWS, 'rows = { min = 1, max = 10, p_equal = "x" }', ["hidden field 'rows'", "`p_equal`"]),
    ("[sets.smoke]\nscenarios = [", "[sets.smoke]\nscenarios = 5\n[sets.other]\nscenarios = [",
     ["set 'smoke'", "`scenarios` must be a list of inline tables"]),
    (GRID, GRID.replace("grid = [", "grid = [5,"), ["set 'full'", "`grid` must be a list"]),
    (GRID, GRID.replace("{ rows", '{ where = "rows >", rows'),
     ["set 'full'", "grid `where`", "bad expression 'rows >'"]),
    (GRID, GRID.replace("{ rows", '{ where = "rowz > 1", rows'), ["unknown name 'rowz'"]),
    # a [hidden] space that could draw nothing: every evaluation silently without hidden
    # scenarios, the goal's hidden rule vacuous
    ("count = 4", 'count = 4\nwhere = "rowz > 3"', ["[hidden]: no scenario can be drawn",
                                                     "unknown name 'rowz'"]),
    ("count = 4", 'count = 4\nwhere = "rows >"', ["[hidden]", "bad expression"]),
    (ROWS, 'rows = "colz * 2"', ["[hidden]", "unknown name 'colz'"]),
    # misspelt keys and values that were ignored, their defaults used unsaid
    (ROWS, 'rows = { min = 1, max = 10, scale = "lg" }', ["`scale` must be \"linear\" or \"log\""]),
    (ROWS, 'rows = { min = 1, max = 10, p_equl = 0.5 }', ["unknown key `p_equl`"]),
    ("count = 4", "count = 4\nmax_flop = 1e9", ["unknown key `hidden.max_flop`"]),
    ("[sets.smoke]\nscenarios = [", "[sets.smoke]\nscenario = [",
     ["set 'smoke': unknown key `sets.smoke.scenario`"]),
    ("max_flops = 4e11", "max_flops = 4e11\nunit_flop = 3", ["unknown key `reference.unit_flop`"]),
    # top-level tables and lists of the wrong type: a crash at load (derived), at attach
    # (banned) or only on the GPU node (comparisons)
    ("seeds = 3", "seeds = 3\nderived = 5", ["`derived` must be a table"]),
    ("seeds = 3", "seeds = 3\ncomparisons = 5", ["`comparisons` must be a table"]),
    ("seeds = 3", 'seeds = 3\ncomparisons = { names = "fa3" }', ["`comparisons.names` must be a list"]),
    ("seeds = 3", 'seeds = 3\nbanned = ["cublas", 5]', ["`banned` must be a list of library names"]),
    # a number field of the params struct given a text: it failed only on the GPU node
    ("eps = 1e-6", 'eps = "tiny"', ["field eps", "'tiny', not a number"]),
])
def test_a_damaged_task_file_is_one_line_naming_it(tmp_path, capsys, old, new, words):
    folder = _rmsnorm_with(tmp_path, old, new)
    for args in (["--list"], ["--space", "3", "--list"]):
        assert main(["eval", str(folder), *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith(f"socratic: error: {folder / 'task.toml'}"), err
        for w in words:
            assert w in err, err


def test_the_bundled_tasks_still_draw_their_hidden_scenarios(capsys):
    for task in ("rmsnorm", "flash_attn_fwd"):
        assert main(["eval", task, "--space", "3", "--list"]) == 0
        assert "(3 scenarios)" in capsys.readouterr().out


def test_a_question_injected_after_a_torn_inbox_line_is_read(tmp_path, capsys):
    """A writer killed mid-line (a full disk) leaves the inbox without its last newline:
    the next question was glued onto it, reported queued and never asked."""
    from socratic.harness.core.inbox import read_commands
    from socratic.resources import resolve_session_dir

    sess = tmp_path / "my session"
    shutil.copytree(resolve_session_dir(Path("demo")), sess)
    inbox = sess / "inbox.jsonl"
    inbox.write_bytes(inbox.read_bytes() + b'{"type":"question","te')
    before = inbox.read_bytes()
    assert main(["inject", str(sess), "--text", "which bound applies?"]) == 0
    assert "question queued" in capsys.readouterr().err
    assert inbox.read_bytes().startswith(before)          # nothing already there is lost
    texts = [getattr(c, "text", None) for c, _ in read_commands(inbox)]
    assert texts[-1] == "which bound applies?", texts


def test_pack_into_a_missing_folder_names_it(tmp_path, capsys):
    out = tmp_path / "no such folder" / "demo.socratic"
    assert main(["pack", "demo", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err    # it named demo.socratic.tmp, a file the user never typed
    assert f"{out}: no folder {out.parent} to write it in" in err and ".tmp" not in err, err


def test_pack_on_a_full_disk_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    import errno

    real = Path.write_bytes

    def full(self, data):   # the disk fills half way through
        real(self, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", full)
    assert main(["pack", "demo", "-o", str(tmp_path / "demo.socratic")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("late", [["--session", "S"], ["--session=S"]])
def test_agent_with_session_after_the_name_says_where_it_goes(tmp_path, capsys, monkeypatch, late):
    """After NAME every word is the agent's: the session was looked for in this folder and
    the error spoke of a missing workspace marker, not of the --session the user typed."""
    monkeypatch.chdir(tmp_path)
    assert main(["agent", "claude", *late]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "put it first: `socratic agent --session DIR claude`" in err, err
