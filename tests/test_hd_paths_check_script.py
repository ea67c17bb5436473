"""benchmarks/hd_paths_check.sh's CPU side (issue 42): the script parses, and
benchmarks/hd_paths_table.py reads the runs it writes (the fake evaluator's results) into a
per-head-dim table of the shipped and the new kernel, a cut-off run read from its progress
lines against the other run's comparison times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from socratic_doubles.testing import FAKE_EVALUATOR

ROOT = Path(__file__).resolve().parent.parent
TASK = ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"
DRAWS = "space-42042-8-d192-q1092-k1014-b6-h16-causal-gqa2,space-42042-9-d96-q92-k8057-b5-h8-causal-gqa8"
EDGES = "d96-s1-b1-h2-full,d192-q1000-k127-b1-h16-causal-gqa8"


def _run(tmp: Path, name: str, kernel: str, ids: str) -> None:
    cand = tmp / f"{name}.cu"
    cand.write_text(kernel)
    with (tmp / f"{name}.json").open("w") as out, (tmp / f"{name}.err").open("w") as err:
        subprocess.run([*FAKE_EVALUATOR, str(TASK), "--candidate", str(cand), "--scenarios", ids, "--hidden", "0",
                        "--json"], stdout=out, stderr=err, timeout=120, check=False)


def _table(d: Path) -> str:
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hd_paths_table.py"), str(d)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_device_script_parses():
    assert subprocess.run(["bash", "-n", str(ROOT / "benchmarks" / "hd_paths_check.sh")]).returncode == 0


def test_table_per_head_dim(tmp_path):
    _run(tmp_path, "timed_new", "// speedup: 2.4\n// vs-fa3: 0.9\n// vs-cudnn: 0.95\n", DRAWS)
    _run(tmp_path, "timed_old", "// speedup: 1.0\n// vs-fa3: 0.4\n// vs-cudnn: 0.42\n", DRAWS)
    _run(tmp_path, "full_new", "// incorrect: d96-s1-b1-h2-full\n", EDGES)
    out = _table(tmp_path)
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.split()[:1] in (["96"], ["192"])}
    assert "0.900" in rows[("96", "new")] and "1/1" in rows[("96", "new")]
    assert "0.400" in rows[("192", "shipped")]
    assert "d96: 0/1 correct: d96-s1-b1-h2-full" in out
    assert "d192: 1/1 correct" in out


def test_cut_off_run_borrows_comparison_times(tmp_path):
    _run(tmp_path, "timed_new", "// speedup: 2.0\n// vs-fa3: 1.0\n", DRAWS)
    _run(tmp_path, "timed_old", "// speedup: 1.0\n// vs-fa3: 0.5\n", DRAWS)
    new = json.loads((tmp_path / "timed_new.json").read_text())
    fa3_ms = {r["id"]: r["comparisons"]["fa3"]["ms"] for r in new["scenarios"]}
    old = {r["id"]: r["candidate_ms"] for r in json.loads((tmp_path / "timed_old.json").read_text())["scenarios"]}
    (tmp_path / "timed_old.json").unlink()   # cut off: progress lines only, no comparisons
    lines = [json.loads(x) for x in (tmp_path / "timed_old.err").read_text().splitlines() if x.startswith("{")]
    (tmp_path / "timed_old.err").write_text("".join(
        json.dumps({**x, "comparisons": None}) + "\n" for x in lines if x.get("event") == "scenario"))
    out = _table(tmp_path)
    assert "timed_old: 2 scenarios from progress lines" in out
    assert "read against another run's comparison times" in out
    want = fa3_ms[DRAWS.split(",")[1]] / old[DRAWS.split(",")[1]]
    assert f"{want:5.3f}" in next(line for line in out.splitlines() if line.split()[:2] == ["96", "shipped"])
