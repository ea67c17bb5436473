"""A session's config.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from socratic.contracts.common import Record


@dataclass(kw_only=True)
class SessionSettings(Record):
    """A session's config.json: what it was started with, read again by every resume,
    hook and step. `config` is the harness's Config as a dict; `attach`, an attached
    session's AttachSettings."""

    config: dict[str, Any] = field(default_factory=dict)
    task_source: str | None = None      # the task folder the frozen copy was taken from
    task_hashes: dict[str, str] = field(default_factory=dict)
    attach: dict[str, Any] | None = None
