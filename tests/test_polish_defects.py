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


@pytest.mark.parametrize("value, words", [("nope", ["--scenarios nope", "not a scenario set",
                                                    "smoke"]),
                                          ("", ["--scenarios: empty"])])
def test_run_names_a_bad_scenarios_value_before_the_missing_key(tmp_path, capsys, monkeypatch,
                                                                value, words):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    sess = tmp_path / "s"
    for extra in (["--headless"], []):
        err = _one_line(capsys, ["run", "rmsnorm", *extra, "--session-dir", str(sess),
                                 "--scenarios", value], *words)
        assert "ANTHROPIC_API_KEY" not in err
    err = _one_line(capsys, ["attach", "rmsnorm", "--agent", "manual", "--session-dir",
                             str(sess), "--scenarios", value], *words)
    assert not sess.exists()


@pytest.mark.parametrize("line, words", [
    ('scenarios = "nope"', ["f.toml:3: --scenarios nope", "not a scenario set"]),
    ('scenarios = ""', ["f.toml:3: --scenarios: empty"]),
    ('goal_against = "fa9"', ["f.toml:3: --goal-against fa9"]),
    ('agent = "claude"\nscenarios = "nope"', ["f.toml:4: --scenarios nope"]),
])
def test_fleet_run_names_a_bad_goal_value_before_the_missing_key(tmp_path, capsys, monkeypatch,
                                                                 line, words):
    # it was the key first; with a key, the campaign failed to start and the fleet said 0
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.toml").write_text(f'[[campaign]]\ntask = "rmsnorm"\n{line}\n')
    err = _one_line(capsys, ["fleet", "run", "f.toml", "--session-dir", "out"], *words)
    assert "ANTHROPIC_API_KEY" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("arch", ["", " "])
def test_an_empty_arch_is_a_bad_value_not_the_default(capsys, monkeypatch, arch):
    monkeypatch.delenv("SOCRATIC_ARCH", raising=False)
    _one_line(capsys, ["eval", "rmsnorm", "--check-only", "--arch", arch],
              f"--arch {arch!r}: not an nvcc arch")


@pytest.mark.parametrize("name", ["", "  "])
def test_task_new_with_an_empty_name_names_the_empty_value(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    err = _one_line(capsys, ["task", "new", name], f"task name {name!r}: empty")
    assert "socratic: error: .:" not in err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("damage", ["{bad", "[", '{"config": {}}'])
def test_inject_on_an_attached_session_with_a_damaged_config_hints_for_its_kind(
        tmp_path, monkeypatch, damage):
    from tests.test_manual import FAKE_EVALUATOR, attach_rmsnorm, cli

    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    sess, _ = attach_rmsnorm(tmp_path)
    (sess / "config.json").write_text(damage)
    inbox = (sess / "inbox.jsonl").read_bytes()
    code, _, err = cli("inject", str(sess), "--pause")
    assert code == 2 and err.count("\n") == 1, err
    assert "a campaign by hand: nothing runs between its steps" in err, err
    assert "run --resume" not in err and (sess / "inbox.jsonl").read_bytes() == inbox
    code, _, err = cli("run", "--resume", str(sess), "--headless")
    assert code == 2 and "an attached campaign (manual)" in err and "API_KEY" not in err, err
    code, _, err = cli("inject", str(sess), "--text", "where does the time go?")
    assert code == 0 and "run --resume" not in err, err


@pytest.mark.parametrize("name, data", [("bad.socratic", b"hello\n"), ("empty.socratic", b""),
                                        ("odd.bin", b"\xfd7zXZ\x00garbage")])
def test_pack_of_a_file_that_is_no_pack_says_so_not_packed_already(tmp_path, capsys,
                                                                    monkeypatch, name, data):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(data)
    err = _one_line(capsys, ["pack", name], f"{name}: not a readable socratic pack",
                    "not a session folder")
    assert "packed already" not in err and (tmp_path / name).read_bytes() == data
    _one_line(capsys, ["pack", "fa3-h200"], "fa3-h200: packed already")   # a real pack still is


EXTREME = 'inputs = { x = { rows = { length = "cols", log2_spread = 20 } } }'


@pytest.mark.parametrize("old, new, words", [
    # a distribution's transforms: at their distribution's line, not the first one's note
    ("log2_spread = 20", "log2_spread = -2", ["`log2_spread` must be a whole number >= 0"]),
    (EXTREME, "inputs = { x = { rows = 5 } }", ["`rows` must be a table"]),
    (EXTREME, "inputs = { x = { channels = { count = -1 } } }", ["`count` must be a whole"]),
    (EXTREME, "inputs = { x = { scale = \"big\" } }", ["`scale` must be a number"]),
    (EXTREME, EXTREME.replace("{ x =", "{ q ="), ["'q' is not an input buffer"]),
    # [hidden] count and max_flops, and a hidden field's min and max
    ("count = 4", "count = -4", ["[hidden]: `count` must be a whole number >= 0"]),
    ("count = 4", "count = 2.5", ["[hidden]: `count`"]),
    ("max_flops = 4e10", "max_flops = 0", ["[hidden]: `max_flops` must be a number >= 1"]),
    ("rows = { min = 1, max = 65536", "rows = { min = 1, max = 0", ["hidden field 'rows'", "`max`"]),
    ("cols = { min = 16", 'cols = { min = "a"', ["hidden field 'cols'", "`min`"]),
])
def test_distribution_and_hidden_errors_give_the_line(tmp_path, capsys, old, new, words):
    from tests.test_bad_input import _rmsnorm_with

    folder = _rmsnorm_with(tmp_path, old, new)
    toml = folder / "task.toml"
    line = toml.read_text().splitlines().index(
        next(ln for ln in toml.read_text().splitlines() if new.splitlines()[0] in ln)) + 1
    err = _one_line(capsys, ["eval", str(folder), "--list"], *words)
    assert err.startswith(f"socratic: error: {toml}:{line}: "), err


@pytest.mark.parametrize("body", ["", "  \n\t\n"])
def test_an_empty_candidate_is_named_as_empty_before_any_build(tmp_path, capsys, monkeypatch,
                                                               body):
    from socratic.evaluator import runner

    def no_build(*args, **kwargs):
        raise AssertionError("built before saying the candidate is empty")

    monkeypatch.setattr(runner, "build", no_build)
    monkeypatch.setattr(runner, "build_task_sources", no_build)
    cand = tmp_path / "cand.cu"
    cand.write_text(body)
    for extra in (["--check-only"], ["--check-only", "--json"], ["--scenarios", "smoke"]):
        err = _one_line(capsys, ["eval", "rmsnorm", "--candidate", str(cand), *extra],
                        f"{cand}: the candidate file is empty")
        assert "entry point" not in err


@pytest.mark.parametrize("args, words", [
    (["eval", "", "--list"], ["task '': empty", "rmsnorm"]),          # was "task.toml: missing"
    (["eval", " ", "--check-only"], ["task ' ': empty"]),
    (["run", "", "--headless"], ["task '': empty"]),
    (["attach", "", "--agent", "manual"], ["task '': empty"]),
    (["eval", "rmsnorm", "--candidate", "", "--check-only"], ["--candidate: empty"]),  # was: the baseline
    (["eval", "rmsnorm", "--hidden", "99999999999999", "--check-only"],
     ["--hidden must be at most 4096"]),                              # drew for ever on a GPU
])
def test_empty_and_huge_eval_values_are_named(tmp_path, capsys, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _one_line(capsys, args, *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["watch", ""], ["replay", ""], ["report", ""], ["report", "demo", "--html", ""],
    ["pack", ""], ["pack", "demo", "-o", ""], ["unpack", ""], ["inject", "", "--text", "q"],
    ["retract", "", "1", "--why", "x"], ["fleet", "status", ""], ["fleet", "run", ""],
    ["bank", "trace", ""], ["bank", "list", "--bank-dir", ""],
    ["hook", "say", "--session", "", "hi"],
])
def test_an_empty_path_is_named_not_taken_for_the_current_folder(tmp_path, capsys, monkeypatch,
                                                                 args):
    # `pack ""` packed the current folder ("fzq.socratic: inside the session it packs"),
    # the others named "." as the session, the fleet or the pack
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    assert "'': an empty path" in err and list(tmp_path.iterdir()) == []
