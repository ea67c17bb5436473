"""The candidate's process (`python -m socratic.evaluator.launcher`): the only place its
host code runs. A child of the judge (evaluator.worker), confined before the candidate's
library loads (sandbox.confine_launcher), holding nothing the verdict depends on: no key,
no timer, no baseline, no reference and none of the judge's data.

Protocol (the records of evaluator.protocol): one `LauncherJob` line on stdin, then
`PlanRequest`s, one a line (the parameter struct's bytes in hex, the buffers to mirror).
Replies go to the descriptor named by $SOCRATIC_LAUNCHER_FD, one JSON line each:
`ready` (with how it confined itself) once its CUDA context and confinement are up,
`fatal` when the library does not load or lacks its entry, `plan` for each request (what
the call launched, or why it could not be captured).
The judge treats every reply as untrusted data (evaluator.plan.parse and check).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

from socratic.evaluator.plan import PlanError, PlanLib
from socratic.evaluator.protocol import (
    LauncherFatal,
    LauncherJob,
    LauncherReady,
    Message,
    PlanReply,
    PlanRequest,
)
from socratic.evaluator.sandbox import confine_launcher

RULES = ("the entry must only enqueue work on the given stream, so that it can be captured: no synchronisation, "
         "no device memory of its own, no host copies")


def diagnose(lib: PlanLib, entry: int, params: bytes, error: str) -> str:
    """Which rule a failed capture broke: the call again under relaxed capture, which
    allows allocations (so they show in the free memory) but still no synchronisation."""
    before = lib.free_memory()
    try:
        lib.capture(entry, params, relaxed=True)
        relaxed_ok = True
    except PlanError:
        relaxed_ok = False
    took = before - lib.free_memory()
    if took > (1 << 20):
        return (f"the entry allocates device memory of its own ({took >> 20} MiB; cudaMalloc is not capturable): "
                "device memory comes from the given workspace")
    if not relaxed_ok:
        return f"the entry synchronises or waits for the device inside the call ({error}): {RULES}"
    return f"the entry makes a call that stream capture forbids ({error}): {RULES}"


def main() -> int:
    out = os.fdopen(int(os.environ["SOCRATIC_LAUNCHER_FD"]), "w")

    def reply(msg: Message) -> None:
        out.write(json.dumps(msg.to_dict()) + "\n")
        out.flush()

    job = LauncherJob.from_dict(json.loads(sys.stdin.readline()), "the candidate process's job")
    try:
        lib = PlanLib(Path(job.plan_lib))
        lib.init(0)
    except (OSError, PlanError) as exc:
        reply(LauncherFatal(error=f"the candidate's process has no GPU: {exc}"))
        return 3
    reply(LauncherReady(sandbox=confine_launcher(job.library, (os.path.realpath(job.plan_lib),))))
    entry = 0
    for line in sys.stdin:
        req = PlanRequest.from_dict(json.loads(line), "the judge's request")
        if not entry:   # loaded on the first request, so the judge sees what its load takes
            try:
                cand = ctypes.CDLL(job.library, mode=ctypes.RTLD_LOCAL)
                entry = ctypes.cast(getattr(cand, job.entry), ctypes.c_void_p).value or 0
            except OSError as exc:
                why = str(exc).replace(job.library + ": ", "")
                reply(LauncherFatal(error=f"the candidate library does not load: {why}"))
                return 3
            except AttributeError:
                reply(LauncherFatal(error=f"the candidate library does not export {job.entry}"))
                return 3
        params = bytes.fromhex(req.params)
        try:
            lib.mirror([(a, n) for a, n in req.mirror])
        except PlanError:
            pass   # unmirrored pointers still capture for kernels; checked memsets fail and say so
        try:
            rc, plan = lib.capture(entry, params)
            reply(PlanReply(id=req.id, rc=rc, plan=plan.hex()))
        except PlanError as exc:
            reply(PlanReply(id=req.id, rc=None, error=diagnose(lib, entry, params, str(exc))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
