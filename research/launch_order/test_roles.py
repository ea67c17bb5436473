"""research/launch_order/roles.py: each role's per-place offsets read back from samples whose
offsets are known (a first baseline 0.3 us slower, a candidate 0.05 us faster)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_spec = importlib.util.spec_from_file_location("roles", Path(__file__).resolve().with_name("roles.py"))
assert _spec and _spec.loader
roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(roles)


def _samples(folder: Path, runs: int = 2) -> None:
    rows = []
    for _ in range(runs * roles.ROWS):
        base = [(4.30 if i % 2 == 0 else 4.00) * 1e-3 for i in range(40)]   # per call, ms: first | second
        cand = [3.95e-3] * 40
        rows.append(json.dumps({"copies": 32, "placements": 1, "base": base, "cand": cand}))
    (folder / "samples.v0.jsonl").write_text("\n".join(rows) + "\n")


def test_offsets_per_place(tmp_path: Path) -> None:
    _samples(tmp_path)
    lines = roles.table(tmp_path / "samples.v0.jsonl", "v0")
    assert len(lines) == 2
    assert lines[0].split()[2] == "32x4.0:+0.30/-0.05/-0.35"


def test_missing_variant_is_one_line(tmp_path: Path, capsys) -> None:
    assert roles.main([str(tmp_path), "warm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "samples.warm.jsonl" in err


def test_short_rows_left_out(tmp_path: Path) -> None:
    row = json.dumps({"copies": 2, "base": [0.1, 0.1], "cand": [0.1, 0.1]})
    (tmp_path / "samples.v0.jsonl").write_text((row + "\n") * roles.ROWS)
    assert roles.table(tmp_path / "samples.v0.jsonl", "v0") == ["v0             #1  "]
