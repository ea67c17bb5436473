"""The question picker: the bank by group, a fuzzy filter, a preview with the entry's
`why`, the latest trigger's suggestions on top, already-asked entries marked.

Works with any bank object that has `.entries` (items with id, group, text, why,
triggers, level, kind); ranking of a typed filter uses `bank.search` when available and
Textual's fuzzy matcher otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from socratic.bank import by_group


def _attr(entry: Any, name: str, default: Any = "") -> Any:
    val = getattr(entry, name, default)
    return default if val is None else val


def fuzzy_rank(entries: list[Any], query: str, limit: int = 60) -> list[Any]:
    from textual.fuzzy import Matcher

    matcher = Matcher(query)
    scored = []
    for e in entries:
        hay = f"{_attr(e, 'id')} {_attr(e, 'group')} {_attr(e, 'text')}"
        score = matcher.match(hay)
        if score > 0:
            scored.append((score, e))
    scored.sort(key=lambda p: -p[0])
    return [e for _, e in scored[:limit]]


def _plain_match(entry: Any, query: str) -> bool:
    """Every typed word appears as it is in the entry's id or text."""
    hay = f"{_attr(entry, 'id')} {_attr(entry, 'text')}".lower()
    return all(word in hay for word in query.lower().split())


class QuestionPicker(Vertical):
    """Filter input on top, options in the middle, preview at the bottom.
    Posts `QuestionPicker.Picked(entry)` on Enter."""

    class Picked(Message):
        def __init__(self, entry: Any) -> None:
            super().__init__()
            self.entry = entry

    BINDINGS = [
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(8)", show=False),
        Binding("pageup", "move(-8)", show=False),
    ]

    DEFAULT_CSS = """
    QuestionPicker { height: 1fr; }
    QuestionPicker > Input, QuestionPicker > Input:focus {
        height: 1; border: none; padding: 0 1; background: $boost;
    }
    QuestionPicker > OptionList { height: 1fr; border: none; text-wrap: nowrap;
                                  text-overflow: ellipsis; }
    QuestionPicker > #preview { height: auto; max-height: 8; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, bank: Any, suggestions: list[str] | None = None,
                 asked: set[str] | None = None, trigger: str | None = None,
                 search: Callable[[Any, str, int], list[Any]] | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.bank = bank
        self.entries: list[Any] = list(getattr(bank, "entries", []) or [])
        self.by_id = {str(_attr(e, "id")): e for e in self.entries}
        self.suggestions = [s for s in (suggestions or []) if s in self.by_id]
        self.asked = set(asked or ())
        self.trigger = trigger
        self.search = search
        self.shown: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter the bank (fuzzy); Enter asks the highlighted question",
                    id="filter")
        yield OptionList(id="options")
        yield Static("", id="preview")

    def on_mount(self) -> None:
        self.refill("")
        self.query_one(Input).focus()

    # ------------------------------------------------------------------ options

    def _label(self, e: Any, suggested: bool = False, with_group: bool = False) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        eid = str(_attr(e, "id"))
        t.append("✓ " if eid in self.asked else "  ", style="dim")
        t.append("★ " if suggested else "  ", style="bold")
        if with_group:
            t.append(f"{_attr(e, 'group')}: ", style="dim")
        t.append(str(_attr(e, "text")))
        if eid in self.asked:
            t.append("  (asked)", style="dim")
        return t

    def refill(self, query: str) -> None:
        ol = self.query_one(OptionList)
        ol.clear_options()
        options: list[Option | None] = []
        self.shown = []
        q = query.strip()
        if q:
            if self.search is not None:
                ranked = list(self.search(self.bank, q, 60))
            else:
                ranked = fuzzy_rank(self.entries, q)
            sugg = set(self.suggestions)
            # suggestions that match the typed words plainly stay on top; one that matched
            # only as scattered letters keeps its rank (Enter must ask what was typed for)
            ranked.sort(key=lambda e: 0 if str(_attr(e, "id")) in sugg and _plain_match(e, q) else 1)
            for e in ranked:
                options.append(Option(self._label(e, str(_attr(e, "id")) in sugg, True),
                                      id=str(_attr(e, "id"))))
                self.shown.append(e)
        else:
            if self.suggestions:
                head = f"── suggested for {self.trigger} ──" if self.trigger else "── suggested ──"
                options.append(Option(Text(head, style="bold"), disabled=True))
                for sid in self.suggestions:
                    e = self.by_id[sid]
                    options.append(Option(self._label(e, True), id=f"s:{sid}"))
                    self.shown.append(e)
            for group, items in by_group(self.entries).items():  # as `socratic bank list`
                options.append(Option(Text(f"── {group} ({len(items)}) ──", style="bold"),
                                      disabled=True))
                for e in items:
                    options.append(Option(self._label(e), id=str(_attr(e, "id"))))
                    self.shown.append(e)
        if not options:
            options.append(Option(Text("no question matches; i asks free text", style="dim"),
                                  disabled=True))
        ol.add_options(options)
        # highlight the first question not asked yet, so that a bare Enter never repeats
        # one (none when every one shown was asked: the arrows still reach them)
        ol.highlighted = next(
            (i for i, opt in enumerate(options) if opt is not None and not opt.disabled
             and opt.id is not None and opt.id.removeprefix("s:") not in self.asked), None)
        self._preview()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.pick()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._preview()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.pick()

    def action_move(self, delta: int) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count == 0:
            return
        i = ol.highlighted if ol.highlighted is not None else -1
        step = 1 if delta > 0 else -1
        remaining = abs(delta)
        j = i
        while remaining:
            k = j + step
            while 0 <= k < ol.option_count and ol.get_option_at_index(k).disabled:
                k += step
            if not 0 <= k < ol.option_count:
                break
            j = k
            remaining -= 1
        if j != i and j >= 0:
            ol.highlighted = j

    # ------------------------------------------------------------------ selection

    def highlighted_entry(self) -> Any | None:
        ol = self.query_one(OptionList)
        if ol.highlighted is None:
            return None
        opt = ol.get_option_at_index(ol.highlighted)
        if opt.disabled or opt.id is None:
            return None
        return self.by_id.get(opt.id.removeprefix("s:"))

    def _preview(self) -> None:
        e = self.highlighted_entry()
        preview = self.query_one("#preview", Static)
        if e is None:
            preview.update("")
            return
        t = Text()
        eid = str(_attr(e, "id"))
        t.append(eid, style="bold")
        meta = [str(_attr(e, "group")), str(_attr(e, "level")), str(_attr(e, "kind"))]
        trig = _attr(e, "triggers", ())
        if trig:
            meta.append("triggers: " + ", ".join(trig))
        t.append("  " + " · ".join(m for m in meta if m), style="dim")
        if eid in self.asked:
            t.append("  ✓ asked before", style="bold")
        t.append("\n" + str(_attr(e, "text")))
        why = _attr(e, "why")
        if why:
            t.append("\nwhy: ", style="bold")
            t.append(str(why), style="italic")
        preview.update(t)

    def pick(self) -> None:
        e = self.highlighted_entry()
        if e is not None:
            self.post_message(self.Picked(e))
