"""What a mistyped command line tells the user: the verb's own --help for an unknown
option, the bundled task a misspelt task name meant, and only close bank ids."""

from __future__ import annotations

import pytest

from socratic.cli import main


@pytest.mark.parametrize("args,prog", [
    (["run", "rmsnorm", "--frob"], "socratic run"),
    (["eval", "rmsnorm", "--frob"], "socratic eval"),
    (["inject", "S", "--text", "q", "extra"], "socratic inject"),
    (["watch", "S", "--frob"], "socratic watch"),
    (["replay", "--frob"], "socratic replay"),
    (["bank", "--frob"], "socratic bank"),
    (["bank", "show", "x", "--frob"], "socratic bank show"),
    (["--frob"], "socratic"),
])
def test_unknown_option_points_to_the_verbs_help(capsys, args, prog):
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: error: unrecognized arguments:") and \
        err.rstrip().endswith(f"(see `{prog} --help`)"), err


@pytest.mark.parametrize("args", [["eval", "rmsnrom", "--list"], ["eval", "rmsnrom"],
                                  ["run", "rmsnrom", "--headless"], ["run", "rmsnrom"]])
def test_misspelt_task_name_suggests_the_bundled_task(capsys, monkeypatch, args):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rmsnrom" in err and "did you mean rmsnorm?" in err, err


def test_unknown_task_lists_the_bundled_tasks(capsys):
    assert main(["eval", "no/such/task"]) == 2
    err = capsys.readouterr().err
    assert "no/such/task: no such task directory" in err and "flash_attn_fwd, rmsnorm" in err
    assert main(["eval", "flash_atn", "--list"]) == 2
    assert "did you mean flash_attn_fwd?" in capsys.readouterr().err


@pytest.mark.parametrize("typed,expected", [
    ("nope", None), ("xyz", None), ("timing", None),
    ("gap.stall-reason", "gap.stall-reasons"), ("stall-reasons", "gap.stall-reasons"),
    ("measurment.what-is-timed", "measurement.what-is-timed"),
])
def test_bank_show_suggests_only_close_ids(capsys, monkeypatch, tmp_path, typed, expected):
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(tmp_path / "none"))
    assert main(["bank", "show", typed]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'{typed}'" in err, err
    if expected is None:
        assert "did you mean" not in err and "socratic bank search" in err, err
    else:
        assert f"(did you mean: {expected})" in err, err


def _parsers(parser, path=("socratic",)):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_argument_of_every_verb_says_what_it_is():
    # `socratic inject --help` listed SESSION_DIR with no word on it
    import argparse

    from socratic.cli import build_parser

    bare = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                bare.append(f"{' '.join(path)} {action.metavar or action.dest}")
    assert bare == []
