"""The agent's five tools: bash, read_file, write_file, edit_file, evaluate.

bash runs in the workspace with a timeout, its output capped (the cap is stated in the
description and in the truncation marker) and an environment without API keys or other
secrets. The file tools are confined to the workspace. evaluate is delegated to the
campaign (it logs events and keeps the history).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from socratic.harness.core.redaction import Redactor


def cap_text(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    head = cap * 2 // 5
    tail = cap - head
    omitted = len(text) - head - tail
    return (text[:head] + f"\n[... {omitted} characters omitted: tool output is capped at "
            f"{cap} characters, head and tail shown ...]\n" + text[-tail:])


class ToolError(Exception):
    """A tool call the agent got wrong; the message goes back as an error result."""


def tool_specs(output_cap: int, bash_timeout_s: float) -> list[dict[str, Any]]:
    return [
        {"name": "bash",
         "description": (f"Run a bash command in the campaign workspace (the cwd). Times out "
                         f"after {bash_timeout_s:g} s (override with timeout_s, at most "
                         f"{bash_timeout_s:g}). stdout and stderr are merged and capped at "
                         f"{output_cap} characters (head and tail kept). API keys and other "
                         f"secrets are not in its environment."),
         "input_schema": {"type": "object", "properties": {
             "command": {"type": "string", "description": "the bash command line"},
             "timeout_s": {"type": "number", "description": "seconds before it is killed"}},
             "required": ["command"]}},
        {"name": "read_file",
         "description": (f"Read a text file inside the workspace (path relative to it). "
                         f"Optional 1-based line offset and line limit. Output capped at "
                         f"{output_cap} characters."),
         "input_schema": {"type": "object", "properties": {
             "path": {"type": "string"}, "offset": {"type": "integer"},
             "limit": {"type": "integer"}}, "required": ["path"]}},
        {"name": "write_file",
         "description": "Create or overwrite a file inside the workspace with the given content.",
         "input_schema": {"type": "object", "properties": {
             "path": {"type": "string"}, "content": {"type": "string"}},
             "required": ["path", "content"]}},
        {"name": "edit_file",
         "description": ("Replace an exact string in a workspace file. old_string must occur "
                         "exactly once unless replace_all is true."),
         "input_schema": {"type": "object", "properties": {
             "path": {"type": "string"}, "old_string": {"type": "string"},
             "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
             "required": ["path", "old_string", "new_string"]}},
        {"name": "evaluate",
         "description": ("Build and check the workspace candidate (candidate.cu) on every "
                         "scenario of the set and time it against the baseline on the same GPU. "
                         "Returns a per-scenario table, a summary and whether the goal is met; "
                         "the full JSON result is saved under the session. "
                         "`scenarios` picks a set (default: the goal's set); `space:N` draws N "
                         "shapes from the task's hidden space and adds a coverage table (where "
                         "the kernel is slow across the space; it never judges the goal)."),
         "input_schema": {"type": "object", "properties": {
             "scenarios": {"type": "string",
                           "description": "a set name, ids comma-separated, or space:N"}},
             "required": []}},
    ]


class Tools:
    def __init__(self, workspace: Path, *, env: dict[str, str], output_cap: int,
                 bash_timeout_s: float, redact: Redactor,
                 evaluate: Callable[[dict[str, Any]], str]) -> None:
        self.workspace = Path(workspace)
        self.root = self.workspace.resolve()
        self.env = env
        self.output_cap = output_cap
        self.bash_timeout_s = bash_timeout_s
        self.redact = redact
        self._evaluate = evaluate

    def run(self, name: str, inp: dict[str, Any]) -> tuple[bool, str]:
        """(ok, output) for one call; output already capped and redacted."""
        fn = getattr(self, f"tool_{name}", None)
        if fn is None:
            return False, f"unknown tool `{name}`; the tools are bash, read_file, write_file, " \
                          f"edit_file, evaluate"
        if not isinstance(inp, dict):
            return False, "tool input must be a JSON object"
        try:
            ok, out = fn(inp)
        except ToolError as exc:
            ok, out = False, str(exc)
        except (OSError, UnicodeError) as exc:
            ok, out = False, f"{type(exc).__name__}: {exc}"
        return ok, cap_text(self.redact(out), self.output_cap)

    # -- paths --------------------------------------------------------------------------
    def path(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw:
            raise ToolError("`path` must be a non-empty string")
        p = Path(raw)
        if not p.is_absolute():
            p = self.root / p
        resolved = p.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"{raw}: outside the workspace ({self.workspace}); the file tools "
                            f"only reach files inside it")
        return resolved

    # -- tools --------------------------------------------------------------------------
    def tool_bash(self, inp: dict[str, Any]) -> tuple[bool, str]:
        cmd = inp.get("command")
        if not isinstance(cmd, str) or not cmd.strip():
            raise ToolError("`command` must be a non-empty string")
        timeout = self.bash_timeout_s
        if isinstance(inp.get("timeout_s"), (int, float)) and inp["timeout_s"] > 0:
            timeout = min(float(inp["timeout_s"]), self.bash_timeout_s)
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=self.workspace, env=self.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            code = proc.returncode
            note = ""
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            out, _ = proc.communicate()
            code = -9
            note = f"\n[killed: ran past the {timeout:g} s timeout]"
        text = out.decode("utf-8", "replace")
        text = cap_text(text, self.output_cap - 200) + note
        return code == 0, f"{text}\n[exit code {code}]" if text else f"[exit code {code}]"

    def tool_read_file(self, inp: dict[str, Any]) -> tuple[bool, str]:
        p = self.path(inp.get("path"))
        if not p.is_file():
            raise ToolError(f"{inp.get('path')}: no such file")
        text = p.read_text(encoding="utf-8", errors="replace")
        offset, limit = inp.get("offset"), inp.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            start = max(0, (offset or 1) - 1)
            end = start + limit if isinstance(limit, int) and limit > 0 else len(lines)
            text = "".join(lines[start:end])
        return True, text

    def tool_write_file(self, inp: dict[str, Any]) -> tuple[bool, str]:
        p = self.path(inp.get("path"))
        content = inp.get("content")
        if not isinstance(content, str):
            raise ToolError("`content` must be a string")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")
        return True, f"wrote {len(content.encode())} bytes to {p.relative_to(self.root)}"

    def tool_edit_file(self, inp: dict[str, Any]) -> tuple[bool, str]:
        p = self.path(inp.get("path"))
        old, new = inp.get("old_string"), inp.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ToolError("`old_string` (non-empty) and `new_string` must be strings")
        if not p.is_file():
            raise ToolError(f"{inp.get('path')}: no such file")
        text = p.read_text(encoding="utf-8")
        count = text.count(old)
        if count == 0:
            raise ToolError(f"{inp.get('path')}: old_string not found (it must match exactly, "
                            f"whitespace included)")
        if count > 1 and not inp.get("replace_all"):
            raise ToolError(f"{inp.get('path')}: old_string occurs {count} times; add context "
                            f"to make it unique or set replace_all")
        text = text.replace(old, new) if inp.get("replace_all") else text.replace(old, new, 1)
        p.write_text(text, encoding="utf-8")
        return True, f"replaced {count if inp.get('replace_all') else 1} occurrence(s) in " \
                     f"{p.relative_to(self.root)}"

    def tool_evaluate(self, inp: dict[str, Any]) -> tuple[bool, str]:
        return True, self._evaluate(inp)
