"""What a campaign writes down, with the API key kept out: events through `Recorder`, the
agent's streamed text merged into `agent.text` events by `TextStream`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from socratic.contracts import AgentText, Event
from socratic.harness.core.redaction import Redactor, redacted

# emit(event built at the call site) -> the event as logged
Emit = Callable[[Event], dict[str, Any]]


class Appender(Protocol):
    """Where events go: a campaign's EventLog, or a hook's SessionLog (which holds the
    session while it appends)."""

    def append(self, type_: str, **fields: Any) -> dict[str, Any]: ...


class Recorder:
    """Appends events to the log, each redacted first; `on_event` (e.g. a headless run's
    stderr lines) sees each event as logged."""

    def __init__(self, log: Appender, redact: Redactor) -> None:
        self.log = log
        self.redact = redact
        self.on_event: Callable[[dict[str, Any]], None] | None = None

    def __call__(self, record: Event) -> dict[str, Any]:
        event = self.log.append(record.TYPE, **redacted(record.body(), self.redact))
        if self.on_event is not None:
            self.on_event(event)
        return event


class TextStream:
    """The agent's text as it streams: pieces are merged and logged as one `agent.text`
    event at most every `flush_s` seconds (and whenever `flush` is called)."""

    def __init__(self, emit: Emit, flush_s: float) -> None:
        self.emit = emit
        self.flush_s = flush_s
        self.pieces: list[str] = []
        self.since = time.monotonic()

    def __call__(self, piece: str) -> None:
        self.pieces.append(piece)
        if time.monotonic() - self.since >= self.flush_s:
            self.flush()

    def restart_clock(self) -> None:
        """A new model call: its first piece waits up to `flush_s` for company."""
        self.since = time.monotonic()

    def flush(self) -> None:
        if self.pieces:
            self.emit(AgentText(text="".join(self.pieces)))
            self.pieces = []
        self.since = time.monotonic()
