"""The shipped bank: counts, groups and the quality rules of issue 4."""

from __future__ import annotations

import re

import pytest

from socratic.bank import load_bank
from socratic.bank.model import ARCHS, GROUPS, LEVELS, MAX_TEXT, TRIGGERS

# Words that name attention or a specific kernel; at most 10 core entries may use them.
KERNEL_WORDS = re.compile(
    r"\b(attention|flash|softmax|gemm|matmul|rms\s?norm|layer\s?norm|normali[sz]ation|"
    r"convolution|conv|transpose kernel|scan kernel|top-?k|sort|histogram|embedding)\b",
    re.IGNORECASE)
# Phrases that hand over an answer instead of a question.
IMPERATIVE_START = re.compile(r"^(use|add|replace|switch|try|make|rewrite|apply|enable)\b",
                              re.IGNORECASE)


@pytest.fixture(scope="module")
def bank():
    return load_bank(user=False)


def test_counts_per_kind(bank):
    kinds = [e.kind for e in bank.entries]
    assert kinds.count("core") == 101
    assert kinds.count("comparison") == 5
    assert kinds.count("arch") == 18
    arch = [e.arch for e in bank.entries if e.kind == "arch"]
    assert arch.count("hopper") >= 8 and arch.count("blackwell") >= 8


def test_ten_groups_all_used(bank):
    core_groups = {e.group for e in bank.entries if e.kind == "core"}
    assert core_groups == set(GROUPS) and len(GROUPS) == 10
    stats = bank.stats()
    assert stats["core"] == 101 and sum(stats["groups"].values()) == 101
    assert min(stats["groups"].values()) >= 8


def test_unique_ids_and_fields(bank):
    ids = [e.id for e in bank.entries]
    assert len(ids) == len(set(ids))
    for e in bank.entries:
        assert bank.get(e.id) is e
        assert e.why and e.level in LEVELS, e.id
        assert e.triggers and set(e.triggers) <= set(TRIGGERS), e.id
        assert e.provenance in ("public", "new", "trace"), e.id
        assert bool(e.source) == (e.provenance != "new"), e.id


def test_trace_entries_point_at_a_bundled_campaign(bank):
    """Every trace names a session shipped in sessions/ and an event of it that is the
    question itself; its evidence files are there."""
    import json
    from pathlib import Path

    from socratic.resources import resolve_session_dir
    from socratic.sessionfiles import open_session

    traced = [e for e in bank.entries if e.provenance == "trace"]
    assert traced   # the H200 campaign (sessions/fa3-h200.socratic) taught the bank
    for e in traced:
        name, seq = e.source.split("#")
        session = open_session(resolve_session_dir(Path(name)))   # its folder or its pack
        events = [json.loads(line) for line in session.read_text("events.jsonl").splitlines()]
        asked = next(ev for ev in events if ev["seq"] == int(seq))
        assert asked["type"] == "question" and asked.get("bank_id") == e.id, e.id
        for rel in e.evidence:
            where, _, inside = rel.partition("/")
            assert where == name and session.is_file(inside), (e.id, rel)


def test_text_is_one_short_question(bank):
    for e in bank.entries:
        assert 20 <= len(e.text) <= MAX_TEXT, e.id
        assert e.text.endswith("?") and e.text.count("?") == 1, e.id
        assert not IMPERATIVE_START.match(e.text), e.id


def test_kind_consistency(bank):
    for e in bank.entries:
        if e.kind == "core":
            assert e.arch is None and not e.requires_comparison, e.id
        elif e.kind == "comparison":
            assert e.requires_comparison and e.arch is None, e.id
        else:
            assert e.arch in ARCHS and not e.requires_comparison, e.id


def test_at_most_ten_core_entries_name_a_kernel(bank):
    naming = [e.id for e in bank.entries if e.kind == "core" and KERNEL_WORDS.search(e.text)]
    assert len(naming) <= 10, naming


def test_every_trigger_has_enough_entries(bank):
    stats = bank.stats()
    for trigger in TRIGGERS:
        assert stats["by_trigger"][trigger] >= 10, trigger


def test_texts_are_distinct(bank):
    texts = [e.text.lower() for e in bank.entries]
    assert len(texts) == len(set(texts))
