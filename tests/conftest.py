"""Shared test setup: GPU tests (marked `gpu`) are skipped, never failed, without a GPU."""

from __future__ import annotations

import functools
import os
import tempfile

import pytest


def pytest_configure(config):
    # GPU turns (socratic.gpulock) of this run's fake evaluations stay among themselves: a
    # test run beside another on one machine must not wait for the other's "GPU"
    os.environ.setdefault("SOCRATIC_GPU_LOCKS", tempfile.mkdtemp(prefix="socratic-gpu-locks-"))
    # the session servers the hooks of this run start exit soon after their last hook
    os.environ.setdefault("SOCRATIC_HOOK_SERVER_IDLE_S", "30")
    # the sessions' chain keys and private copies (socratic.chain) stay this run's
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="socratic-state-")
    # builds go to a cache of the tests' own, not the user's ~/.cache/socratic (kept between
    # runs, so a second run builds nothing)
    os.environ.setdefault("SOCRATIC_CACHE", os.path.join(tempfile.gettempdir(),
                                                         f"socratic-test-cache-{os.getuid()}"))


@functools.lru_cache(maxsize=1)
def _no_gpu_reason() -> str | None:
    from socratic.gpuinfo import gpu_present
    return gpu_present()


def pytest_collection_modifyitems(config, items):
    if not any("gpu" in item.keywords for item in items):
        return
    reason = _no_gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
