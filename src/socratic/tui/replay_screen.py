"""Replay mode: a recorded (or running) session played with its real timing, with seeking:
the screen shows `timeline.state_at(pos)`."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from pathlib import Path

from textual.binding import Binding

from socratic.errors import InputError
from socratic.eventlog import EVENTS_FILE
from socratic.sessionfiles import is_pack, open_session
from socratic.tui.campaign_screen import CampaignScreen
from socratic.tui.events_file import describe_empty, read_session_events
from socratic.tui.state import Timeline
from socratic.tui.widgets.transcript import Transcript

SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
GAP_CAP_S = 1.0        # longest wall-clock wait between two events
TICK_S = 0.05          # clock tick


class ReplayScreen(CampaignScreen):
    """`autoplay`/`start` set where a replay begins (`start` an event index or "end")."""

    mode = "replay"
    # priority: they win over the table's and the transcript's own keys
    BINDINGS = [
        Binding("space", "play", "Play/pause", priority=True),
        Binding("left", "step(-1)", "Step", key_display="←→", priority=True),
        Binding("right", "step(1)", "Step", show=False, priority=True),
        Binding("left_square_bracket", "eval_jump(-1)", "Eval", key_display="[]", priority=True),
        Binding("right_square_bracket", "eval_jump(1)", "Eval", show=False, priority=True),
        Binding("left_curly_bracket", "question_jump(-1)", "Question", key_display="{}",
                priority=True),
        Binding("right_curly_bracket", "question_jump(1)", "Question", show=False, priority=True),
        Binding("plus", "speed(1)", "Speed", key_display="+-", priority=True),
        Binding("equals_sign", "speed(1)", "Speed", show=False, priority=True),
        Binding("minus", "speed(-1)", "Speed", show=False, priority=True),
        Binding("home", "seek_home", "Start", show=False, priority=True),
        Binding("end", "seek_end", "End", show=False, priority=True),
        # the watch screen's keys that change a live campaign: say why nothing happens
        *[Binding(k, "read_only", show=False) for k in ("slash", "i", "x", "p", "e", "a")],
    ]

    def __init__(self, session_dir: Path, clock: Callable[[], float], *, speed: float = 10.0,
                 autoplay: bool = True, start: int | str = 0) -> None:
        super().__init__(session_dir, clock)
        # how messages name the log: the folder's file, or `NAME.socratic:events.jsonl`
        self.events_path = f"{self.session_dir}:{EVENTS_FILE}" if is_pack(self.session_dir) \
            else str(self.session_dir / EVENTS_FILE)
        self.timeline: Timeline | None = None
        self.pos = 0
        self.speed = min(SPEEDS, key=lambda s: abs(s - speed))
        self.playing = False
        self._autoplay = autoplay
        self._start = start
        self._vt = 0.0
        self._last_tick = 0.0

    def on_mount(self) -> None:
        super().on_mount()
        try:
            chunk = read_session_events(open_session(self.session_dir))
        except (OSError, InputError) as exc:
            self.notify(f"cannot read {self.events_path}: {exc}", severity="error")
            chunk = None
        events = chunk.events if chunk else []
        self.skipped = chunk.skipped if chunk else 0
        if self.skipped:
            s = "s" if self.skipped != 1 else ""
            self.notify(f"{self.events_path}: {self.skipped} malformed line{s} skipped (not "
                        "JSON objects)", severity="warning", timeout=6)
        record = chunk.record if chunk else None
        if record is not None and record.status == "broken":
            self.notify(f"{self.events_path}: the record is {record.describe()}; those lines are "
                        "not shown", severity="error", timeout=30)
        self.timeline = Timeline(events)
        start = self._start
        if start == "end":
            start = len(self.timeline)
        self._seek(int(start), reset=True)
        self._every(TICK_S, self._tick)
        if self._autoplay and self.pos < len(self.timeline):
            self._play(True)

    def empty_note(self) -> str:
        if self.timeline is not None and not self.timeline.events:
            return describe_empty(self.events_path, self.skipped)
        return ""

    def status_extra(self) -> list[str]:
        if self.timeline is None:
            return []
        mark = "▶" if self.playing else "‖"
        return [f"{mark} x{self.speed}", f"event {self.pos}/{len(self.timeline)}"]

    # ------------------------------------------------------------------ clock and seeking

    def _seek(self, i: int, reset: bool = False) -> None:
        tl = self.timeline
        assert tl is not None
        self.pos = max(0, min(i, len(tl)))
        self.state = tl.state_at(self.pos)
        self._vt = tl.times[self.pos - 1] if self.pos > 0 else 0.0
        self._cap_gap()
        self.query_one(Transcript).anchor()  # a seek shows the transcript's end at that point
        self.refresh_view(reset=reset)

    def _cap_gap(self) -> None:
        tl = self.timeline
        if tl is not None and self.pos < len(tl):
            nxt = tl.times[self.pos]
            if nxt - self._vt > GAP_CAP_S * self.speed:
                self._vt = nxt - GAP_CAP_S * self.speed

    def _play(self, on: bool) -> None:
        self.playing = on
        self._last_tick = self.clock()
        self._cap_gap()
        self._refresh_status()

    def _tick(self) -> None:
        if not self.playing or self.timeline is None:
            return
        tl = self.timeline
        now = self.clock()
        dt, self._last_tick = now - self._last_tick, now
        self._vt += dt * self.speed
        end = bisect.bisect_right(tl.times, self._vt, lo=self.pos)
        if end > self.pos:
            self.state.apply_all(tl.events[self.pos:end])
            self.pos = end
            self._cap_gap()
            self.refresh_view()
        if self.pos >= len(tl):
            self._play(False)

    # ------------------------------------------------------------------ actions

    def action_read_only(self) -> None:
        where = "(a packed campaign is never one)" if is_pack(self.session_dir) else \
            f"(socratic watch {self.session_dir})"
        self.notify(f"a replay is read-only: questions and controls go to a live campaign "
                    f"{where}", timeout=4)

    def action_play(self) -> None:
        if self.timeline is None:
            return
        if not self.playing and self.pos >= len(self.timeline):
            self._seek(0)
        self._play(not self.playing)

    def action_step(self, delta: int) -> None:
        if self.timeline is None:
            return
        self.playing = False
        if delta > 0 and self.pos < len(self.timeline):
            self.state.apply(self.timeline.events[self.pos])
            self.pos += 1
            self._vt = self.timeline.times[self.pos - 1]
            self.refresh_view()
        elif delta < 0 and self.pos > 0:
            self._seek(self.pos - 1)
        else:
            self._refresh_status()

    def _jump(self, kind: str, delta: int) -> None:
        tl = self.timeline
        if tl is None:
            return
        target = tl.next_position(kind, self.pos) if delta > 0 else tl.prev_position(kind, self.pos)
        if target is None:
            self.notify(f"no {'next' if delta > 0 else 'previous'} {kind}", timeout=2)
            return
        self._seek(target)

    def action_eval_jump(self, delta: int) -> None:
        self._jump("eval", delta)

    def action_question_jump(self, delta: int) -> None:
        self._jump("question", delta)

    def action_speed(self, delta: int) -> None:
        i = SPEEDS.index(self.speed) if self.speed in SPEEDS else 3
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + delta))]
        self._refresh_status()

    def action_seek_home(self) -> None:
        self._seek(0)

    def action_seek_end(self) -> None:
        if self.timeline is not None:
            self.playing = False
            self._seek(len(self.timeline))
            self.query_one(Transcript).jump_end()
