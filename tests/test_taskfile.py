"""The one task loader (socratic.taskfile): every verb reads task.toml through it, so a bad
task gets the same one line, with file and line, from each of them before anything starts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from socratic.taskfile import KeyLines, TaskError, load_task
from socratic_doubles.testing import FAKE_KEY, TASK_TOML, make_task
from tests.evalcli import ROOT

RMSNORM = ROOT / "src" / "socratic" / "kernels" / "rmsnorm"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANTHROPIC_API_KEY": FAKE_KEY}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, check=False)


def _bad_default_set(tmp_path):
    task = tmp_path / "task"
    shutil.copytree(RMSNORM, task)
    text = (task / "task.toml").read_text()
    (task / "task.toml").write_text(text.replace('default_set = "bench"', 'default_set = "benhc"'))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("default_set"))
    return task, line


def test_a_bad_default_set_is_the_same_line_from_every_verb(tmp_path):
    task, line = _bad_default_set(tmp_path)
    sess = tmp_path / "sess"
    expected = (f"socratic: error: {task}/task.toml:{line}: `default_set` 'benhc' names no set "
                f"(sets: smoke, bench, full)\n")
    runs = {
        "eval": _run("socratic", "eval", str(task)),
        "eval --list": _run("socratic", "eval", str(task), "--list"),
        "eval --check-only": _run("socratic", "eval", str(task), "--check-only", "--json"),
        "run --headless": _run("socratic", "run", str(task), "--headless", "--session-dir", str(sess)),
        "run": _run("socratic", "run", str(task), "--session-dir", str(sess)),
        "fake evaluator": _run("socratic_doubles.fakeeval", str(task), "--list", "--json"),
    }
    for verb, r in runs.items():
        assert (r.returncode, r.stderr, r.stdout) == (2, expected, ""), verb
    assert not sess.exists()                                   # nothing started


def test_a_bad_default_set_stops_a_campaign_before_its_session(tmp_path):
    from socratic.errors import InputError
    from socratic.harness.api.campaign import Campaign
    from socratic_doubles.testing import fake_config

    task = make_task(tmp_path)
    (task / "task.toml").write_text(TASK_TOML.format(goal=1.2).replace(
        'default_set = "bench"', 'default_set = "nope"'))
    with pytest.raises(InputError, match=r"task.toml:4: `default_set` 'nope' names no set"):
        Campaign.create(task, fake_config(), session_dir=tmp_path / "s",
                        suggester=lambda *a: [])
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("old,new,message,where", [
    ("min_speedup = {goal}", "min_speedup = 0", "`goal.min_speedup` must be a positive number",
     "min_speedup"),
    ('against = "baseline"', "against = 3", "`goal.against` must be", "against"),
    ('per_unit = 1', 'per_unit = "m"', "buffer y per_unit: unknown name 'm'", "per_unit"),
    ('role = "output"', 'role = "result"', "buffer 'y': role must be one of", "role"),
    ('dtype = "f32"', 'dtype = "f64"', "buffer 'y': dtype must be one of", "dtype"),
    ('value = "n"', 'value = "nn"', "field n: unknown name 'nn'", "fields"),
    ('command = "nvcc', 'command = "cc', None, None),           # still fine: {src} {out} kept
    ("{{src}}", "src", "`build.command` lacks {src}", "command"),
    ("-o {{out}}", "-o '{{out}}", "`build.command` is not shell words (No closing quotation)",
     "command"),
    ('[sets.smoke]\nscenarios = [ {{ id = "a" }} ]', "[sets.smoke]\nscenarios = []",
     "set 'smoke' is empty", "[sets.smoke]"),
    ('entry = "tiny_fwd_ref"', "", "missing required key `reference.entry`", "[reference]"),
    ('name = "tiny"', "name = true", "`name` has the wrong type (bool)", "name"),
    # a misspelt table fell back to its default (goal 1.0: met by the unchanged baseline)
    ("[goal]", "[goals]", "unknown key `goals` (did you mean `goal`?)", "[goals]"),
    # wrong types were tracebacks; a negative size reached the GPU worker
    ('default_set = "bench"', 'default_set = "bench"\nseeds = "three"',
     "`seeds` must be a whole number >= 1 (got 'three')", "seeds"),
    ('default_set = "bench"', 'default_set = "bench"\nseeds = 0',
     "`seeds` must be a whole number >= 1 (got 0)", "seeds"),
    ('default_set = "bench"', 'default_set = "bench"\nid = 5', "`id` must be a template string",
     "id"),
    ('units = "n"', 'units = "n"\nmax_flops = "big"',
     "`reference.max_flops` must be a number >= 1 (got 'big')", "max_flops"),
    ("per_unit = 1", 'per_unit = 1\nfloor = "x"', "buffer 'y': `floor` must be a number >= 0",
     "floor"),
    ("n = 4", "n = -4", "buffer y shape: 'n' is -4, not a size (scenario a)", "shape"),
])
def test_errors_name_the_line_of_their_key(tmp_path, old, new, message, where):
    task = make_task(tmp_path)
    template = TASK_TOML
    assert old in template
    text = template.replace(old, new).format(goal=1.2)
    (task / "task.toml").write_text(text)
    if message is None:
        assert load_task(task).build_command.startswith("cc")
        return
    with pytest.raises(TaskError) as exc:
        load_task(task)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith(where))
    assert str(exc.value).startswith(f"{task}/task.toml:{line}: ") and message in str(exc.value)


def test_toml_syntax_errors_carry_their_line(tmp_path):
    task = make_task(tmp_path)
    (task / "task.toml").write_text(TASK_TOML.format(goal=1.2).replace('entry = "tiny_fwd"\n',
                                                                      'entry = "tiny_fwd\n'))
    with pytest.raises(TaskError, match=r"task\.toml:2: malformed TOML"):
        load_task(task)


def test_key_lines():
    text = ('name = "x"\n[goal]\nmin_speedup = 1\n[[buffers]]\nname = "a"\n[[buffers]]\n'
            'name = "b"\nrole = "output"\n[sets.bench]\nscenarios = []\n[params]\nfields = [\n'
            '  { name = "a", type = "ptr" },\n]\n')
    keys = KeyLines(text)
    assert keys.line("name") == 1 and keys.line("goal.min_speedup") == 3
    assert keys.line("goal.against") == 2                       # not written: its table
    assert keys.line("buffers[1].role") == 8 and keys.line("buffers[1].dtype") == 6
    assert keys.line("buffers") == 4 and keys.line("sets.bench") == 9 and keys.line("sets") == 9
    assert keys.line("params.fields") == 12 and keys.line("nothing.here") is None


def test_the_harness_sees_the_loaders_task(tmp_path):
    from socratic.harness.core.task import CampaignTask

    task = CampaignTask.load(make_task(tmp_path))
    assert task.spec.default_set == task.default_set == "bench"
    assert task.scenario_ids(None) == ["a", "b", "c"] and task.scenario_ids("nope") == []
    assert task.goal().min_speedup == 1.2 and task.goal(2.0).against == "baseline"
    assert task.baseline == "baseline.cu"
    flash = CampaignTask.load(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")     # grid sets expanded too
    assert len(flash.scenario_ids("full")) == 210


@pytest.mark.parametrize("path,message", [
    ("/etc/hostname", "`{key}` must be a path inside the task folder, without `..` (got '/etc/hostname')"),
    ("../outside.cu", "`{key}` must be a path inside the task folder, without `..` (got '../outside.cu')"),
    ("sub", "{what} 'sub' is not a regular file"),
    ("nope.cu", "{what} 'nope.cu' not found in"),
])
@pytest.mark.parametrize("key,what", [("baseline", "baseline file"), ("source", "reference source")])
def test_the_files_a_task_names_lie_inside_its_folder(tmp_path, path, message, key, what):
    # a campaign copies the task folder, and only it, into the session and the workspace:
    # a baseline outside it was copied to the session's parent, or missed
    task = make_task(tmp_path)
    (task / "sub").mkdir()
    (tmp_path / "outside.cu").write_text("// not the task's\n")
    text = TASK_TOML.format(goal=1.2)
    where = next(t for t in text.splitlines() if t.startswith(f"{key} = "))
    text = text.replace(where, f'{key} = "{path}"')
    (task / "task.toml").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith(f"{key} = "))
    with pytest.raises(TaskError) as exc:
        load_task(task)
    key = "reference.source" if key == "source" else key
    assert str(exc.value).startswith(f"{task}/task.toml:{line}: ")
    assert message.format(key=key, what=what) in str(exc.value)


def test_a_task_file_larger_than_a_mebibyte_is_refused_without_reading_it_all(tmp_path):
    task = make_task(tmp_path)
    with (task / "task.toml").open("a") as f:
        f.write("#" * (2 << 20))
    with pytest.raises(TaskError, match=r"task\.toml: larger than 1 MiB: not a task file"):
        load_task(task)


@pytest.mark.parametrize("path,message", [
    (".base.cu", "names a file a campaign does not copy (a dotfile or under __pycache__: got '.base.cu')"),
    ("__pycache__/b.cu", "names a file a campaign does not copy"),
    ("a" * 300, "cannot read (File name too long)"),
])
def test_a_baseline_the_campaign_would_not_copy_or_cannot_read_is_one_line(tmp_path, path, message):
    task = make_task(tmp_path)
    (task / "__pycache__").mkdir()
    for name in (".base.cu", "__pycache__/b.cu"):
        (task / name).write_text("// hidden\n")
    text = TASK_TOML.format(goal=1.2).replace('baseline = "baseline.cu"', f'baseline = "{path}"')
    (task / "task.toml").write_text(text)
    with pytest.raises(TaskError, match=re.escape(message)):
        load_task(task)


def test_a_grid_too_large_to_expand_is_one_line(tmp_path):
    task = make_task(tmp_path)
    text = TASK_TOML.format(goal=1.2)
    big = "[[sets.huge.grid]]\nn = [" + ", ".join(str(i) for i in range(1, 400)) + "]\n" + \
          "m = [" + ", ".join(str(i) for i in range(1, 400)) + "]\n"
    (task / "task.toml").write_text(text + "\n" + big)
    with pytest.raises(TaskError, match=r"set 'huge': a grid of 159,201 combinations \(at most 100,000\)"):
        load_task(task)
