"""suggest() ranking and search() fuzzy matching, on the shipped bank and on small banks."""

from __future__ import annotations

import pytest

from socratic.bank import Bank, BankError, Entry, SuggestContext, load_bank, search, suggest
from socratic.bank.model import TRIGGERS


@pytest.fixture(scope="module")
def bank():
    return load_bank(user=False)


def make(id, group="gap", triggers=("plateau",), arch=None, requires=False,
         text="Which part takes the most time?"):
    kind = "comparison" if requires else "arch" if arch else "core"
    return Entry(id=id, group=group, text=text, triggers=tuple(triggers), level="process",
                 provenance="new", source="", requires_comparison=requires, arch=arch,
                 why="because", kind=kind, file="t.toml", line=1)


# ---- suggest ------------------------------------------------------------------------

@pytest.mark.parametrize("trigger", TRIGGERS)
def test_trigger_filter(bank, trigger):
    got = suggest(bank, trigger, SuggestContext(), limit=200)
    assert got and all(trigger in e.triggers for e in got)
    expected = {e.id for e in bank.entries if trigger in e.triggers
                and e.arch in (None, "hopper") and not e.requires_comparison}
    assert {e.id for e in got} == expected


def test_arch_filter(bank):
    hopper = suggest(bank, "plateau", SuggestContext(arch="hopper"), limit=200)
    assert not [e for e in hopper if e.arch == "blackwell"]
    assert [e for e in hopper if e.arch == "hopper"]
    blackwell = suggest(bank, "plateau", SuggestContext(arch="blackwell"), limit=200)
    assert not [e for e in blackwell if e.arch == "hopper"]
    assert [e for e in blackwell if e.arch == "blackwell"]
    unknown = suggest(bank, "plateau", SuggestContext(arch=None), limit=200)
    assert unknown and all(e.arch is None for e in unknown)


def test_comparison_filter(bank):
    without = suggest(bank, "plateau", SuggestContext(has_comparison=False), limit=200)
    assert not [e for e in without if e.requires_comparison]
    with_cmp = suggest(bank, "plateau", SuggestContext(has_comparison=True), limit=5)
    assert any(e.requires_comparison for e in with_cmp)  # a comparison is worth asking early


def test_asked_entries_go_last_not_removed(bank):
    ctx = SuggestContext()
    first = suggest(bank, "plateau", ctx, limit=5)
    asked = [e.id for e in first]
    again = suggest(bank, "plateau", SuggestContext(asked=asked), limit=5)
    assert not set(asked) & {e.id for e in again}
    everything = suggest(bank, "plateau", SuggestContext(asked=asked), limit=500)
    assert [e.id for e in everything[-5:]] and set(e.id for e in everything[-5:]) == set(asked)
    assert len(everything) == len(suggest(bank, "plateau", ctx, limit=500))


def test_asked_by_text_counts_too(bank):
    top = suggest(bank, "start", SuggestContext(), limit=1)[0]
    again = suggest(bank, "start", SuggestContext(asked=[top.text]), limit=1)[0]
    assert again.id != top.id


def test_deterministic(bank):
    ctx = dict(arch="hopper", has_comparison=True, asked=["gap.stall-reasons", "bound.intensity"],
               recent_text="the loop stalls on shared memory")
    runs = {tuple(e.id for e in suggest(bank, t, SuggestContext(**ctx), limit=7))
            for t in ["plateau"] * 5}
    assert len(runs) == 1
    reordered = SuggestContext(**{**ctx, "asked": list(reversed(ctx["asked"]))})
    assert tuple(e.id for e in suggest(bank, "plateau", reordered, limit=7)) in runs


def test_limit_and_bad_trigger(bank):
    assert len(suggest(bank, "start", SuggestContext(), limit=3)) == 3
    assert suggest(bank, "start", SuggestContext(), limit=0) == []
    with pytest.raises(BankError):
        suggest(bank, "teatime", SuggestContext())


def test_recent_text_lifts_matching_entry(bank):
    plain = [e.id for e in suggest(bank, "plateau", SuggestContext(), limit=5)]
    assert "memory.bank-conflicts" not in plain
    lifted = suggest(bank, "plateau", SuggestContext(
        recent_text="profiler shows shared-memory bank conflicts per request"), limit=5)
    assert "memory.bank-conflicts" in [e.id for e in lifted]


def test_group_order_follows_trigger():
    small = Bank([make("a.validity", "validity", ["plateau", "suspicious_gain"]),
                  make("b.gap", "gap", ["plateau", "suspicious_gain"]),
                  make("c.correct", "correctness", ["correctness_failure", "plateau"])])
    assert suggest(small, "plateau", SuggestContext(), limit=1)[0].id == "b.gap"
    assert suggest(small, "suspicious_gain", SuggestContext(), limit=1)[0].id == "a.validity"
    assert [e.id for e in suggest(small, "correctness_failure", SuggestContext())] == ["c.correct"]


def test_ties_keep_bank_order_and_groups_spread():
    # gap comes first on a plateau, strategy second: one gap entry, then the best strategy
    # entry, before a second gap entry; equal entries keep bank order
    small = Bank([make("t1"), make("t2"), make("t3"), make("s1", "strategy")])
    got = [e.id for e in suggest(small, "plateau", SuggestContext(), limit=4)]
    assert got == ["t1", "s1", "t2", "t3"]


def test_arch_entry_lifted_on_its_gpu():
    small = Bank([make("core.one"), make("hop.one", arch="hopper"), make("bw.one", arch="blackwell")])
    assert [e.id for e in suggest(small, "plateau", SuggestContext(arch="hopper"))] == [
        "hop.one", "core.one"]
    assert [e.id for e in suggest(small, "plateau", SuggestContext(arch="blackwell"))] == [
        "bw.one", "core.one"]


# ---- search -------------------------------------------------------------------------

def ids(found):
    return [e.id for e in found]


def test_search_by_later_word(bank):
    assert ids(search(bank, "conflicts"))[0] == "memory.bank-conflicts"
    assert "correctness.sanitizer" in ids(search(bank, "racecheck"))[:3]
    assert "parallelism.occupancy-limiter" in ids(search(bank, "achieved occupancy"))[:3]


def test_search_tolerates_typos(bank):
    assert "parallelism.occupancy-limiter" in ids(search(bank, "ocupancy limter"))[:3]
    assert "memory.bank-conflicts" in ids(search(bank, "bank conflcits"))[:3]
    assert "compiler.registers-spills" in ids(search(bank, "spils"))[:3]


def test_search_subsequence_and_id(bank):
    assert ids(search(bank, "gap.stall-reasons"))[0] == "gap.stall-reasons"
    assert "measurement.what-is-timed" in ids(search(bank, "whtimed"))[:3]
    assert "hopper.smem-budget" in ids(search(bank, "hopper smem"))[:2]


def test_search_by_group_and_limit(bank):
    found = search(bank, "correctness", limit=5)
    assert len(found) == 5 and all(e.group == "correctness" for e in found)
    assert search(bank, "") == [] and search(bank, "zzzzqqqq") == []


def test_search_is_deterministic(bank):
    assert ids(search(bank, "shared memory")) == ids(search(bank, "shared memory"))


def test_arch_from_cc():
    from socratic.bank import arch_from_cc

    assert arch_from_cc("9.0") == "hopper" and arch_from_cc("10.0") == "blackwell"
    assert arch_from_cc("12.0") is None and arch_from_cc(None) is None


# ---- loader through the Python API ----------------------------------------------------

def test_load_bank_extra_dirs_and_duplicates(tmp_path, monkeypatch):
    entry = ('[[entry]]\nid = "{id}"\ngroup = "gap"\ntext = "Where does the time go?"\n'
             'triggers = ["plateau"]\nlevel = "process"\nprovenance = "new"\nwhy = "w"\n')
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "mine.toml").write_text(entry.format(id="user.one"))
    (tmp_path / "extra.toml").write_text(entry.format(id="user.two"))
    bank = load_bank([tmp_path / "extra.toml"])
    assert len(bank.entries) == 126 and bank.get("user.one") and bank.get("user.two")
    assert bank.entries[-1].id == "user.two"  # extra dirs load after the config dir
    (tmp_path / "extra.toml").write_text(entry.format(id="user.one"))
    with pytest.raises(BankError) as err:
        load_bank([tmp_path / "extra.toml"])
    assert "extra.toml:1" in str(err.value) and "mine.toml:1" in str(err.value)
