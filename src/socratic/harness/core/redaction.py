"""Secrets kept out of what the agent sees and what is logged: `scrubbed_env` (the
environment of tools, the evaluator and attached agents: no API keys, nothing named like a
secret), `Redactor` (known secret values replaced in text) and `redacted` (the same through
nested JSON data)."""

from __future__ import annotations

import json
import os
import re
from typing import TypeVar

T = TypeVar("T")

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|PRIVATE", re.I)


def scrubbed_env(secrets: list[str] | None = None, base: dict[str, str] | None = None
                 ) -> dict[str, str]:
    """The environment for tools and the evaluator: no ANTHROPIC_*, nothing that looks like a
    key, token or password by name, and no variable whose value holds a known secret."""
    secrets = [s for s in (secrets or []) if s]
    env = {}
    for k, v in (os.environ if base is None else base).items():
        if k.startswith("ANTHROPIC_") or k.startswith("CLAUDE_") or SECRET_NAME.search(k):
            continue
        if any(s in v for s in secrets):
            continue
        env[k] = v
    return env


class Redactor:
    """Replaces known secret values in any text before it reaches the agent or the log."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets = [s for s in (secrets or []) if s and len(s) >= 8]

    def __call__(self, text: str) -> str:
        for s in self.secrets:
            if s in text:
                text = text.replace(s, "[redacted]")
        return text



def redacted(obj: T, redact: Redactor) -> T:
    """`obj` (JSON data) with every known secret replaced, wherever it is nested; `obj`
    itself when it holds none (the common case costs one dumps)."""
    if not redact.secrets:
        return obj
    raw = json.dumps(obj, ensure_ascii=False)
    if not any(s in raw for s in redact.secrets):
        return obj
    return json.loads(redact(raw))
