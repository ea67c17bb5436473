"""The round-3 hostile candidates build and pass the static checks (`--check-only`, no GPU), so
that the scarce GPU time their tests take is never lost to a source that does not compile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.candidates import round3_hostile
from tests.evalcli import socratic

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                reason="needs nvcc")

# the ones written since their GPU tests last ran, and the one they are made from
NEW = ["copies_ahead_unmarked_rms", "timed_maxfinite_rms", "copies_batch_ahead_rms"]


@needs_nvcc
@pytest.mark.parametrize("name", NEW)
def test_the_hostile_source_builds(tmp_path, name):
    path = tmp_path / f"{name}.cu"
    path.write_text(round3_hostile.source(name))
    res = socratic("eval", round3_hostile.task_of(name), "--candidate", str(path), "--check-only", "--arch", "sm_90a")
    assert res.code == 0, res.stderr[-600:]


def test_every_hostile_is_described_and_names_its_task():
    for name in round3_hostile.SOURCES:
        assert round3_hostile.task_of(name) in ("rmsnorm", "flash_attn_fwd")
        assert name in (round3_hostile.__doc__ or ""), f"{name}: not in the module's list"
