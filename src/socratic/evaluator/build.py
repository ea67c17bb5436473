"""Build a single-file CUDA candidate into a shared library, cached by content.

The cache key covers the source bytes, the task's build command, the candidate's folder
(it is on the include path) and the toolchain (nvcc's version banner), so an unchanged
candidate never rebuilds. The evaluator adds
flags of its own to the task's command: the candidate's own folder on the include path
(so that a stray header builds and is then reported by the ban check, rather than
failing obscurely), a dependency file and the kept intermediate cubins (both for the ban
check).

The tasks link the CUDA driver library (`-lcuda`): a Hopper kernel encodes its TMA tensor
maps on the host with the driver API (cuTensorMapEncodeTiled), and looking driver entry
points up at run time is banned. A machine with no libcuda.so to link against (a CPU-only
box with a pip-installed toolkit, which has no link stubs) still builds: the link is
retried against an empty stub with the driver's soname, so the library records
NEEDED libcuda.so.1 and loads wherever the driver is installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from socratic.contracts import KernelResources
from socratic.errors import InputError
from socratic.evaluator.buildbox import LIBRARY_PATH_ENV
from socratic.pyproc import clean_env, isolated_python
from socratic.taskfile import Task, TaskError

BUILD_TIMEOUT_S = 600
EXTRA_FLAGS = "-I {srcdir} -MD -MF {dep} -keep -keep-dir {keep}"
CACHE_VERSION = "1"
NO_LIBCUDA = "cannot find -lcuda"


@dataclass
class BuildResult:
    ok: bool
    cached: bool
    seconds: float
    command: str
    log: str
    sha256: str
    resources: list[KernelResources] = field(default_factory=list)
    dir: Path | None = None

    @property
    def library(self) -> Path:
        assert self.dir is not None
        return self.dir / "lib.so"

    @property
    def source(self) -> Path:
        assert self.dir is not None
        return self.dir / "candidate.cu"


def cache_root() -> Path:
    from socratic.gpulock import cache_base

    return cache_base() / "builds"


def find_nvcc() -> str:
    for candidate in (shutil.which("nvcc"),
                      os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if candidate and os.path.isfile(candidate):
            return candidate
    raise InputError("nvcc not found: install the CUDA toolkit or put nvcc on PATH (or set CUDA_HOME)")


@lru_cache(maxsize=1)
def toolchain_id() -> str:
    nvcc = find_nvcc()
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    return f"{nvcc}\n{out.stdout.strip()}"


def build(source: Path, command_template: str, label: str = "candidate") -> BuildResult:
    """Build `source` with the task's command; reuse the cached library when nothing changed."""
    try:
        code = Path(source).read_bytes()
    except OSError as exc:
        raise InputError(f"{source}: cannot read {label}: {exc.strerror}") from None
    sha = hashlib.sha256(code).hexdigest()
    if b"\0" in code[:65536]:  # a binary file: a failed build, without nvcc's kilobytes of raw bytes
        return BuildResult(ok=False, cached=False, seconds=0.0, command="", sha256=sha,
                           log=f"{source}: error: a binary file, not CUDA source (give the .cu file)")
    src_dir = str(Path(source).resolve().parent)   # on the include path, so part of the build
    key = hashlib.sha256(
        "\0".join([CACHE_VERSION, sha, command_template, EXTRA_FLAGS, src_dir, toolchain_id()]).encode()
    ).hexdigest()[:24]
    final = cache_root() / key
    meta_path = final / "build.json"
    if meta_path.is_file() and (final / "lib.so").is_file():
        try:
            meta = json.loads(meta_path.read_text())
            return BuildResult(ok=True, cached=True, seconds=0.0, command=meta["command"],
                               log=meta["log"], sha256=sha, dir=final,
                               resources=[KernelResources.from_dict(r) for r in meta["resources"]])
        except (OSError, ValueError, KeyError, TypeError):
            # a damaged cache entry (a full disk, an edit): build again in its place
            shutil.rmtree(final, ignore_errors=True)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{final.parent}: cannot create the build cache ({exc.strerror or exc}; "
                         f"set $SOCRATIC_CACHE to a writable folder)") from None
    work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=final.parent))
    try:
        return _build_in(work, final, code, sha, source, command_template, src_dir)
    except BaseException:  # Ctrl-C, a full disk: no half-built folder left in the cache
        shutil.rmtree(work, ignore_errors=True)
        raise


def _build_in(work: Path, final: Path, code: bytes, sha: str, source: Path,
              command_template: str, src_dir: str) -> BuildResult:
    (work / "candidate.cu").write_bytes(code)
    (work / "keep").mkdir()
    command = command_template.format(
        src=shlex.quote(str(work / "candidate.cu")), out=shlex.quote(str(work / "lib.so")),
    ) + " " + EXTRA_FLAGS.format(
        srcdir=shlex.quote(src_dir),
        dep=shlex.quote(str(work / "deps.d")), keep=shlex.quote(str(work / "keep")))
    t0 = time.monotonic()
    log, ok = _run_build(command, work, [src_dir])
    if not ok and NO_LIBCUDA in log and (stub := libcuda_stub_dir()):
        # no driver library on this machine: link against the stub (see the module docstring);
        # --no-as-needed keeps NEEDED libcuda.so.1 although the stub defines nothing
        command += f" -Xlinker --no-as-needed -L {shlex.quote(str(stub))}"
        log, ok = _run_build(command, work, [src_dir, str(stub)])
        log = f"note: no libcuda.so to link here; linked against an empty stub ({stub})\n{log}"
    seconds = time.monotonic() - t0
    # the compiler's messages name the file the user wrote, not the cache's copy of it
    log = log.replace(str(work / "candidate.cu"), str(source))
    result = BuildResult(ok=ok, cached=False, seconds=round(seconds, 3), command=command, log=log,
                         sha256=sha, resources=parse_resources(log), dir=work)
    if not ok:   # nothing to reuse: its log is in the result, its folder goes (else a candidate
        shutil.rmtree(work, ignore_errors=True)   # failing on purpose would fill the disk)
        result.dir = None
        return result
    meta_path = work / "build.json"
    meta_path.write_text(json.dumps({"command": command, "log": log,
                                     "resources": [r.to_dict() for r in result.resources]}))
    try:
        os.rename(work, final)  # atomic publish; a concurrent build of the same key may win
        result.dir = final
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
        result.dir = final
    return result


def _run_build(command: str, work: Path, reads: list[str]) -> tuple[str, bool]:
    """Run the build command in `work`, confined (evaluator.buildbox): it reads the
    toolchain's and the system's folders and `reads` (the candidate's own folder), and
    writes `work` only."""
    argv = shlex.split(command)
    if argv and argv[0] == "nvcc":
        argv[0] = find_nvcc()
    if not argv or shutil.which(argv[0]) is None:
        # the task file names the command: say which one, and where it is looked up
        raise CommandNotFound(f"build command not found: {argv[0] if argv else repr(command)} (the task's "
                              f"`build.command`; is it on PATH?)")
    try:
        proc = run_confined(argv, work, reads, BUILD_TIMEOUT_S)
        return proc.stdout + proc.stderr, proc.returncode == 0 and (work / "lib.so").is_file()
    except subprocess.TimeoutExpired:
        return f"build timed out after {BUILD_TIMEOUT_S} s", False


def run_confined(argv: list[str], work: Path, reads: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`argv` (nvcc, or the tools it runs) in `work`, confined (evaluator.buildbox): reads of
    the toolchain's and the system's folders and `reads`, writes of `work` only; its
    temporary files inside `work`. Its output as text (errors="replace": nvcc echoes source
    lines, and a candidate need not be UTF-8)."""
    tmp = work / "tmp"
    tmp.mkdir(exist_ok=True)
    try:
        # the compiler's library path (a module-loaded host compiler may need it) goes to the
        # tool under another name: the Python that confines it starts with no LD_* at all
        env = clean_env({"TMPDIR": str(tmp), LIBRARY_PATH_ENV: os.environ.get("LD_LIBRARY_PATH", "")})
        return subprocess.run(isolated_python("-m", "socratic.evaluator.buildbox", str(work), *reads, "--", *argv),
                              cwd=work, capture_output=True, text=True, errors="replace", timeout=timeout, env=env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class CommandNotFound(InputError):
    """The task's build command is not a program here (the caller names the task file)."""


def build_task_sources(task: Task, command: str) -> tuple[BuildResult, BuildResult]:
    """The task's own baseline and fp32 reference, built with `command` and their entry points
    checked: a reference that does not compile, or an entry name with a typo, is one line
    naming the file (a TaskError, exit 2), with --check-only too, before any GPU."""
    from socratic.evaluator.entry import missing_entry

    built = []
    for path, entry, what in ((task.baseline, task.entry, "baseline"),
                              (task.reference.source, task.reference.entry, "reference")):
        result = build(path, command, label=what)
        if not result.ok:
            raise TaskError(f"{path}: the task's {what} does not build: {first_error(result.log)}")
        if error := missing_entry(result.library, entry):
            key = "entry" if what == "baseline" else "reference.entry"
            raise TaskError(f"{_key_at(task, key)}: `{key}` = {entry!r}: {path.name}: {error}")
        built.append(result)
    return built[0], built[1]


def _key_at(task: Task, key: str) -> str:
    """task.toml:LINE of `key`, for a message that points at what to edit."""
    from socratic.taskfile import KeyLines

    try:
        line = KeyLines(task.path.read_text(encoding="utf-8")).line(key)
    except (OSError, UnicodeDecodeError):
        line = None
    return f"{task.path}:{line}" if line else str(task.path)


def first_error(log: str) -> str:
    """The compiler's first error line (else the log's start), for a one-line message."""
    lines = log.splitlines()
    line = next((ln for ln in lines if " error" in ln.lower() or ln.lower().startswith("error")),
                next((ln for ln in lines if "error" in ln.lower()), log.strip()[:200]))
    return line.strip()[:300]


def libcuda_stub_dir() -> Path | None:
    """A folder holding an empty libcuda.so with the driver's soname (libcuda.so.1), made
    once with the host C compiler; None when there is no compiler to make it."""
    folder = cache_root().parent / "libcuda-stub"
    stub = folder / "libcuda.so"
    if stub.is_file():
        return folder
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".libcuda.{os.getpid()}.so"
    proc = subprocess.run([cc, "-shared", "-nostdlib", "-Wl,-soname,libcuda.so.1", "-x", "c", os.devnull,
                           "-o", str(tmp)], capture_output=True, timeout=60)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, stub)
    return folder


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_resources(log: str) -> list[KernelResources]:
    """Per-kernel registers, spills, shared memory and stack from `ptxas -v` output."""
    kernels: dict[str, KernelResources] = {}
    current: str | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = m.group(1)
            kernels.setdefault(current, _no_resources(current))
        elif m := _PROPS.search(line):
            current = m.group(1)
            kernels.setdefault(current, _no_resources(current))
        elif current and (m := _FRAME.search(line)):
            r = kernels[current]
            r.stack_bytes, r.spill_stores, r.spill_loads = map(int, m.groups())
        elif current and (m := _USED.search(line)):
            r = kernels[current]
            r.registers = int(m.group(1))
            r.shared_bytes = int(m.group(2) or 0)
    names = _demangle(list(kernels))
    return [replace(r, kernel=names.get(r.kernel, r.kernel))
            for r in kernels.values() if not r.kernel.startswith("__internal")]


def _no_resources(kernel: str) -> KernelResources:
    """A kernel's line before ptxas reported its figures."""
    return KernelResources(kernel=kernel, registers=0, spill_stores=0, spill_loads=0, shared_bytes=0,
                           stack_bytes=0)


def _demangle(names: list[str]) -> dict[str, str]:
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {}
    try:
        out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(names, out.splitlines(), strict=False))
