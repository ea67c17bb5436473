"""research/fa3_campaign/pack_model.py: the packed decomposition holds on random shapes, and
the checks catch a decomposition that is wrong (a tile short of its last query's keys)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().with_name("pack_model.py")
_spec = importlib.util.spec_from_file_location("pack_model", TOOL)
assert _spec and _spec.loader
pack_model = importlib.util.module_from_spec(_spec)
sys.modules["pack_model"] = pack_model   # its dataclass looks its module up
_spec.loader.exec_module(pack_model)


def test_random_shapes_hold() -> None:
    assert pack_model.main(["400"]) == 0


def test_fa3_rule() -> None:
    assert pack_model.pack_gqa(493, 8, 192) == 8      # 493 of 576 rows against 3944 of 3968
    assert pack_model.pack_gqa(4096, 4, 128) == 1     # no padding to save
    assert pack_model.pack_gqa(100, 3, 128) == 1      # a group of 3 never packs


def test_a_short_key_range_is_caught(monkeypatch) -> None:
    # the last query of a packed causal tile needs one key more than its first
    s = pack_model.Shape(batch=1, seqlen_q=100, seqlen_k=100, heads_kv=1, group=8, causal=True,
                         bm=128, bn=16, sect=1)
    assert pack_model.breaches(s) == []
    real = pack_model.pack_gqa
    monkeypatch.setattr(pack_model, "pack_gqa", lambda q, g, bm: real(q, g, bm) * 2 if g == 8 else 1)
    assert pack_model.breaches(s)   # a shift one too large: rows land on the wrong queries
