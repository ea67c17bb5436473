"""search(): fuzzy look-up over an entry's id, group and text (the TUI picker and
`socratic bank search` share it).

Each query word is matched against every word of the entry and scores its best match:
exact > prefix > same stem > inside a word > one or two typos > letters in order
(subsequence). The id counts most, then group and text; the entry's triggers, level, why
and source count less (so "plateau" or a source's title also find entries).
An entry must match every query word; when none does, entries matching most words are
returned instead. Best first; ties keep bank order.
"""

from __future__ import annotations

import re

from socratic.bank.model import Bank, Entry

TOKEN_RE = re.compile(r"[a-z0-9]+")

EXACT, PREFIX, STEM, INSIDE, TYPO1, TYPO2, SUBSEQ = 1.0, 0.85, 0.8, 0.7, 0.65, 0.45, 0.35
ID_WEIGHT, GROUP_WEIGHT, TEXT_WEIGHT, EXTRA_WEIGHT = 1.2, 1.0, 1.0, 0.5
SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s", "ly")
PHRASE_BONUS = 0.5


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def edit_distance(a: str, b: str, cap: int = 3) -> int:
    """Optimal-string-alignment distance (a swap of neighbours counts once), capped."""
    if abs(len(a) - len(b)) >= cap:
        return cap
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) >= cap:
            return cap
        prev2, prev = prev, cur
    return min(prev[-1], cap)


def is_subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(c in it for c in needle)


def stem(word: str) -> str:
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def word_score(q: str, tok: str) -> float:
    if q == tok:
        return EXACT
    if tok.startswith(q):
        return PREFIX
    if len(q) >= 4 and stem(q) == stem(tok):
        return STEM
    if len(q) >= 3 and q in tok:
        return INSIDE
    if len(q) >= 4:
        d = edit_distance(q, tok)
        # a typo in a word's first letters is rarer; allow two typos in long words
        if d == 1:
            return TYPO1
        if d == 2 and len(q) >= 7:
            return TYPO2
        # a typo in a query word longer than the entry's word ("spillls" / "spills")
        if d <= 2 and tok.startswith(q[: max(3, len(q) - 2)]) and len(tok) >= 4:
            return TYPO2
    if len(q) >= 3 and len(q) <= len(tok) and q[0] == tok[0] and is_subsequence(q, tok):
        return SUBSEQ
    return 0.0


def _fields(entry: Entry) -> list[tuple[list[str], float]]:
    return [
        (tokens(entry.id), ID_WEIGHT),
        (tokens(entry.group) + tokens(entry.kind) + tokens(entry.arch or ""), GROUP_WEIGHT),
        (tokens(entry.text), TEXT_WEIGHT),
        (tokens(" ".join(entry.triggers)) + tokens(entry.level) + tokens(entry.why)
         + tokens(entry.source), EXTRA_WEIGHT),
    ]


def score_entry(entry: Entry, query_words: list[str], phrase: str) -> tuple[int, float]:
    matched, total = 0, 0.0
    fields = _fields(entry)
    for q in query_words:
        best = 0.0
        for toks, weight in fields:
            for tok in toks:
                s = word_score(q, tok) * weight
                if s > best:
                    best = s
        if best > 0:
            matched += 1
            total += best
    if matched and len(query_words) > 1 and phrase in entry.text.lower():
        total += PHRASE_BONUS
    # the whole query, letters in order, over the id ("measwarm" finds measurement.warmup)
    if not matched and len(phrase) >= 4:
        squashed = phrase.replace(" ", "")
        if is_subsequence(squashed, entry.id.replace(".", "").replace("-", "")):
            return len(query_words), SUBSEQ * len(query_words)
    return matched, total


def search(bank: Bank, text: str, limit: int = 20) -> list[Entry]:
    """Entries that match `text`, best first (at most `limit`)."""
    query_words = tokens(text)
    if not query_words or limit <= 0:
        return []
    phrase = " ".join(query_words)
    scored = []
    for pos, entry in enumerate(bank.entries):
        matched, total = score_entry(entry, query_words, phrase)
        if matched:
            scored.append((matched, total, pos, entry))
    full = [s for s in scored if s[0] == len(query_words)]
    pool = full or scored
    pool.sort(key=lambda s: (-s[0], -s[1], s[2]))
    return [s[3] for s in pool[:limit]]
