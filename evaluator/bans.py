"""Layered check for the banned libraries: CUTLASS, CuTe, cuBLAS/cuBLASLt and cuDNN.

Each layer looks at a different artefact, so that hiding from one (a macro, a pasted
header, a dlopen by string) is caught by another: the source with comments stripped, the
compiler's dependency list, the device code's symbols (kept cubins and PTX), the host
library's symbols, its NEEDED entries, strings naming banned libraries (dlopen), and, at
run time, the libraries actually mapped into the evaluation process (evaluator.worker).
The checks fail closed: a missing inspection tool is itself a hit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from evaluator.build import BuildResult, find_nvcc

# library label → pattern over identifiers, paths, symbols and strings
BANNED: dict[str, re.Pattern[str]] = {
    "CUTLASS": re.compile(r"cutlass", re.I),
    # CuTe: `cute::`, `namespace cute`, `<cute/...>`, and the mangled namespace `4cute`
    # (but not words that merely contain "cute", such as execute)
    "CuTe": re.compile(r"(?<![A-Za-z0-9_])cute\s*::|namespace\s+cute\b|[<\"/]cute/|(?<![0-9])4cute(?=[0-9EI])"),
    "cuBLASLt": re.compile(r"cublasLt", re.I),
    "cuBLAS": re.compile(r"cublas(?!Lt)", re.I),
    "cuDNN": re.compile(r"cudnn", re.I),
}
# shared libraries a candidate may link against (NEEDED); anything else is a hit
NEEDED_ALLOWED = re.compile(
    r"^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[-\w]*|libcuda|libcudart)\.so(\.[\d.]+)?$"
)
# mapped at run time: these names must never appear in the candidate's process
RUNTIME_BANNED = re.compile(r"lib(cublas|cublasLt|cudnn\w*|cutlass\w*)\.so", re.I)


@dataclass
class BanHit:
    library: str
    layer: str   # source|depfile|device-symbols|host-symbols|needed|dlopen|runtime|checker
    where: str
    detail: str

    def to_json(self) -> dict:
        return asdict(self)


def _libraries_in(text: str) -> list[str]:
    found = [name for name, pat in BANNED.items() if pat.search(text)]
    if "cuBLASLt" in found and "cuBLAS" in found and not re.search(r"cublas(?!Lt)", text, re.I):
        found.remove("cuBLAS")
    return found


def strip_comments(code: str) -> str:
    """Remove // and /* */ comments, keeping string literals and every newline (so line
    numbers survive)."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "/" and i + 1 < n and code[i + 1] == "/":
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and i + 1 < n and code[i + 1] == "*":
            j = code.find("*/", i + 2)
            chunk = code[i:] if j < 0 else code[i:j + 2]
            out.append("\n" * chunk.count("\n"))
            i = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and code[j] != c and code[j] != "\n":
                j += 2 if code[j] == "\\" else 1
            out.append(code[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_source(source: Path, display: str) -> list[BanHit]:
    code = strip_comments(source.read_text(encoding="utf-8", errors="replace"))
    # join backslash-continued lines for matching, but report the first line of each
    hits = []
    for number, line in enumerate(code.splitlines(), 1):
        for lib in _libraries_in(line):
            hits.append(BanHit(lib, "source", f"{display}:{number}", line.strip()[:160]))
    # token pasting or spaced-out names inside one line: look at the code without spaces too
    squeezed = re.sub(r"\s+|##|\"\s*\"", "", code)
    for lib in _libraries_in(squeezed):
        if not any(h.library == lib for h in hits):
            hits.append(BanHit(lib, "source", display, "name assembled from pieces (macro pasting or split strings)"))
    return hits


def _toolkit_roots() -> list[str]:
    cuda = Path(find_nvcc()).resolve().parent.parent
    roots = [str(cuda), "/usr/include", "/usr/lib/gcc", "/usr/local/cuda", "/usr/lib/x86_64-linux-gnu",
             "/usr/lib64", "/usr/lib/aarch64-linux-gnu"]
    return [r.rstrip("/") + "/" for r in roots]


def check_depfile(depfile: Path, source: Path) -> list[BanHit]:
    if not depfile.is_file():
        return [BanHit("unknown", "checker", str(depfile), "compiler dependency list missing")]
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    deps = [d for d in text.split(":", 1)[-1].split() if d.strip()]
    roots = _toolkit_roots()
    hits = []
    for dep in deps:
        resolved = os.path.realpath(dep)
        if os.path.basename(dep) == source.name:   # the candidate itself (built in a temp dir)
            continue
        for lib in _libraries_in(dep):
            hits.append(BanHit(lib, "depfile", dep, "header of a banned library"))
        if not any(resolved.startswith(r) for r in roots):
            hits.append(BanHit("foreign-header", "depfile", dep,
                               "header outside the CUDA toolkit and system: a candidate is one file"))
    return hits


def _run_tool(argv: list[str]) -> tuple[str | None, str]:
    tool = shutil.which(argv[0])
    if not tool:
        return None, f"{argv[0]} not found"
    proc = subprocess.run([tool, *argv[1:]], capture_output=True, text=True, errors="replace", timeout=120)
    return proc.stdout, proc.stderr


def check_device_code(keep_dir: Path) -> list[BanHit]:
    hits = []
    cubins = sorted(keep_dir.glob("*.cubin"))
    if not cubins:
        return [BanHit("unknown", "checker", str(keep_dir), "no device code (cubin) kept by the build")]
    for path in [*cubins, *sorted(keep_dir.glob("*.ptx"))]:
        if path.suffix == ".cubin":
            out, err = _run_tool(["readelf", "-sW", str(path)])
            if out is None:
                return [BanHit("unknown", "checker", str(path), err)]
            symbols = [line.split()[-1] for line in out.splitlines() if line.strip() and line.split()[-1] != "Name"]
        else:
            symbols = re.findall(r"\.(?:entry|func)\s+([\w$.]+)", path.read_text(errors="replace"))
        for sym in symbols:
            for lib in _libraries_in(sym):
                hits.append(BanHit(lib, "device-symbols", path.name, sym[:160]))
    return _dedupe(hits)


def check_host_library(library: Path) -> list[BanHit]:
    hits: list[BanHit] = []
    for flags in (["-D"], []):
        out, err = _run_tool(["nm", *flags, str(library)])
        if out is None:
            return [BanHit("unknown", "checker", str(library), err)]
        for line in out.splitlines():
            sym = line.split()[-1] if line.split() else ""
            for lib in _libraries_in(sym):
                kind = "undefined" if " U " in f" {line} " else "defined"
                hits.append(BanHit(lib, "host-symbols", library.name, f"{kind} symbol {sym[:140]}"))
    out, err = _run_tool(["readelf", "-dW", str(library)])
    if out is None:
        return [BanHit("unknown", "checker", str(library), err)]
    for needed in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out):
        if not NEEDED_ALLOWED.match(needed):
            libs = _libraries_in(needed) or ["not-allowed"]
            for lib in libs:
                hits.append(BanHit(lib, "needed", library.name, f"links {needed} (outside the allow-list)"))
    data = library.read_bytes()
    for match in re.finditer(rb"lib(cublas(?:Lt)?|cudnn\w*|cutlass\w*)[\w.]*", data, re.I):
        name = match.group(0).decode(errors="replace")
        for lib in _libraries_in(name):
            hits.append(BanHit(lib, "dlopen", library.name, f"names the library {name!r} (dlopen target)"))
    return _dedupe(hits)


def _dedupe(hits: list[BanHit]) -> list[BanHit]:
    seen, out = set(), []
    for h in hits:
        key = (h.library, h.layer, h.detail)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def static_checks(build: BuildResult, display: str) -> list[BanHit]:
    """All layers that need no GPU, for a successful build."""
    assert build.dir is not None
    hits = check_source(build.source, display)
    hits += check_depfile(build.dir / "deps.d", build.source)
    hits += check_device_code(build.dir / "keep")
    hits += check_host_library(build.library)
    return hits


def runtime_libraries() -> list[str]:
    """Paths of the shared objects mapped into this process right now."""
    paths = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 6 and parts[5].startswith("/"):
                    paths.add(parts[5])
    except OSError:
        pass
    return sorted(paths)


def check_runtime(loaded: list[str]) -> list[BanHit]:
    return [BanHit(_libraries_in(os.path.basename(p))[0] if _libraries_in(os.path.basename(p)) else "banned",
                   "runtime", p, "mapped into the evaluation process")
            for p in loaded if RUNTIME_BANNED.search(os.path.basename(p))]
