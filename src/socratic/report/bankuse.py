"""Which bank entries were asked in given sessions, and what followed each asking
(`socratic bank stats --sessions ...`).

An asking followed by progress (the best geomean or min went up by at least 1%, the
harness's plateau threshold, within the window) counts for the entry. Its `trace` is what
`socratic bank trace --write` would record for it (report/traces.py: the asking followed by
the largest gain on the goal's geomean, at least DEFAULT_MIN_GAIN), `<session id>#<event
seq>` (the session id is the session's folder name), or None.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from socratic.report.compare import median
from socratic.report.figures import DEFAULT_WINDOW
from socratic.report.model import build_report
from socratic.report.traces import traces_of

PROGRESS = 0.01  # a relative gain this large is progress (TriggerConfig.plateau_min_gain)


def _progress(a: dict[str, Any]) -> bool:
    return any((a[k] or 0.0) >= PROGRESS for k in ("geomean_gain", "min_gain"))


def bank_usage(paths: list[Path], bank: Any, window: int = DEFAULT_WINDOW) -> dict[str, Any]:
    report = build_report(paths, window=window, bank=bank)
    traces = {a.id: a.trace for a in traces_of(report, bank).best()}
    askings: dict[str, list[dict[str, Any]]] = {}
    free_text = 0
    for r in report.sessions:
        for g in r.question_gains:
            if g.bank_id is None:
                free_text += 1
                continue
            askings.setdefault(g.bank_id, []).append({
                "session": r.session, "seq": g.seq, "trace": f"{r.session}#{g.seq}",
                "trigger": g.trigger, "source": g.source,
                "geomean_gain": g.geomean_gain, "min_gain": g.min_gain})
    entries = []
    for bank_id, asks in askings.items():
        entry = bank.get(bank_id)
        progress = [a for a in asks if _progress(a)]
        by_trigger: dict[str, int] = {}
        for a in asks:
            key = a["trigger"] or "none"
            by_trigger[key] = by_trigger.get(key, 0) + 1
        entries.append({
            "id": bank_id, "in_bank": entry is not None,
            "group": entry.group if entry else None,
            "provenance": entry.provenance if entry else None,
            "asked": len(asks), "auto": sum(1 for a in asks if a["source"] == "auto"),
            "human": sum(1 for a in asks if a["source"] == "human"),
            "by_trigger": by_trigger, "followed_by_progress": len(progress),
            "median_geomean_gain": median([a["geomean_gain"] for a in asks]),
            "median_min_gain": median([a["min_gain"] for a in asks]),
            "trace": traces.get(bank_id),
            "askings": asks,
        })
    entries.sort(key=lambda e: (-int(cast(int, e["asked"])),
                                -int(cast(int, e["followed_by_progress"])), str(e["id"])))
    return {"sessions": [r.session for r in report.sessions], "window": window,
            "questions": sum(r.questions for r in report.sessions), "free_text": free_text,
            "entries": entries, "notes": report.notes}


def usage_lines(doc: dict[str, Any]) -> list[str]:
    """The human view: one line per entry asked."""
    lines = [f"{doc['questions']} questions in {len(doc['sessions'])} session(s): "
             f"{sum(e['asked'] for e in doc['entries'])} from the bank "
             f"({len(doc['entries'])} entries), {doc['free_text']} free text; progress: the "
             f"best geomean or min up {PROGRESS:.0%} or more within the next {doc['window']} "
             "evaluations"]
    for e in doc["entries"]:
        where = e["group"] or "not in the bank"
        hint = ""
        if e["trace"] and e["provenance"] not in ("trace", None):
            hint = f"  [{e['provenance']}; trace source: {e['trace']}]"
        lines.append(f"  {e['id']:<34} {where:<15} asked {e['asked']} (auto {e['auto']}, "
                     f"human {e['human']}), progress after {e['followed_by_progress']}{hint}")
    return lines
