"""The build's own confinement (Linux Landlock).

nvcc and the host compiler it runs read only the toolchain, the system's files, Python's,
the candidate's own folder and the build folder, and write only the build folder and
/dev/null. A candidate's `#include` or `.incbin` of any other file (a session's chain key,
the user's ~/.ssh) fails to open, so the build log, which the result carries back to
whoever ran the evaluation (an agent, in a campaign), and the library never hold another
file's bytes. Where the kernel lacks Landlock the build runs as before, and so does an
agent there: nothing is confined (docs/THREAT_MODEL.md).

    python -I -m socratic.evaluator.buildbox WORK [READ...] -- COMMAND...

(READ: more folders the build reads: the candidate's own, the driver library's stub.)
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from socratic.chain import key_dir
from socratic.landlock import SYSTEM_FOLDERS, Policy, restrict_self

LIBRARY_PATH_ENV = "SOCRATIC_BUILD_LD_LIBRARY_PATH"   # the user's LD_LIBRARY_PATH, for the tools only
OFF_ENV = "SOCRATIC_CONFINE"   # "0": no confinement (the agent's switch too: harness/attached/confine.py)
SYSTEM_READS = (*SYSTEM_FOLDERS, "/dev")


def _real(p: str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(p)))


def _holds(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def build_reads(work: str, more: list[str], program: str, env: dict[str, str] | None = None) -> tuple[str, ...]:
    """Where the build may read: the system's folders, the toolchain (the program's root,
    CUDA_HOME, the PATH's folders but $HOME itself: the host compiler may live in any),
    Python's (a pip-installed toolkit), `more` (the candidate's folder, on its include path)
    and the build folder. No folder that holds socratic's key folder."""
    env = dict(os.environ) if env is None else env
    keys, home = _real(str(key_dir())), _real(env.get("HOME") or "~")
    found = shutil.which(program, path=env.get("PATH")) or program
    roots = [*SYSTEM_READS, str(_real(found).parent), str(_real(found).parent.parent), env.get("CUDA_HOME", ""), env.get("CUDA_PATH", ""),
             sys.prefix, sys.base_prefix, sys.exec_prefix, *more, work]
    roots += [p for p in (env.get("PATH") or "").split(os.pathsep) if os.path.isabs(p) and _real(p) != home]
    out: list[str] = []
    for p in roots:
        if p and os.path.exists(p) and not _holds(_real(p), keys) and str(_real(p)) not in out:
            out.append(str(_real(p)))
    return tuple(out)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") < 1 or argv[-1] == "--":
        print("usage: python -I -m socratic.evaluator.buildbox WORK [READ...] -- COMMAND...", file=sys.stderr)
        return 2
    cut = argv.index("--")
    work, more, command = argv[0], argv[1:cut], argv[cut + 1:]
    libraries = os.environ.pop(LIBRARY_PATH_ENV, "")
    if libraries:   # the user's, for the compiler (this Python started without it)
        os.environ["LD_LIBRARY_PATH"] = libraries
        more = [*more, *(p for p in libraries.split(os.pathsep) if os.path.isabs(p))]
    if os.environ.get(OFF_ENV) == "0":   # as for the agent: a machine where the policy misses a folder
        print(f"note: the build runs unconfined (${OFF_ENV}=0)", file=sys.stderr)
        got = {"files": "off"}
    else:
        got = restrict_self(Policy(read=build_reads(work, more, command[0]), write=(work,),
                                   writable_files=("/dev/null",)))
    if got["files"] not in ("landlock", "off") and "no Landlock" not in got["files"]:
        # Landlock is there but refused this policy: build unconfined rather than not at all,
        # and say so in the log the result carries
        print(f"note: the build runs unconfined: {got['files']}", file=sys.stderr)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"build command not runnable: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
