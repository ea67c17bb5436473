"""One campaign of a fleet, opened from the fleet screen: its usual watch screen, with Esc
back to the fleet. Opened for a question (`/` or `i` on the fleet screen), it shows the
picker or the text box at once and returns to the fleet once the question is sent or
the box is closed."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from socratic.tui.watch_screen import WatchScreen


class FleetCampaignScreen(WatchScreen):
    BINDINGS = [Binding("escape", "back", "Fleet", priority=True)]

    def __init__(self, *args: Any, then: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.then = then       # "pick" or "ask": ask, then return to the fleet

    def on_mount(self) -> None:
        super().on_mount()
        if self.then == "pick":
            self.call_after_refresh(self.action_pick)
        elif self.then == "ask":
            self.call_after_refresh(self.action_ask)

    def action_back(self) -> None:
        if self.app.screen is self:
            self.app.pop_screen()

    def _picked(self, entry: Any) -> None:
        super()._picked(entry)
        if self.then:
            self.action_back()

    def action_ask(self) -> None:
        if not self.then:
            super().action_ask()
            return
        from socratic.tui.ask_screen import AskScreen

        def done(text: str | None) -> None:
            if text:
                self.ask(text)
            self.action_back()

        self.app.push_screen(AskScreen(), done)
