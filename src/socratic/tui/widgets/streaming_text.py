"""The agent's live text: a Textual Markdown document that grows by streaming
(`Markdown.get_stream`), used for the text block being written while watching."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from socratic.tui.state import Block


class StreamingText(Markdown):
    """One run of agent text. `set_block()` streams the new tail if the old text is a
    prefix of the new one, otherwise replaces the document."""

    DEFAULT_CSS = """
    StreamingText { margin: 0 0 0 0; padding: 0 1; height: auto; }
    """

    def __init__(self, block: Block) -> None:
        super().__init__(block.text, open_links=False)
        self.block = block
        self._shown = block.text
        self._stream: MarkdownStream | None = None

    def set_block(self, block: Block) -> None:
        new = block.text
        self.block = block
        if new == self._shown:
            return
        if new.startswith(self._shown) and self.is_mounted:
            delta = new[len(self._shown):]
            if self._stream is None:
                self._stream = Markdown.get_stream(self)
            self.call_next(self._stream.write, delta)
        else:
            self.update(new)
        self._shown = new

    async def on_unmount(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    def copy_text(self) -> str:
        return self.block.text
