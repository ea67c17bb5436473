"""Session ownership and the seq discipline, with real processes: one holder at a time,
a dead holder's claim taken over, and concurrent appenders that never repeat a seq."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from socratic.errors import InputError
from socratic.eventlog import EventLog, read_jsonl
from socratic.ownership import LOCK_FILE, SessionBusy, SessionOwner, live_owner

HOLD = """
import sys, time
from socratic.ownership import SessionOwner
o = SessionOwner.claim(sys.argv[1], role=sys.argv[2])
print("held", flush=True)
time.sleep(60)
"""

APPEND = """
import sys
from socratic.eventlog import EventLog
from socratic.ownership import SessionOwner
d, who, n, claim = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
for i in range(n):
    if claim:   # a short-lived hook: claim, append, release, every time
        with SessionOwner.claim(d, role="hook", wait_s=30):
            EventLog.open(d).append("agent.text", text=f"{who}-{i}")
    else:       # a long-lived writer keeps its EventLog; others append beside it
        log = log if i else EventLog.open(d)
        log.append("agent.text", text=f"{who}-{i}")
"""


def hold(d, role="campaign"):
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(d), role], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"held\n"
    return p


def test_one_holder_named_then_taken_over_after_kill_9(tmp_path):
    p = hold(tmp_path)
    try:
        owner = live_owner(tmp_path)
        assert owner is not None and owner.pid == p.pid and owner.host == socket.gethostname()
        with pytest.raises(SessionBusy) as exc:
            SessionOwner.claim(tmp_path)
        msg = str(exc.value)
        assert isinstance(exc.value, InputError) and "\n" not in msg
        assert f"pid {p.pid}" in msg and socket.gethostname() in msg and "since" in msg
        t = time.monotonic()
        with pytest.raises(SessionBusy):
            SessionOwner.claim(tmp_path, wait_s=0.3)            # waits, then gives up
        assert time.monotonic() - t >= 0.3
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    assert live_owner(tmp_path) is None          # the kernel dropped the dead holder's lock
    assert b'"pid"' in (tmp_path / LOCK_FILE).read_bytes()     # its details are left behind
    with SessionOwner.claim(tmp_path) as me:                  # taken over
        assert live_owner(tmp_path).pid == os.getpid() == me.owner.pid
    assert live_owner(tmp_path) is None and (tmp_path / LOCK_FILE).read_bytes() == b""


def test_claim_waits_for_a_holder_that_lets_go(tmp_path):
    first = SessionOwner.claim(tmp_path)
    p = subprocess.Popen([sys.executable, "-c", "import sys; from socratic.ownership import "
                          "SessionOwner; SessionOwner.claim(sys.argv[1], wait_s=20)",
                          str(tmp_path)], stderr=subprocess.PIPE)
    time.sleep(0.5)
    assert p.poll() is None                      # still waiting
    first.release()
    assert p.wait(20) == 0, p.stderr.read().decode()


def test_unlockable_session_dir_is_one_line(tmp_path):
    with pytest.raises(InputError) as exc:
        SessionOwner.claim(tmp_path / "missing")
    assert "session.lock" in str(exc.value) and "\n" not in str(exc.value)
    assert live_owner(tmp_path / "missing") is None


@pytest.mark.parametrize("claim", [False, True], ids=["long-lived", "claim-per-append"])
def test_concurrent_appenders_never_repeat_a_seq(tmp_path, claim):
    EventLog.open(tmp_path).append("control", action="pause")
    n, writers = 60, 4
    procs = [subprocess.Popen([sys.executable, "-c", APPEND, str(tmp_path), f"w{k}", str(n),
                               "1" if claim else "0"], stderr=subprocess.PIPE)
             for k in range(writers)]
    for p in procs:
        assert p.wait(120) == 0, p.stderr.read().decode()
    events, _ = read_jsonl(tmp_path / "events.jsonl")
    raw = (tmp_path / "events.jsonl").read_bytes()
    assert raw.count(b"\n") == len(events) == 1 + n * writers       # no line lost or torn
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    ts = [e["t"] for e in events]
    assert ts == sorted(ts)                                         # the clock never goes back
    for k in range(writers):                                        # each writer's own order
        mine = [e["text"] for e in events if e.get("text", "").startswith(f"w{k}-")]
        assert mine == [f"w{k}-{i}" for i in range(n)]


def test_append_after_a_torn_line_and_damaged_seq(tmp_path):
    log = EventLog.open(tmp_path)
    log.append("control", action="pause")
    with open(tmp_path / "events.jsonl", "ab") as fh:
        fh.write(b'{"seq": "x", "t": 5.0, "type": "usage"}\n{"seq": 3, "type": "agent.te')
    log.append("agent.text", text="after")          # another writer died mid-line
    events, _ = read_jsonl(tmp_path / "events.jsonl")
    assert [e["type"] for e in events] == ["control", "usage", "agent.text"]
    assert events[-1]["seq"] == 3 and events[-1]["t"] >= 5.0
    again = EventLog.open(tmp_path)
    assert again.seq == 3 and again.append("control", action="wait")["seq"] == 4
