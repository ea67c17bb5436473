"""socratic.logread, the one reading of a campaign's log (issue 44): its fold, its bests
after retractions, and the three views that show it (the TUI's status line, its transcript
and the report) agreeing on one session's clock and counts (issue 43: they gave 00:37,
00:40 and 40 s)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from socratic.contracts import parse_event
from socratic.logread import LogReader, read_log
from socratic.report import build_report
from socratic.report.text import summary_lines
from socratic.resources import demo_session_dir
from socratic.tui.state import fold
from socratic.tui.widgets.event_block import render_block
from socratic.tui.widgets.status_line import StatusLine

DEMO = demo_session_dir()


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _views(session: Path) -> tuple[str, str, str]:
    """(status line, transcript's last block, report's summary) of an ended session."""
    state = fold(_events(session / "events.jsonl"))
    status = StatusLine._render_line(state, state.status, state.t, None, 0, "", 0,
                                     compact=False).plain
    last = render_block(state.blocks[-1]).plain
    report = "\n".join(summary_lines(build_report([session]).sessions[0]))
    return status, last, report


def _seconds(clock: str) -> int:
    parts = [int(p) for p in clock.split(":")]
    return parts[0] * 60 + parts[1] if len(parts) == 2 else parts[0] * 3600 + parts[1] * 60 + parts[2]


def test_status_line_transcript_and_report_give_one_clock_and_counts():
    status, last, report = _views(DEMO)
    log = LogReader(DEMO / "events.jsonl")
    log.poll()
    s = log.state
    shown = _seconds(re.search(r"campaign (\d\d:\d\d)", status).group(1))
    stamped = _seconds(re.match(r"\[(\d\d:\d\d)\]", last).group(1))
    reported = int(re.search(r"^  (\d+) s, ", report, re.M).group(1))
    assert shown == stamped == reported == round(s.duration_s), (status, last, report)
    assert f"evals {len(s.evaluations)}" in status
    assert f"{len(s.evaluations)} evaluations" in report
    assert f"tools {s.tool_calls}" in status and f"{s.tool_calls} tool calls" in report
    assert f"questions {len(s.questions)} " in report and s.clock.sessions == 1


def test_a_resumed_campaign_shows_its_sessions_time_everywhere(tmp_path):
    """Ended, then resumed 100 s later: the status line and the report leave the gap out."""
    session = tmp_path / "s"
    shutil.copytree(DEMO, session)
    events = _events(session / "events.jsonl")
    end = events[-1]
    seq, t = end["seq"], end["t"]
    more = [{"seq": seq + 1, "t": t + 100.0, "ts": end["ts"], "type": "campaign.resume",
             "evaluations": 6, "tool_calls": 21, "turns": 19, "ctx": 1, "messages": 0},
            {"seq": seq + 2, "t": t + 110.0, "ts": end["ts"], "type": "campaign.end",
             "reason": "stopped"}]
    with open(session / "events.jsonl", "a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in more)
    (session / "events.jsonl").chmod(0o644)
    status, _, report = _views(session)
    s = read_log([parse_event(e) for e in events + more])
    assert s.clock.sessions == 2 and abs(s.clock.active_s - (t - events[0]["t"] + 10.0)) < 1e-6
    assert "(session 2)" in status and "2 sessions: " in report
    shown = _seconds(re.search(r"campaign (\d\d:\d\d)", status).group(1))
    reported = int(re.search(r"2 sessions: (\d+) s of campaign time", report).group(1))
    assert shown == reported == round(s.clock.active_s)


def test_bests_follow_retractions_wherever_they_lie():
    events = [
        {"seq": 1, "t": 0.0, "ts": "x", "type": "campaign.start", "task": "t",
         "goal": {"min_speedup": 1.1, "against": "baseline"}, "model": "m",
         "scenarios": {"set": "bench", "ids": ["a"]}, "gpu": None, "host": "h", "versions": {}},
    ]
    for n, (geo, mn) in enumerate([(1.5, 1.2), (1.3, 1.25), (2.0, 0.9)], start=1):
        events.append({"seq": len(events) + 1, "t": float(n), "ts": "x", "type": "eval.end",
                       "n": n, "result": f"evals/{n:04d}.json", "set": "bench",
                       "summary": {"all_correct": n != 3, "geomean_speedup": geo,
                                   "min_speedup": mn}})
    s = read_log(parse_event(e) for e in events)
    assert s.best().n == 2 and s.best_geomean() == 1.5
    s.apply(parse_event({"seq": 9, "t": 9.0, "ts": "x", "type": "eval.retract", "evals": [2],
                         "part": "all", "why": "timer"}))
    assert s.best().n == 1 and s.figures(s.evaluations[1]) == (None, None)
    assert s.explanations == {} and len(s.evaluations) == 3 and s.running is None


def test_the_reader_reads_on_and_starts_over_when_the_log_is_replaced(tmp_path):
    log = tmp_path / "events.jsonl"
    lines = (DEMO / "events.jsonl").read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:10]) + lines[10][:20])   # a line being written
    r = LogReader(log)
    assert len(r.poll()) == 10
    log.write_bytes(b"".join(lines))
    r.poll()
    assert r.state.events == len(lines) and r.state.end is not None
    log.unlink()
    log.write_bytes(b"".join(lines[:5]))
    r.poll()
    assert r.state.events == 5 and r.state.end is None
