"""The EventLog options the harness uses: fsync at most once per interval, sync(), and the
default (fsync every event) unchanged."""

from __future__ import annotations

import os

from socratic import eventlog
from socratic.eventlog import EventLog, read_jsonl


def test_fsync_interval(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(eventlog.os, "fsync", lambda fd: (calls.append(fd), real(fd)))
    log = EventLog.open(tmp_path)
    for i in range(3):
        log.append("agent.text", text=str(i))
    assert len(calls) == 3                                   # default: every event
    calls.clear()
    log2 = EventLog.open(tmp_path, fsync_every_s=60)
    for i in range(5):
        log2.append("agent.text", text=str(i))
    assert len(calls) == 1                                   # the first, then none for 60 s
    log2.sync()
    assert len(calls) == 2
    events, _ = read_jsonl(tmp_path / "events.jsonl")
    assert [e["seq"] for e in events] == list(range(1, 9))   # resumed seq, all flushed
