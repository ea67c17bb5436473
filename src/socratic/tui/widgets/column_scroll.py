"""Sideways scrolling of a wide DataTable by whole columns (the `<` and `>` keys)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import DataTable


def scroll_columns(table: DataTable, fixed: int, delta: int) -> None:
    """Sideways by `delta` columns (the first `fixed` columns stay): each step lands on a
    column's start, so no column shows cut in half."""
    starts, x = [], 0
    for col in list(table.columns.values())[fixed:]:
        starts.append(x)
        x += col.get_render_width(table)
    here = round(table.scroll_x)
    ahead = [s for s in starts if (s > here if delta > 0 else s < here)]
    if not ahead:
        target = table.max_scroll_x if delta > 0 else 0
    else:
        target = ahead[min(abs(delta), len(ahead)) - 1] if delta > 0 else \
            ahead[-min(abs(delta), len(ahead))]
    table.scroll_to(x=min(target, table.max_scroll_x), animate=False, immediate=True)



def whole_columns_edges(table: DataTable, fixed: int) -> tuple[int, int, int]:
    """(fixed width, start, end): the screen columns of the scrolled part that hold whole
    columns; a column cut by the left edge of the scrolled part (scrolled to the end) or
    by the right edge lies outside them (end: the table's width where none is cut)."""
    width = table.size.width
    scroll_x = round(table.scroll_x)
    widths = [c.get_render_width(table) for c in table.ordered_columns]
    fixed_w = sum(widths[:fixed])
    start, end, x = fixed_w, width, fixed_w
    for w in widths[fixed:]:
        left, right = x - scroll_x, x + w - scroll_x
        x += w
        if right <= fixed_w:
            continue                       # scrolled out to the left
        if left < fixed_w:
            start = right                  # cut by the fixed columns
        if right > width:
            end = max(start, left)
            break
    else:
        end = max(width, table.region.width)
    return fixed_w, start, end


def _blank(strip: Strip) -> Strip:
    """`strip` as spaces in its own styles (a row's highlight, the header's background)."""
    return Strip([Segment(" " * cell_len(seg.text), seg.style) for seg in strip],
                 strip.cell_length)


def whole_columns(table: DataTable, strip: Strip, fixed: int) -> Strip:
    """`strip` (a rendered line of `table`) with the columns cut by an edge blanked, so that
    no number shows cut (`1.3` of `1.314`)."""
    fixed_w, start, end = whole_columns_edges(table, fixed)
    length = strip.cell_length
    if start <= fixed_w and end >= length:
        return strip
    return Strip.join([strip.crop(0, fixed_w), _blank(strip.crop(fixed_w, start)),
                       strip.crop(start, end), _blank(strip.crop(end, length))])
