"""The agent's text, rendered as Markdown by one light widget (a Static holding a Rich
Markdown renderable): history windows mount dozens of these quickly. The block that is
being streamed live uses StreamingText instead."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Static

from socratic.tui.state import Block


class TextBlock(Static):
    DEFAULT_CSS = """
    TextBlock { height: auto; padding: 0 1; margin: 0 0 1 0; }
    """

    def __init__(self, block: Block) -> None:
        super().__init__(self._renderable(block.text))
        self.block = block

    @staticmethod
    def _renderable(text: str) -> RichMarkdown:
        return RichMarkdown(text.strip(), code_theme="ansi_dark", hyperlinks=False)

    def set_block(self, block: Block) -> None:
        if block.text != self.block.text:
            self.update(self._renderable(block.text))
        self.block = block

    def copy_text(self) -> str:
        return self.block.text
