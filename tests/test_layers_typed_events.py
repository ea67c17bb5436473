"""Issue 44, "typed seams end to end": the campaign log is read once (socratic.logread) and
through the contract's typed events (socratic.contracts); nothing else decides what an
event is by comparing its `type` string. This walks src/socratic and fails on any such
comparison outside the one reading, the contract and the writers, so that a new one is a
decision (an entry below, with its reason), not a drift."""

from __future__ import annotations

import ast
from pathlib import Path

import socratic
from socratic.contracts import EVENT_CLASSES

SRC = Path(socratic.__file__).parent

# where comparing an event's type is the job
EXEMPT = {
    "logread.py": "the one reading of the campaign log",
    "contracts": "the contract: declares the event types and parses them",
    "eventlog.py": "the writer: appends events (and inbox commands) as lines",
}

# comparisons on `type` fields that are not the campaign log's events: file -> (how many
# comparisons, why); one more in such a file fails too, until its count here says so
ALLOWED = {
    "evaluator/candidate_process.py": (3, "the candidate process's replies (the evaluator's "
                                          "worker protocol), not log events"),
    "harness/api/agent.py": (2, "the Anthropic Messages API's content blocks"),
    "harness/api/conversation.py": (2, "the API's content blocks kept in messages.jsonl"),
    "harness/core/resume.py": (2, "the API's content blocks of the pending user message"),
    "harness/core/transcripts.py": (5, "the outside agents' transcripts (Claude Code, Codex, "
                                       "Gemini CLI)"),
    "harness/attached/headless.py": (7, "the outside agents' own JSON output, counting tools"),
}

EVENT_TYPES = frozenset(EVENT_CLASSES)


def _is_type_field(node: ast.AST) -> bool:
    """x["type"], x.get("type"), getattr(x, "type"), x.TYPE."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "type"
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "get" and node.args:
            return isinstance(node.args[0], ast.Constant) and node.args[0].value == "type"
        if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2:
            return isinstance(node.args[1], ast.Constant) and node.args[1].value == "type"
    return isinstance(node, ast.Attribute) and node.attr == "TYPE"


def _names_event_type(node: ast.AST) -> bool:
    """A dotted event type ("eval.end") as a constant, or in a tuple/list/set of them (the
    plain ones, "question" or "trigger", are words of other vocabularies too)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and "." in node.value and node.value in EVENT_TYPES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_event_type(e) for e in node.elts)
    return False


def type_comparisons(source: str) -> list[int]:
    """Lines of `source` that compare an event type: a `type` field compared with anything,
    or anything compared with a dotted event type."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_type_field(s) or _names_event_type(s) for s in sides):
                lines.append(node.lineno)
        elif isinstance(node, ast.match_case):
            if any(_names_event_type(n) for n in ast.walk(node.pattern)
                   if isinstance(n, ast.Constant)):
                lines.append(node.pattern.lineno)
    return sorted(lines)


def exempt(rel: str) -> bool:
    return rel in EXEMPT or rel.split("/", 1)[0] in EXEMPT


def found() -> dict[str, list[int]]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if exempt(rel):
            continue
        hits = type_comparisons(path.read_text(encoding="utf-8"))
        if hits:
            out[rel] = hits
    return out


def test_no_event_type_comparisons_outside_the_reading_and_the_writers():
    hits = found()
    unexpected = {f: lines for f, lines in hits.items()
                  if f not in ALLOWED or len(lines) != ALLOWED[f][0]}
    assert not unexpected, (
        "event-type comparisons outside socratic.logread, the contracts and the writers "
        f"(file: lines): {unexpected}. Read the log through socratic.logread / "
        "contracts.read_events and use isinstance on the typed events; a `type` field that "
        "is not a log event's goes into ALLOWED with its count and reason.")
    stale = sorted(set(ALLOWED) - set(hits))
    assert not stale, f"ALLOWED names files with no such comparison left: {stale}"


def test_every_allowance_says_why():
    assert all(why.strip() and n > 0 for n, why in ALLOWED.values())


def test_the_check_sees_the_forms_it_forbids():
    forbidden = [
        'if e["type"] == "eval.end": pass',
        'ok = ev.get("type") in ("campaign.start", "campaign.end")',
        'ok = getattr(ev, "type", None) != "control"',
        'ok = ev.TYPE == "question"',
        'ok = kind == "eval.scenario"',
        'ok = "tool.call" == t',
        'match t:\n    case "campaign.end":\n        pass',
    ]
    for src in forbidden:
        assert type_comparisons(src) == [1] or type_comparisons(src) == [2], src
    allowed = ['ok = b.kind == "trigger"', 'ok = isinstance(e, EvalEnd)',
               'ok = action == "pause"', 't = e["type"]']
    for src in allowed:
        assert type_comparisons(src) == [], src
