"""The transcript: a window of block widgets over `state.blocks`.

- Follows new output (Textual's anchor) but never snaps back while the user reads
  further up: the anchor is released by any user scroll and re-engages only when the
  user returns to the bottom.
- Long campaigns stay fast: at most `MAX_MOUNTED` blocks are mounted. While following,
  the oldest are pruned; scrolling to the top (or `u`) mounts `LOAD_MORE` earlier ones,
  so every block stays reachable (`u` with every block mounted goes to the top).
- Updates are diffs: blocks are immutable, so a changed block is a new object; only
  the widgets whose block object changed are updated, new blocks are mounted.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from socratic.tui.state import Block
from socratic.tui.widgets.event_block import EventBlock
from socratic.tui.widgets.streaming_text import StreamingText
from socratic.tui.widgets.text_block import TextBlock
from socratic.tui.widgets.tool_block import ToolBlock

# Layout cost grows with the number of mounted widgets (every reflow arranges them all),
# so the window is a few screens deep: older blocks are a key (or a scroll) away.
WINDOW = 30        # blocks mounted after a reset (seek, first load)
MAX_MOUNTED = 60   # pruning threshold while following (prunes down to MAX - LOAD_MORE)
LOAD_MORE = 30


def make_block_widget(block: Block, live: bool = False) -> Widget:
    """`live`: the block is the newest one of a campaign being watched, so it may
    still grow (agent text streams into a StreamingText)."""
    if block.kind == "text":
        return StreamingText(block) if live else TextBlock(block)
    if block.kind == "tool":
        return ToolBlock(block)
    return EventBlock(block)


class EarlierMarker(Static):
    DEFAULT_CSS = "EarlierMarker { height: 1; color: $text-muted; padding: 0 1; }"


class TranscriptNote(Static):
    """Shown instead of blocks while there are none: why the transcript is empty."""

    DEFAULT_CSS = "TranscriptNote { height: auto; color: $text-muted; padding: 1 1; display: none; }"


class NewBelowMarker(Static):
    """Docked at the bottom of the view while the user reads further up."""

    DEFAULT_CSS = """
    NewBelowMarker { dock: bottom; height: 1; background: $boost; padding: 0 1;
                     text-style: bold; display: none; }
    """


class Transcript(VerticalScroll, can_focus=True):
    BINDINGS = [
        Binding("k,shift+up", "select(-1)", "Prev block", show=False),
        Binding("j,shift+down", "select(1)", "Next block", show=False),
        Binding("enter", "toggle_selected", "Expand", show=False),
        Binding("escape", "select_none", "Unselect", show=False),
    ]
    # the body is at least as tall as the view, so that a short transcript starts at
    # the top (an anchored scroll view bottom-aligns content shorter than itself)
    DEFAULT_CSS = """
    Transcript { height: 1fr; }
    Transcript > #body { height: auto; min-height: 100%; }
    """

    def __init__(self, live: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.live = live
        self._blocks: list[Block] = []
        self._first = 0
        self._widgets: list[Widget] = []
        self._marker = EarlierMarker("")
        self._note = TranscriptNote("", id="transcript-note")
        self._below = NewBelowMarker("")
        self._body = Vertical(id="body")
        self._loading = False
        self._deferred = 0
        self._sel: int | None = None  # selected block (absolute index), for Enter and copy

    def compose(self):
        yield self._below
        with self._body:
            yield self._marker
            yield self._note

    def on_mount(self) -> None:
        self.anchor()
        self._update_marker()

    # ------------------------------------------------------------------ state

    @property
    def following(self) -> bool:
        return self.is_anchored and not self._anchor_released

    @property
    def mounted_range(self) -> tuple[int, int]:
        return self._first, self._first + len(self._widgets)

    def show(self, blocks: list[Block], reset: bool = False) -> None:
        """Bring the transcript up to `blocks`. While the user reads further up (not
        following), blocks already on screen are updated in place but new ones wait
        below (a marker counts them) until the user returns to the bottom."""
        n = len(blocks)
        end = self._first + len(self._widgets)
        if (reset or n < self._first or (self.following and n - end > MAX_MOUNTED)
                or (self._first > 0 and n - self._first < WINDOW // 2)):
            self._rebuild(blocks)
            return
        self._blocks = blocks
        if n < end:  # stepped back in a replay: drop the blocks that no longer exist
            keep = n - self._first
            old, self._widgets = self._widgets[keep:], self._widgets[:keep]
            self._body.remove_children(old)
            end = n
        for j, w in enumerate(self._widgets):
            b = blocks[self._first + j]
            if w.block is not b:  # type: ignore[attr-defined]
                w.set_block(b)  # type: ignore[attr-defined]
        if not self.following:
            self._update_below(n - end)
            return
        new = [make_block_widget(b, self.live and i == n - 1)
               for i, b in enumerate(blocks[end:], start=end)]
        if new:
            self._settle_streams()
            self._widgets.extend(new)
            self._body.mount_all(new)
            self._mark_selected()
        self._update_below(0)
        if len(self._widgets) > MAX_MOUNTED:
            drop = len(self._widgets) - MAX_MOUNTED + LOAD_MORE
            old, self._widgets = self._widgets[:drop], self._widgets[drop:]
            self._first += drop
            self._body.remove_children(old)
            self._update_marker()

    def set_note(self, text: str) -> None:
        """What to say while there is no block (empty log, waiting for the first event)."""
        show = bool(text) and not self._blocks
        if show and text != getattr(self, "_note_text", None):
            self._note.update(text)
        self._note_text = text
        self._note.display = show

    def _settle_streams(self) -> None:
        """Text that streamed live is complete once a block follows it: swap its Markdown
        document (a widget per paragraph) for one light TextBlock."""
        for j, w in enumerate(self._widgets):
            if isinstance(w, StreamingText):
                light = TextBlock(w.block)
                if w.has_class("-selected"):
                    light.add_class("-selected")
                self._widgets[j] = light
                self._body.mount(light, after=w)
                w.remove()

    def _rebuild(self, blocks: list[Block]) -> None:
        """Mount the last WINDOW blocks. The new widgets are mounted after the old ones
        and the old ones are removed only once the new ones are in, so no frame shows an
        empty transcript (no flicker in tmux)."""
        self._blocks = blocks
        old = self._widgets
        n = len(blocks)
        self._first = max(0, n - WINDOW)
        self._widgets = [make_block_widget(b, self.live and i == n - 1)
                         for i, b in enumerate(blocks[self._first:], start=self._first)]
        self._update_marker()
        self._update_below(0)
        self._mark_selected()
        self.anchor()
        mounted = self._body.mount_all(self._widgets) if self._widgets else None

        async def swap() -> None:
            if mounted is not None:
                await mounted
            if old:
                await self._body.remove_children(old)
            self.scroll_end(animate=False, immediate=True)

        self.call_next(swap)

    def _update_below(self, count: int) -> None:
        self._deferred = count
        if count > 0:
            self._below.update(f"▼ {count} new blocks below: End (or scroll down) follows again",
                               layout=not self._below.display)
            self._below.display = True
        else:
            self._below.display = False

    def _update_marker(self) -> None:
        if self._first > 0:
            self._marker.update(f"▲ {self._first} earlier blocks: scroll to the top or press u")
            self._marker.display = True
        else:
            self._marker.display = False

    # ------------------------------------------------------------------ earlier blocks

    def action_load_earlier(self) -> None:
        """Mount earlier blocks (the screen's `u`); when every block is mounted, go to
        the top."""
        if self._loading:
            return
        if self._first == 0:
            self.release_anchor()
            self.scroll_home(animate=False, immediate=True)
            return
        start = max(0, self._first - LOAD_MORE)
        new = [make_block_widget(b) for b in self._blocks[start:self._first]]
        self._loading = True
        before_max = self.max_scroll_y
        before_y = self.scroll_y
        self.release_anchor()
        self._first = start
        self._widgets = new + self._widgets
        self._body.mount_all(new, after=self._marker)
        self._update_marker()
        self._mark_selected()

        def keep_place() -> None:
            self.scroll_to(y=before_y + (self.max_scroll_y - before_max), animate=False,
                           immediate=True, release_anchor=False)
            self._loading = False

        self.call_after_refresh(keep_place)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and old > 0 and self._first > 0 and not self._loading:
            self.action_load_earlier()
        elif self._deferred and self.following:  # back at the bottom: catch up
            self.call_after_refresh(self.show, self._blocks)

    # ------------------------------------------------------------------ selection

    def selected_block(self) -> Widget | None:
        """The selected block's widget, or the last block when none is selected."""
        w = self._selected_widget()
        if w is not None:
            return w
        return self._widgets[-1] if self._widgets else None

    def _selected_widget(self) -> Widget | None:
        if self._sel is None:
            return None
        j = self._sel - self._first
        return self._widgets[j] if 0 <= j < len(self._widgets) else None

    def select(self, index: int | None) -> None:
        old = self._selected_widget()
        if old is not None:
            old.remove_class("-selected")
        self._sel = index
        w = self._selected_widget()
        if w is not None:
            w.add_class("-selected")
            self.scroll_to_widget(w, animate=False, immediate=True)

    def action_select(self, delta: int) -> None:
        if not self._widgets:
            return
        last = self._first + len(self._widgets) - 1
        if self._sel is None or self._selected_widget() is None:
            target = last if delta < 0 else self._first
        else:
            target = self._sel + delta
        if target < self._first:
            self.action_load_earlier()
            target = max(self._first, target)
        self.select(max(self._first, min(last, target)))

    def action_select_none(self) -> None:
        self.select(None)

    def action_toggle_selected(self) -> None:
        w = self._selected_widget()
        if isinstance(w, ToolBlock):
            w.expanded = not w.expanded

    def on_tool_block_toggled(self, event: ToolBlock.Toggled) -> None:
        """Following the end would push an expanded block's header off the top: stop
        following, and once laid out show the block from its header down."""
        event.stop()
        self.release_anchor()
        w = event.tool_block

        def keep_header() -> None:
            if not w.is_mounted:
                return
            tall = w.outer_size.height >= self.scrollable_content_region.height
            self.scroll_to_widget(w, animate=False, immediate=True, top=tall)

        self.call_after_refresh(keep_header)

    def on_click(self, event) -> None:
        node = event.widget
        while node is not None and node is not self:
            if node in self._widgets:
                self.select(self._first + self._widgets.index(node))
                return
            node = node.parent

    def _mark_selected(self) -> None:
        w = self._selected_widget()
        if w is not None:
            w.add_class("-selected")

    def jump_end(self) -> None:
        """Follow again (replay seeks): mount what waited below and go to the bottom."""
        self.anchor()
        if self._deferred:
            self.show(self._blocks)
        self.scroll_end(animate=False, immediate=True)
