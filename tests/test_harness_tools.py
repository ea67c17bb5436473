"""The agent's tools: workspace confinement, bash timeout/cap/environment, redaction."""

from __future__ import annotations

import os

import pytest

from socratic.harness.api.tools import Tools, cap_text, tool_specs
from socratic.harness.core.redaction import Redactor, scrubbed_env
from socratic_doubles.testing import FAKE_KEY


@pytest.fixture
def tools(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("line1\nline2\nline3\n")
    env = scrubbed_env([FAKE_KEY], base={"PATH": os.environ["PATH"], "HOME": str(tmp_path),
                                         "ANTHROPIC_API_KEY": FAKE_KEY,
                                         "GITHUB_TOKEN": "ghp_x", "MY_PASSWORD": "p",
                                         "INNOCENT": "has " + FAKE_KEY, "CUDA_HOME": "/cuda"})
    return Tools(ws, env=env, output_cap=600, bash_timeout_s=5, redact=Redactor([FAKE_KEY]),
                 evaluate=lambda inp: f"evaluated {inp}")


def test_specs_state_the_cap_and_names():
    specs = tool_specs(1234, 60)
    assert [s["name"] for s in specs] == ["bash", "read_file", "write_file", "edit_file",
                                          "evaluate"]
    assert "1234 characters" in specs[0]["description"]


def test_env_is_scrubbed(tools):
    assert set(tools.env) == {"PATH", "HOME", "CUDA_HOME"}
    ok, out = tools.run("bash", {"command": "env"})
    assert ok and "ANTHROPIC" not in out and "ghp_x" not in out and "CUDA_HOME" in out


def test_bash_runs_in_workspace_and_reports_exit(tools):
    ok, out = tools.run("bash", {"command": "pwd; cat a.txt; exit 3"})
    assert not ok and str(tools.root) in out and "line2" in out and "[exit code 3]" in out


def test_bash_timeout(tools):
    ok, out = tools.run("bash", {"command": "echo start; sleep 30", "timeout_s": 0.5})
    assert not ok and "start" in out and "timeout" in out


def test_bash_output_capped_with_cap_stated(tools):
    ok, out = tools.run("bash", {"command": "seq 1 100000"})
    assert ok and len(out) <= 800 and "capped at" in out and "100000" in out


def test_output_redacted(tools):
    (tools.workspace / "leak.txt").write_text(f"key={FAKE_KEY}\n")
    ok, out = tools.run("read_file", {"path": "leak.txt"})
    assert FAKE_KEY not in out and "[redacted]" in out
    ok, out = tools.run("bash", {"command": "cat leak.txt"})
    assert FAKE_KEY not in out


def test_file_tools_confined(tools, tmp_path):
    (tmp_path / "outside.txt").write_text("secret")
    for path in ("../outside.txt", str(tmp_path / "outside.txt"), "/etc/passwd"):
        ok, out = tools.run("read_file", {"path": path})
        assert not ok and "outside the workspace" in out
    os.symlink(tmp_path / "outside.txt", tools.workspace / "link.txt")
    ok, out = tools.run("read_file", {"path": "link.txt"})
    assert not ok and "outside the workspace" in out
    ok, out = tools.run("write_file", {"path": "../x.txt", "content": "x"})
    assert not ok and not (tmp_path / "x.txt").exists()


def test_read_write_edit(tools):
    ok, out = tools.run("read_file", {"path": "a.txt", "offset": 2, "limit": 1})
    assert ok and out == "line2\n"
    ok, out = tools.run("write_file", {"path": "sub/b.cu", "content": "int x = 1;\nint y = 1;\n"})
    assert ok and (tools.workspace / "sub/b.cu").exists()
    ok, out = tools.run("edit_file", {"path": "sub/b.cu", "old_string": "= 1;",
                                      "new_string": "= 2;"})
    assert not ok and "2 times" in out
    ok, out = tools.run("edit_file", {"path": "sub/b.cu", "old_string": "int x = 1;",
                                      "new_string": "int x = 7;"})
    assert ok and (tools.workspace / "sub/b.cu").read_text().startswith("int x = 7;")
    ok, out = tools.run("edit_file", {"path": "sub/b.cu", "old_string": "= 1;",
                                      "new_string": "= 3;", "replace_all": True})
    assert ok and "= 3;" in (tools.workspace / "sub/b.cu").read_text()
    ok, out = tools.run("edit_file", {"path": "sub/b.cu", "old_string": "nope",
                                      "new_string": ""})
    assert not ok and "not found" in out


def test_bad_calls(tools):
    assert tools.run("rm_rf", {})[0] is False
    assert tools.run("bash", {})[0] is False
    assert tools.run("read_file", {"path": "missing.txt"})[0] is False
    assert tools.run("evaluate", {"scenarios": "smoke"}) == (True, "evaluated {'scenarios': 'smoke'}")


def test_cap_text():
    assert cap_text("abc", 10) == "abc"
    t = cap_text("x" * 100 + "END", 50)
    assert t.endswith("END") and "capped at 50" in t
