"""The evaluator's JSON stays byte-identical (issue 44). Two checks:

- every result the bundled sessions hold (the demo's evals/, the fa3-h200 pack's), read
  through the contract (`parse_eval`) and written as the evaluator writes it
  (`json.dumps(result.to_dict(), indent=1)`, `socratic eval --json`; the harness saves the
  same with `json.dump`), has the sha256 recorded in tests/data/golden_eval_json/digests.json,
  and two of them the whole text there; no GPU needed;
- where nvcc is the one the golden was made with, `socratic eval rmsnorm --check-only
  --json` (a real build and the static ban checks, no GPU) prints the golden check_only.json
  once paths, times and the build cache's state are normalized.

The goldens were written by the code before the change they guard (`python
tests/test_eval_json_golden.py --write`, run with that code first on sys.path). Changed on
purpose once since: session 25 added `seconds` (where the wall time went) at the end of
check_only.json; nothing before it moved."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic.contracts import parse_eval
from socratic.resources import bundled_dir
from socratic.sessionfiles import open_session

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_eval_json"
FULL = {"demo/evals/0005.json": "demo-0005.json", "fa3-h200/evals/0180.json": "fa3-h200-0180.json"}


def written(data: bytes) -> str:
    """A result as the evaluator writes it, after reading it through the contract."""
    return json.dumps(parse_eval(json.loads(data)).to_dict(), indent=1)


def bundled_results() -> dict[str, bytes]:
    """Every saved result of the bundled sessions, by "<session>/evals/NNNN.json"."""
    root = bundled_dir("socratic.sessions")
    out = {}
    for name in ("demo", "fa3-h200.socratic"):
        reader = open_session(root / name)
        label = name.removesuffix(".socratic")
        for rel in reader.names("evals"):
            if rel.endswith(".json"):
                out[f"{label}/{rel}"] = reader.read_bytes(rel)
    return out


def digests() -> dict[str, str]:
    return {k: hashlib.sha256(written(v).encode()).hexdigest()
            for k, v in sorted(bundled_results().items())}


def test_bundled_results_are_written_byte_identically():
    want = json.loads((GOLDEN / "digests.json").read_text())
    results = bundled_results()
    for key, file in FULL.items():   # the whole text, for a readable diff
        assert written(results[key]) == (GOLDEN / file).read_text(), key
    got = digests()
    assert got.keys() == want.keys()
    changed = sorted(k for k in got if got[k] != want[k])
    assert not changed, f"written differently from the golden: {changed[:10]}"


# ---------------------------------------------------------------- a real --check-only run

def nvcc_release() -> str | None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release [^\n]*", out)
    return m.group(0) if m else None


def normalized(out: str, checkout: Path, cache: Path) -> str:
    """The --check-only JSON without what depends on where it ran and how long it took."""
    out = out.replace(str(cache), "<cache>").replace(str(checkout), "<kernels>")
    out = re.sub(r"builds/[0-9a-f]{24}\.[A-Za-z0-9_]+/", "builds/<dir>/", out)
    out = re.sub(r'"(seconds|total|build|judge|comparisons)": [0-9.e-]+', r'"\1": 0', out)
    out = re.sub(r'"cached": (true|false)', '"cached": <cached>', out)
    out = re.sub(r"_GLOBAL__N__[0-9a-f]{8}_", "_GLOBAL__N__<h>_", out)   # per build
    # the built libraries' hashes: each build embeds its own names (the line says which)
    out = re.sub(r'"(baseline|reference)": "[0-9a-f]{64}"', r'"\1": "<sha256>"', out)
    return re.sub(r"Compile time = [0-9.]+ ms", "Compile time = <t> ms", out)


def check_only(cache: Path) -> str:
    kernels = bundled_dir("socratic.kernels")
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/local/bin:/usr/bin:/bin",
           "HOME": str(cache), **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    run = subprocess.run([sys.executable, "-m", "socratic", "eval", "rmsnorm", "--check-only",
                          "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return normalized(run.stdout, kernels, cache)


def test_check_only_json_is_unchanged(tmp_path):
    meta = json.loads((GOLDEN / "check_only.meta.json").read_text())
    release = nvcc_release()
    if release != meta["nvcc"]:
        pytest.skip(f"the golden was made with nvcc {meta['nvcc']!r}, here: {release!r}")
    assert check_only(tmp_path) == (GOLDEN / "check_only.json").read_text()


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    res = bundled_results()
    for key, file in FULL.items():
        (GOLDEN / file).write_text(written(res[key]))
    (GOLDEN / "digests.json").write_text(json.dumps(digests(), indent=1) + "\n")
    if nvcc_release() is not None:
        with tempfile.TemporaryDirectory() as tmp:
            (GOLDEN / "check_only.json").write_text(check_only(Path(tmp)))
        (GOLDEN / "check_only.meta.json").write_text(
            json.dumps({"nvcc": nvcc_release()}, indent=1) + "\n")
