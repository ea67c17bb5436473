"""One line: state (and, while the API is retried, which attempt failed with what and when
the next try is), campaign time, evaluations, tool calls, tokens and cost, last trigger,
auto-questions, pending questions, malformed lines skipped; `confined: false` when an
attached agent ran outside its Landlock domain."""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Static

from socratic.tui import format as fmt
from socratic.tui.state import CampaignState

STATE_MARK = {
    "starting": "○ STARTING", "running": "● RUNNING", "paused": "‖ PAUSED",
    "waiting": "… WAITING", "stopping": "■ STOPPING", "ended": "■ ENDED",
    "retrying": "↻ RETRYING", "no writer": "■ NO WRITER",
}


def short_error(error: str) -> str:
    """The cause of an API error in a few words: `529 overloaded_error` out of
    `OverloadedError: Error code: 529 - {'type': 'error', 'error': {'type':
    'overloaded_error', ...}}`, `502 Bad Gateway` out of an HTML page, `Connection error`
    out of `APIConnectionError: Connection error.`; other text as it is."""
    text = error.strip()
    named = re.match(r"^([A-Za-z_]\w*(?:Error|Exception|Timeout)):\s*(.*)$", text, re.S)
    if named:   # the exception's class: its message says the cause
        text = named.group(2).strip() or named.group(1)
    coded = re.match(r"^Error code:\s*([45]\d\d)\s*-?\s*(.*)$", text, re.S)
    code = re.search(r"\b([45]\d\d)\b", text)
    kind = [k for k in re.findall(r"""['"]type['"]\s*:\s*['"](\w+)['"]""", text) if k != "error"]
    if code and kind:
        return f"{code.group(1)} {kind[-1]}"
    if coded:
        rest = coded.group(2)
        title = re.search(r"<title>\s*([^<]*?)\s*</title>", rest, re.I)
        if title:
            rest = title.group(1)
        elif rest.lstrip().startswith("<"):
            rest = ""                     # a page without a title: the code says it
        rest = rest.removeprefix(coded.group(1)).strip()
        return f"{coded.group(1)} {rest}".strip()
    return text.rstrip(".") if named else text


def retry_text(state: CampaignState, now: float, compact: bool) -> str:
    """`attempt 3: 529 overloaded · next try in 5 s` (at campaign time `now`)."""
    r = state.retry
    if r is None:
        return ""
    # the cause before anything else on the line (what follows it is cut first)
    error = fmt.one_line(short_error(r.error), 48) or "error"
    if r.wait_s is None:
        when = ""
    else:
        left = r.t + r.wait_s - now
        when = (f"next try in {fmt.duration(left)}" if left >= 0.5 else "trying again now")
    if compact:
        return f"#{r.attempt} {error}" + (f" {when.removeprefix('next try ')}" if when else "")
    return f"attempt {r.attempt}: {error}" + (f" · {when}" if when else "")


class StatusLine(Static):
    """The top status line. `show()` is given everything it draws (no clocks inside)."""

    DEFAULT_CSS = "StatusLine { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, state: CampaignState, status: str, elapsed: float | None,
             extra: list[str] | None = None, pending: int = 0, auto: str = "",
             skipped: int = 0) -> None:
        """`elapsed`: campaign time now; `auto`: the auto-questions label (as the footer
        shows it); `skipped`: malformed lines of the log that were skipped."""
        self._args = (state, status, elapsed, extra, pending, auto, skipped)
        width = self.size.width or 100
        # words first; then tighter separators; then short words
        for compact, sep in ((False, " │ "), (False, "│"), (True, "│")):
            line = self._render_line(*self._args, compact=compact, sep=sep)
            if line.cell_len <= width:
                break
        key = (line.plain, tuple(line.spans))
        if key != getattr(self, "_shown", None):  # fixed size: no layout pass needed
            self._shown = key
            self.update(line, layout=False)

    def on_resize(self) -> None:
        if getattr(self, "_args", None):
            self.show(*self._args)

    @staticmethod
    def _render_line(state: CampaignState, status: str, elapsed: float | None,
                     extra: list[str] | None, pending: int, auto: str, skipped: int,
                     compact: bool, sep: str = " │ ") -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        mark = STATE_MARK.get(status, status.upper())
        t.append(f" {mark} " if not compact else f"{mark}", style="bold reverse")
        running = " +1" if state.eval_running else ""
        tokens_in = state.input_tokens + state.cache_read + state.cache_write
        tokens = f"{fmt.count(tokens_in)}/{fmt.count(state.output_tokens)}"
        parts: list[tuple[str, str]] = []
        if status == "retrying":
            parts.append((retry_text(state, elapsed or 0.0, compact), "bold"))
        parts += [(label, "bold") for label in extra or []]
        parts += [
            # the sessions' own time: a gap between two sessions is not campaign time
            (("t " if compact else "campaign ") + fmt.elapsed(state.active_at(elapsed or 0.0))
             + (f" (session {state.sessions})" if state.sessions > 1 and not compact else ""),
             "bold"),
            ((f"ev {len(state.evals)}" if compact else f"evals {len(state.evals)}") + running, ""),
            (f"tools {state.tool_calls}", ""),
            ((f"{tokens}" if compact else f"tok {tokens}"), ""),
            (f"${state.cost_usd:.2f}", ""),
        ]
        if state.gpu_wait and state.eval_running:  # its evaluation waits for the GPU's turn
            parts.insert(0, ("⧗ GPU turn" if compact else
                             f"⧗ waiting for the GPU: {state.gpu_wait}", "bold"))
        # what needs attention before what is only informative (a narrow line is cut)
        if state.confined is False:  # the agent could reach the session's files
            parts.insert(0, ("⚠ UNCONFINED" if compact else "⚠ confined: false", "bold"))
        if pending:
            parts.append((f"{pending} pending", "bold"))
        if skipped:
            parts.append((f"⚠{skipped} skipped" if compact else
                          f"⚠ {skipped} malformed line{'s' if skipped != 1 else ''} skipped",
                          "bold"))
        trig = state.last_trigger
        if trig is not None:
            parts.append((f"⚑{trig.kind}" if compact else f"trigger {trig.kind}", "bold"))
        if auto:
            parts.append((auto.replace(": ", ":") if compact else auto, ""))
        for text, style in parts:
            t.append(sep, style="dim")
            t.append(text, style=style)
        return t
