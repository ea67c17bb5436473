"""benchmarks/space_check.sh's CPU side: the script parses, and benchmarks/space_compare.py
tells two space evaluations with the same seed (the same draws, figures within noise) from
two with different seeds, on the fake evaluator's results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from socratic_doubles.testing import FAKE_EVALUATOR

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "// k\n// speedup: 3.0\n// vs-fa3: 0.97\n// vs-cudnn: 1.1\n// vs-fa2: 2.0\n// slow[head_dim == 192]: 0.4\n"


def _space(tmp: Path, name: str, seed: str, kernel: str = KERNEL) -> Path:
    cand = tmp / f"{name}.cu"
    cand.write_text(kernel)
    out = tmp / f"{name}.json"
    with out.open("w") as f:
        subprocess.run([*FAKE_EVALUATOR, str(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"), "--candidate", str(cand),
                        "--space", "20", "--seed", seed, "--json"], stdout=f, stderr=subprocess.DEVNULL,
                       timeout=120, check=False)
    return out


def _compare(*args: Path | str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "space_compare.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_the_device_script_parses():
    assert subprocess.run(["bash", "-n", str(ROOT / "benchmarks" / "space_check.sh")]).returncode == 0


def test_same_seed_same_draws_within_noise(tmp_path):
    r = _compare(_space(tmp_path, "a", "41"), _space(tmp_path, "b", "41"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same ids: yes, same shapes: yes" in r.stdout
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "SAME DRAWS, WITHIN NOISE"
    head = next(ln for ln in lines if ln.startswith("field"))
    assert head.index("vs fa3") < head.index("vs cudnn") < head.index("vs fa2")   # the task's order
    assert any(ln.startswith("head_dim   192") and "0.388 | 0.388" in ln for ln in lines)


def test_another_seed_or_other_figures_are_told_apart(tmp_path):
    one = _space(tmp_path, "a", "41")
    assert _compare(one, _space(tmp_path, "b", "42")).returncode == 1
    slower = _space(tmp_path, "c", "41", KERNEL.replace("vs-fa3: 0.97", "vs-fa3: 0.90"))
    r = _compare(one, slower)
    assert r.returncode == 1 and "same ids: yes" in r.stdout and "DIFFERENT" in r.stdout
    assert _compare(one, tmp_path / "missing.json").returncode == 2
