"""One line about a tool's output for the collapsed transcript block (pure): the exit
code (bash's `[exit code N]`), lines and bytes, and the first line that says something
(not a lone bracket, brace or fence), e.g. `exit 0 · 6 lines · 245 B · from evals/0004.json`.
"""

from __future__ import annotations

import re

EXIT_LINE = re.compile(r"^\[exit code (-?\d+)\]$")
# what the harness puts after an output it cut (the whole text is in a blob file)
CUT_MARK = "[... full text in blob]"


def _size(n: int, plus: str = "") -> str:
    if n < 1000:
        return f"{n}{plus} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f}{plus} kB"
    return f"{n / 1_000_000:.1f}{plus} MB"


def summarize_output(output: str) -> str:
    body = output.rstrip()
    cut = body.endswith(CUT_MARK)
    if cut:
        body = body[: -len(CUT_MARK)].rstrip()
    parts: list[str] = []
    lines = body.splitlines()
    if lines and (m := EXIT_LINE.match(lines[-1].strip())):
        parts.append(f"exit {m.group(1)}")
        body = "\n".join(lines[:-1]).rstrip()
        lines = body.splitlines()
    if not body.strip():
        return " · ".join(parts + ["no output"])
    first = next((ln.strip() for ln in lines if any(ch.isalnum() for ch in ln)), "")
    plus = "+" if cut else ""
    if len(lines) > 1 or cut:
        parts += [f"{len(lines)}{plus} lines", _size(len(body.encode("utf-8")), plus)]
    if first:
        parts.append(first)
    return " · ".join(parts)
