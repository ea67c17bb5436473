"""Small text formatters shared by the widgets (pure functions, no Textual)."""

from __future__ import annotations

import math


def elapsed(seconds: float | None) -> str:
    """`1d 02:03:04`, `02:03:04`, `03:04`."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "--:--"
    s = int(round(seconds))  # to the nearest second, as the report says it (one clock)
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        return f"{d}d {h:02d}:{m:02d}:{s:02d}"
    if h:
        return f"{h:02d}:{m:02d}:{s:02d}"
    return f"{m:02d}:{s:02d}"


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return elapsed(seconds)


def count(n: float | int | None) -> str:
    """1234 → 1.2k, 1234567 → 1.2M."""
    if n is None:
        return "-"
    n = float(n)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n:.0f}"


def speedup(x: float | None, digits: int = 2, goal: float | None = None) -> str:
    """`1.23×`; a value below `goal` that would round onto it is cut instead (0.996 against
    a goal of 1.00 reads 0.99×, never a `1.00×` marked slow)."""
    if x is None:
        return "-"
    if goal is not None and x < goal and round(x, digits) >= goal:
        x = math.floor(x * 10 ** digits) / 10 ** digits
    return f"{x:.{digits}f}×"


def ms(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.3f}"
    return f"{x:.4f}"


def sci(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0:
        return "0"
    return f"{x:.1e}" if (abs(x) < 1e-3 or abs(x) >= 1e4) else f"{x:.4f}"


def ratio(x: float | None) -> str:
    """At most 5 characters: 1.00, 12.3, 250, inf."""
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    if x >= 99.95:
        return f"{x:.0f}" if x < 99999.5 else "1e5+"
    if x >= 9.995:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fixed(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def percent(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def one_line(text: str, width: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= width else s[: max(0, width - 1)] + "…"


def auto_label(logged: bool | None, requested: bool | None = None) -> str:
    """Auto-questions as the status line and the footer both say it: `auto: on`,
    `auto: off`, `auto: off→on` while a change is requested but not yet logged."""
    if logged is None and requested is None:
        return ""
    now = "on" if logged else "off"
    if requested is None or requested == bool(logged):
        return f"auto: {now}"
    return f"auto: {now}→{'on' if requested else 'off'}"
