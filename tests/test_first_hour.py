"""A user's first hour (issue 43): the README as user documentation, a task of one's own
(`socratic task new`), any NVIDIA GPU (the arch from the device or --arch, datasheet bounds),
and the small defects a new user met."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import tomllib

from socratic import taskfile
from socratic.cli import main
from socratic.evaluator.limits import bound_ms, no_bound_note
from socratic.taskfile import load_task

ROOT = Path(__file__).resolve().parent.parent
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                reason="needs nvcc")
pytestmark = pytest.mark.timeout(600)


# README and docs ------------------------------------------------------------------------
def test_readme_is_user_documentation_with_the_two_commands_first():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 350
    first = re.search(r"```sh\n(.*?)```", text, re.S).group(1).splitlines()
    assert len(first) == 2
    for line in first:   # a virtual environment: a stock Debian/Ubuntu python3 refuses system installs
        assert line.startswith("python3 -m venv .venv && . .venv/bin/activate && python -m pip install ")
    assert "socratic replay" in first[0] and "'.[test]'" in first[1] and "pytest" in first[1]
    for heading in ("## Requirements", "## A ten-minute tour", "## Bring your own kernel", "## Threat model"):
        assert heading in text
    assert "docs/THREAT_MODEL.md" in text.split("## Threat model")[1].split("\n## ")[0]
    assert "socratic[" not in text   # the PyPI name belongs to another project


def test_every_page_the_readme_links_exists():
    text = (ROOT / "README.md").read_text()
    for link in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]*)", text):
        assert (ROOT / link).exists(), link


def test_architecture_points_at_no_missing_file():
    head = "\n".join((ROOT / "docs" / "ARCHITECTURE.md").read_text().splitlines()[:8])
    for path in re.findall(r"\]\(([^)\s]+\.md)\)|`([^`\s]+\.md)`", head):
        path = path[0] or path[1]
        assert (ROOT / "docs" / path).resolve().exists(), path


def test_the_documented_task_example_is_valid_toml_and_a_valid_task(tmp_path):
    text = (ROOT / "docs" / "TASKS.md").read_text()
    block = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    data = tomllib.loads(block)
    for key in ("dtype", "init", "floor"):
        assert key in text
    assert data["id"] == "r{rows:k}-c{cols:k}" and "Return value" in text
    folder = tmp_path / "mysoftmax"
    assert main(["task", "new", str(folder)]) == 0
    (folder / "task.toml").write_text(block)
    task = load_task(folder)
    assert [s.id for s in task.sets["bench"]] == ["r1k-c1k", "r4k-c4k"]


# socratic task new ----------------------------------------------------------------------
def test_task_new_writes_a_task_that_loads(tmp_path, capsys):
    folder = tmp_path / "my-softmax"
    assert main(["task", "new", str(folder)]) == 0
    assert {p.name for p in folder.iterdir()} == {"task.toml", "baseline.cu", "reference.cu", "README.md"}
    task = load_task(folder)
    assert task.name == "my-softmax" and task.entry == "my_softmax_fwd"
    assert "my_softmax_fwd_ref" in (folder / "reference.cu").read_text()
    tomllib.loads((folder / "task.toml").read_text())
    capsys.readouterr()
    assert main(["task", "new", str(folder)]) == 2          # never over your files
    assert "already exists" in capsys.readouterr().err
    assert main(["task", "new", str(tmp_path / "x"), "--like", "nope"]) == 2
    assert "--like 'nope'" in capsys.readouterr().err
    assert main(["task", "new", str(tmp_path / "n"), "--from", "rmsnorm"]) == 0
    assert load_task(tmp_path / "n").name == "n"


@needs_nvcc
def test_task_new_passes_check_only_and_a_broken_reference_fails_in_one_line(tmp_path, capsys):
    folder = tmp_path / "mysoftmax"
    assert main(["task", "new", str(folder)]) == 0
    capsys.readouterr()
    assert main(["eval", str(folder), "--check-only"]) == 0
    assert "task  baseline and reference built" in capsys.readouterr().out   # the task's own sources too
    (folder / "reference.cu").write_text((folder / "reference.cu").read_text() + "\nint broken = ;\n")
    capsys.readouterr()
    assert main(["eval", str(folder), "--check-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reference.cu" in err and "does not build" in err
    assert main(["task", "new", str(tmp_path / "b")]) == 0
    toml = tmp_path / "b" / "task.toml"
    toml.write_text(toml.read_text().replace('entry = "b_fwd_ref"', 'entry = "b_fwd_rf"'))
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "b"), "--check-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "task.toml:" in err and "b_fwd_rf" in err and "exports b_fwd_ref" in err


# any NVIDIA GPU -------------------------------------------------------------------------
@pytest.fixture
def device(monkeypatch):
    def use(cc):
        monkeypatch.setattr(taskfile, "_CC", [cc])
    monkeypatch.delenv("SOCRATIC_ARCH", raising=False)
    return use


@pytest.mark.parametrize("cc, arch", [((8, 0), "sm_80"), ((8, 9), "sm_89"), ((9, 0), "sm_90a"),
                                      ((10, 0), "sm_100a"), (None, "sm_80")])
def test_rmsnorm_builds_for_the_gpu_it_finds(device, cc, arch):
    device(cc)
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "rmsnorm")
    assert task.select_arch() == arch
    assert f"-gencode=arch=compute{arch[2:]},code={arch} " in task.build_command


def test_the_attention_task_needs_hopper_in_one_line(device):
    task = load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")
    device((9, 0))
    assert task.select_arch() == "sm_90a"
    device(None)
    assert task.select_arch() == "sm_90a"     # a CPU machine checks builds for the task's arch
    device((8, 0))
    with pytest.raises(taskfile.TaskError, match=r"runs on sm_90a \(Hopper\) only; .* is sm_80 \(cc 8.0\)"):
        task.select_arch()
    with pytest.raises(taskfile.TaskError, match="builds for sm_90a"):
        task.select_arch("sm_80")
    with pytest.raises(taskfile.TaskError, match="not an nvcc arch"):
        task.select_arch("hopper")


def test_no_shipped_task_hardcodes_an_arch():
    for toml in (ROOT / "src" / "socratic" / "kernels").glob("*/task.toml"):
        command = tomllib.loads(toml.read_text())["build"]["command"]
        assert "sm_90" not in command and "{arch}" in command, toml


def test_a_build_command_with_an_unknown_placeholder_is_one_line(tmp_path):
    folder = tmp_path / "t"
    assert main(["task", "new", str(folder)]) == 0
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace("{compute}", "{computer}"))
    with pytest.raises(taskfile.TaskError, match=r"task.toml:\d+: `build.command`: unknown placeholder \{computer\}"):
        load_task(folder)


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90a", "sm_100a"])
def test_rmsnorm_check_only_builds_for_each_arch(arch, capsys):
    assert main(["eval", "rmsnorm", "--check-only", "--arch", arch, "--json"]) == 0
    assert f"code={arch} " in capsys.readouterr().out


@pytest.mark.parametrize("name", ["NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA L40S",
                                  "NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA B200"])
def test_datasheet_bounds_cover_the_common_gpus(name):
    bound = bound_ms(name, 1e12, 1e9)
    assert bound["physical"] and bound["measured"] and bound["measured"] >= bound["physical"]
    assert no_bound_note(name) is None


def test_an_unknown_gpu_says_it_has_no_bound():
    assert bound_ms("NVIDIA RTX A6000", 1e12, 1e9) == {"physical": None, "measured": None}
    assert "unknown GPU 'NVIDIA RTX A6000': no time bound" in no_bound_note("NVIDIA RTX A6000")
    assert bound_ms("NVIDIA H100 PCIe", 0, 2e9)["physical"] == pytest.approx(1.0)   # 2.0 TB/s, not SXM's


# small defects --------------------------------------------------------------------------
def test_eval_of_a_task_toml_path_takes_its_folder(capsys):
    assert main(["eval", str(ROOT / "src" / "socratic" / "kernels" / "rmsnorm" / "task.toml"), "--list"]) == 0
    assert "task rmsnorm" in capsys.readouterr().out


@needs_nvcc
def test_a_binary_candidate_is_one_line(tmp_path, capsys):
    blob = tmp_path / "a.out"
    blob.write_bytes(bytes(range(256)) * 16)
    assert main(["eval", "rmsnorm", "--candidate", str(blob), "--check-only"]) == 1   # a failed check
    out = capsys.readouterr().out
    assert "a binary file, not CUDA source" in out and len(out) < 600


@needs_nvcc
def test_a_build_command_not_found_names_the_task_key(tmp_path, capsys):
    folder = tmp_path / "t"
    assert main(["task", "new", str(folder)]) == 0
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace('command = "nvcc ', 'command = "no-such-nvcc '))
    assert main(["eval", str(folder), "--check-only"]) == 2
    err = capsys.readouterr().err
    assert "build command not found: no-such-nvcc" in err and "build.command" in err


def test_the_tests_build_outside_the_users_cache():
    cache = Path(os.environ["SOCRATIC_CACHE"]).resolve()
    assert not str(cache).startswith(str(Path.home().resolve() / ".cache"))


def test_install_hints_name_the_checkout_not_pypi():
    for path in ("src/socratic/report/html.py", "src/socratic/fleet/slurm.py"):
        text = (ROOT / path).read_text()
        assert "socratic[" not in text and "'.[" in text


def test_hook_latency_help_explains_every_option():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hook_latency.py"), "--help"],
                         capture_output=True, text=True, timeout=120).stdout
    for words in ("hook calls measured per case", "session sizes", "through the session server",
                  "write the results to this JSON file"):
        assert words in " ".join(out.split())


async def test_typing_roofline_asks_the_roofline_question_not_a_scattered_suggestion():
    from textual.app import App

    from socratic.bank import load_bank, search
    from socratic.tui.widgets.question_picker import QuestionPicker

    bank = load_bank()

    class Host(App):
        def compose(self):
            yield QuestionPicker(bank, ["bound.latency-chain"], set(), "plateau", search=search)

    async with Host().run_test(size=(100, 30)) as pilot:
        picker = pilot.app.query_one(QuestionPicker)
        picker.refill("roofline")
        await pilot.pause()
        assert picker.shown[0].id == "bound.roofline-fraction"
        picker.refill("latency chain")   # a suggestion the words name plainly stays on top
        await pilot.pause()
        assert picker.shown[0].id == "bound.latency-chain"


def test_attach_launch_without_the_agent_creates_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    session = tmp_path / "s"
    args = ["attach", "rmsnorm", "--agent", "claude", "--launch", "--session-dir", str(session)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "`claude` not found on PATH" in err and "nothing was created" in err
    assert not session.exists()
    assert main(args) == 2                  # the retry says the same, not "already holds a campaign"
    assert "`claude` not found on PATH" in capsys.readouterr().err


def test_unpack_on_a_full_disk_names_the_path_and_leaves_no_partial_folder(tmp_path, monkeypatch, capsys):
    import errno

    calls = {"n": 0}
    real = Path.write_bytes

    def full(self, data):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    dest = tmp_path / "copy"
    assert main(["unpack", "fa3-h200", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and str(dest) in err
    assert not dest.exists()                   # the retry is not blocked
    monkeypatch.setattr(Path, "write_bytes", real)
    assert main(["unpack", "fa3-h200", str(dest)]) == 0


def test_a_value_below_the_goal_never_reads_as_the_goal():
    from socratic.tui import format as fmt

    assert fmt.speedup(0.996, goal=1.0) == "0.99×"       # it is marked slow: it must read below
    assert fmt.speedup(0.996) == "1.00×"
    assert fmt.speedup(1.004, goal=1.0) == "1.00×"       # at or above: rounded as usual
    assert fmt.speedup(1.096, goal=1.10) == "1.09×"
    assert fmt.speedup(None, goal=1.0) == "-"


@pytest.mark.parametrize("mode", ["watch", "replay", "fleet"])
async def test_the_footer_keeps_help_and_quit_at_40_columns(mode):
    from textual.app import App

    from socratic.tui.widgets.key_hints import KeyHints

    class Host(App):
        def compose(self):
            yield KeyHints(mode)

    async with Host().run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        hints = pilot.app.query_one(KeyHints)
        text = str(hints.render())
        assert "? help" in text and "^q quit" in text and len(text.rstrip()) <= 40, text
