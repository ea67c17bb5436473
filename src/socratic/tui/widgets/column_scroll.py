"""Sideways scrolling of a wide DataTable by whole columns (the `<` and `>` keys)."""

from __future__ import annotations

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
