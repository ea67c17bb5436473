"""suggest(): which bank questions fit a trigger in this campaign, best first.

Deterministic: the score depends only on the bank, the trigger and the context, and ties
break by the entry's position in the bank (shipped file order, then user files).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from socratic.bank.model import TRIGGERS, Bank, BankError, Entry

# For each trigger, the groups most worth asking about first (earlier = higher score).
GROUP_ORDER: dict[str, tuple[str, ...]] = {
    "start": ("measurement", "bound", "validity", "gap", "strategy", "memory",
              "parallelism", "compiler", "instructions", "correctness"),
    "plateau": ("gap", "strategy", "bound", "memory", "instructions", "parallelism",
                "compiler", "measurement", "validity", "correctness"),
    "declared_done": ("strategy", "bound", "gap", "validity", "measurement", "memory",
                      "instructions", "parallelism", "compiler", "correctness"),
    "suspicious_gain": ("validity", "measurement", "correctness", "bound", "gap",
                        "strategy", "compiler", "memory", "parallelism", "instructions"),
    "correctness_failure": ("correctness", "validity", "compiler", "measurement",
                            "memory", "parallelism", "instructions", "gap", "bound",
                            "strategy"),
}

WORD_RE = re.compile(r"[a-z0-9]+")
# Words too common in the bank to say anything about a campaign's recent text.
STOPWORDS = frozenset("""
    about after again against also does each every from have into kernel many more most
    much only other same than that their them then there these they this time under what
    when where which while with would your whose were been being before between both could
    should because over just it's does here ours very""".split())

GROUP_STEP = 0.5        # score between neighbouring groups in GROUP_ORDER
FOCUS_BONUS = 0.6       # an entry listing few triggers is aimed at this moment
ARCH_BONUS = 1.2        # matches this GPU: the agent rarely reaches for it on its own
COMPARISON_BONUS = 2.0  # a comparison exists: ask about it early
WORD_SCALE = 0.35       # lift per unit of rarity (idf) of the campaign words an entry shares
MAX_WORD_LIFT = 3.0
REPEAT_PENALTY = 1.2    # per entry of the same group already chosen (keeps the list varied)
KIND_PENALTY = 1.0      # per arch or comparison entry already chosen


@dataclass
class SuggestContext:
    arch: str | None = "hopper"
    has_comparison: bool = False
    asked: Collection[str] = ()      # bank ids (or exact texts) already posed this campaign
    recent_text: str = ""          # optional words from the campaign; may lift entries


def arch_from_cc(cc: str | None) -> str | None:
    """The bank's arch name for a compute capability such as "9.0" (the evaluator's
    gpu.cc): 9.x is hopper, 10.x blackwell (tcgen05, tensor memory); others None."""
    major = str(cc or "").split(".")[0]
    return {"9": "hopper", "10": "blackwell"}.get(major)


def words(text: str) -> set[str]:
    return {w for w in WORD_RE.findall(text.lower()) if len(w) >= 4 and w not in STOPWORDS}


def eligible(entry: Entry, trigger: str, context: SuggestContext) -> bool:
    if trigger not in entry.triggers:
        return False
    if entry.arch is not None and entry.arch != context.arch:
        return False
    return context.has_comparison or not entry.requires_comparison


def rarity(bank: Bank) -> dict[str, float]:
    """Inverse document frequency of each word over the bank's entries."""
    df: dict[str, int] = {}
    for e in bank.entries:
        for w in entry_words(e):
            df[w] = df.get(w, 0) + 1
    n = max(1, len(bank.entries))
    return {w: math.log((n + 1) / c) for w, c in df.items()}


def entry_words(entry: Entry) -> set[str]:
    return words(f"{entry.text} {entry.id.replace('-', ' ')} {entry.level}")


def base_score(entry: Entry, trigger: str, context: SuggestContext,
               recent: set[str], idf: dict[str, float]) -> float:
    order = GROUP_ORDER[trigger]
    score = (len(order) - order.index(entry.group)) * GROUP_STEP
    score += FOCUS_BONUS / len(entry.triggers)
    if entry.arch is not None:
        score += ARCH_BONUS
    if entry.requires_comparison:
        score += COMPARISON_BONUS
    if recent:
        shared = recent & entry_words(entry)
        score += min(MAX_WORD_LIFT, WORD_SCALE * sum(idf.get(w, 0.0) for w in shared))
    return score


def suggest(bank: Bank, trigger: str, context: SuggestContext | None = None,
            limit: int = 5) -> list[Entry]:
    """Entries for `trigger`, best first; ones already asked come last, never dropped."""
    if trigger not in TRIGGERS:
        raise BankError(f"unknown trigger '{trigger}' (one of: {', '.join(TRIGGERS)})")
    context = context or SuggestContext()
    asked = set(context.asked)
    recent = words(context.recent_text) if context.recent_text else set()
    position = {e.id: i for i, e in enumerate(bank.entries)}
    fresh: list[Entry] = []
    stale: list[Entry] = []
    for e in bank.entries:
        if eligible(e, trigger, context):
            (stale if e.id in asked or e.text in asked else fresh).append(e)
    idf = rarity(bank) if recent else {}
    scores = {e.id: base_score(e, trigger, context, recent, idf) for e in fresh + stale}

    def pick(pool: list[Entry], room: int) -> list[Entry]:
        chosen: list[Entry] = []
        per_group: dict[str, int] = {}
        per_kind: dict[str, int] = {}
        remaining = list(pool)
        while remaining and len(chosen) < room:
            best = max(remaining, key=lambda e: (
                scores[e.id] - REPEAT_PENALTY * per_group.get(e.group, 0)
                - (KIND_PENALTY * per_kind.get(e.kind, 0) if e.kind != "core" else 0.0),
                -position[e.id]))
            remaining.remove(best)
            chosen.append(best)
            per_group[best.group] = per_group.get(best.group, 0) + 1
            per_kind[best.kind] = per_kind.get(best.kind, 0) + 1
        return chosen

    if limit <= 0:
        return []
    first = pick(fresh, limit)
    return first + pick(stale, limit - len(first))
