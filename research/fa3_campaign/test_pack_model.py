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


def test_zero_rows_left_to_the_fill() -> None:
    # causal q 1000 k 70: queries 0..929 see no key; tiles of 128 rows start at query 896 (tile 7)
    s = pack_model.Shape(batch=1, seqlen_q=1000, seqlen_k=70, heads_kv=2, group=1, causal=True,
                         bm=128, bn=64, sect=1)
    assert pack_model.breaches(s) == []
    real = pack_model.breaches
    # a q_first one tile too far (the tile holding query 930, the first to see a key, dropped)
    src = TOOL.read_text().replace("* pack // s.bm if s.zero_rows", "* pack // s.bm + 1 if s.zero_rows")
    ns: dict = {"__name__": "pack_model_mutant"}
    sys.modules["pack_model_mutant"] = type(sys)("pack_model_mutant")
    exec(compile(src, "pack_model_mutant", "exec"), ns)
    assert ns["breaches"](ns["Shape"](**{f: getattr(s, f) for f in s.__dataclass_fields__}))
    assert real(s) == []
