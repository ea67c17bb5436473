"""Layered check for the banned libraries (CUTLASS, CuTe, cuBLAS/cuBLASLt, cuDNN) and for
ways around the one-file rule: the Python C-API of the evaluator that loads the library,
GPU code loaded or compiled at run time, and binaries embedded in the build.

Each layer looks at a different artefact, so that hiding from one (a macro, a pasted
header, a dlopen by string) is caught by another: the source with comments stripped, the
preprocessed candidate (macros expanded; only lines from the candidate itself), the
compiler's dependency list, the device code's symbols (kept cubins and PTX), the host
library's symbols, its NEEDED entries, strings naming banned libraries (dlopen), ELF or
fatbin images outside the CUDA fatbin sections, and, at run time, the libraries actually
mapped into the evaluation process (evaluator.worker). The checks fail closed: a missing
inspection tool or a failed preprocessing is itself a hit.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from socratic.contracts import BanHit
from socratic.evaluator.build import BuildResult, find_nvcc, run_confined
from socratic.evaluator.plan import PlanError, fatbin_images

# A banned library is recognised by what only its use leaves in an artefact, never by its
# letters alone: a helper of the candidate's own named `cudnn_style_epilogue` or
# `cublas_like_tile` passes. Three kinds of evidence, each looked for where it can occur:
#   code    names in the source, the preprocessed candidate and the device and host symbols:
#           the C APIs' camel-case names (cublasSgemm, cublasLtMatmul, cudnnCreate,
#           cublasHandle_t; a digit may precede one, as a mangled name's length does), the C++
#           namespaces (`cutlass::`, `namespace cute`, an alias of one, the mangled `7cutlass`
#           or `4cute`) and the CUTLASS_/CUTE_ macros that mark pasted CUTLASS or CuTe code
#   header  a path component named like the library's headers, in an #include or in the
#           compiler's dependency list (a candidate's own header is banned there anyway)
#   shared  the library's shared-object file name (NEEDED, dlopen strings, mapped libraries)
_START = r"(?<![A-Za-z0-9_])"     # at the start of an identifier
_API = r"(?<![A-Za-z_])"          # the same, or right after a mangled name's length


def _namespace(name: str) -> str:
    return (rf"{_START}{name}\s*::|\bnamespace\s+{name}\b|\bnamespace\s+\w+\s*=\s*(?:::\s*)?{name}\b"
            rf"|(?<![0-9]){len(name)}{name}(?=[0-9EI])")


@dataclass(frozen=True)
class Library:
    code: re.Pattern[str]
    header: re.Pattern[str] | None
    shared: re.Pattern[str] | None


def _library(code: str, header: str | None, shared: str | None) -> Library:
    return Library(re.compile(code), re.compile(header, re.I) if header else None,
                   re.compile(shared, re.I) if shared else None)


_COMPONENT_END = r"[^/]*(?:/|$)"   # the rest of a path component that starts with the name
LIBRARIES: dict[str, Library] = {
    "CUTLASS": _library(_namespace("cutlass") + rf"|{_START}CUTLASS_[A-Z]",
                        rf"(?:^|/)cutlass{_COMPONENT_END}", r"libcutlass\w*\.so[.\d]*"),
    # CuTe: not words that merely contain "cute", such as execute
    "CuTe": _library(_namespace("cute") + rf"|{_START}CUTE_[A-Z]", r"(?:^|/)cute(?:/|\.h|\.hpp|$)", None),
    "cuBLASLt": _library(rf"{_API}cublasLt[A-Z]", rf"(?:^|/)cublasLt{_COMPONENT_END}", r"libcublasLt\w*\.so[.\d]*"),
    "cuBLAS": _library(rf"{_API}cublas(?!Lt)[A-Z]|" + _namespace("cublasdx"),
                       rf"(?:^|/)cublas(?!Lt){_COMPONENT_END}", r"libcublas(?!Lt)\w*\.so[.\d]*"),
    "cuDNN": _library(rf"{_API}cudnn[A-Z]|" + _namespace("cudnn_frontend"),
                      rf"(?:^|/)cudnn{_COMPONENT_END}", r"libcudnn\w*\.so[.\d]*"),
}
SHARED_BYTES = {label: re.compile(lib.shared.pattern.encode(), re.I)
                for label, lib in LIBRARIES.items() if lib.shared}
# the header named by an #include (or __has_include) in a line of source
INCLUDE = re.compile(r'(?:^\s*(?:#|%:)\s*(?:include|include_next|import)\s*|__has_include(?:_next)?\s*\(\s*)'
                     r'[<"]([^>"\n]+)[>"]')
# shared libraries a candidate may link against (NEEDED); anything else is a hit
NEEDED_ALLOWED = re.compile(
    r"^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[-\w]*|libcuda|libcudart)\.so(\.[\d.]+)?$"
)

# Python C-API: a candidate is loaded in-process by the (Python) evaluator and could rewrite it
PY_SYMBOL = re.compile(r"^_?Py[A-Z_]")
_ID = _START
PY_NAME = re.compile(_ID + r"_?Py(?:[A-Z][A-Za-z0-9]*)?_\w+|(?i:libpython)")
PY_NAME_BYTES = re.compile(rb"(?<![A-Za-z0-9_])_?Py(?:[A-Z][A-Za-z0-9]*)?_[A-Za-z]\w*|(?i:libpython)[\w.]*")
# GPU code loaded or compiled at run time (from outside the build); static cudart defines
# cudaLibraryLoad* and cudaGetDriverEntryPoint* itself (local symbols), so an undefined or
# exported one is the candidate's
RUNTIME_CODE_SYMBOL = re.compile(
    r"^(cuModuleLoad|cuLibraryLoad|cuLinkCreate|cuLinkAdd|cuLinkComplete|cudaLibraryLoad|nvrtc|nvJitLink"
    r"|nvPTXCompiler|cuGetProcAddress|cudaGetDriverEntryPoint|cuModuleGetFunction|cuLibraryGetKernel"
    r"|cuGetExportTable|cudaGetExportTable)")
RUNTIME_CODE_NAME = re.compile(
    _ID + r"(cuModuleLoad\w*|cuLibraryLoad\w*|cuLinkCreate\w*|cuLinkAdd\w*|cudaLibraryLoad\w*|nvrtc\w*"
    r"|nvJitLink\w*|nvPTXCompiler\w*|cuGetProcAddress\w*|cudaGetDriverEntryPoint\w*|cuModuleGetFunction"
    r"|cuLibraryGetKernel|cuGetExportTable|cudaGetExportTable|dlopen|dlmopen|dlsym|dlvsym|RTLD_\w+)(?![A-Za-z0-9_])",
    re.I)
RUNTIME_CODE_LIB_BYTES = re.compile(rb"lib(nvrtc|nvJitLink|nvptxcompiler)[\w.]*", re.I)
# bytes brought in whole (assembler .incbin) or placed in a section of the candidate's choosing
# (any case: the assembler takes `.INCBIN` and `.SECTION` as well)
EMBED_NAME = re.compile(r"\.incbin|(?<![A-Za-z0-9_)\]])\.(?:push)?section\b"
                        r"|__attribute__\s*\(\(\s*(?:__)?section(?:__)?\b"
                        r"|__declspec\s*\(\s*allocate|#\s*pragma\s+(?:data_seg|section|clang\s+section)", re.I)
SQUEEZED_EMBED = re.compile(r"\.incbin|(?<![A-Za-z0-9_)\]])\.(?:push)?section\b", re.I)
# a #line directive or GNU linemarker moves the candidate's lines to another file name
LINE_DIRECTIVE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*(?:line\b|\d)", re.M)
# CUDA fatbin sections (the kernels' own device code and static cudart's); anything else
# holding an ELF or fatbin image was embedded by hand
FATBIN_SECTIONS = {".nv_fatbin", ".nvFatBinSegment"}
MAGICS = {b"\x7fELF": "ELF image", b"\x50\xed\x55\xba": "fatbin image"}


def _hit(library: str, layer: str, where: str, detail: str) -> BanHit:
    """One hit; layer: source|preprocessed|depfile|device-symbols|host-symbols|host-binary|
    needed|dlopen|runtime|checker."""
    return BanHit(library=library, layer=layer, where=where, detail=detail)


def _code_match(text: str) -> list[tuple[str, str]]:
    """(library, matched text) for the banned names used in code or symbols."""
    return [(label, m.group(0)) for label, lib in LIBRARIES.items() if (m := lib.code.search(text))]


def _header_libraries(path: str) -> list[str]:
    return [label for label, lib in LIBRARIES.items() if lib.header and lib.header.search(path)]


def _shared_match(name: str) -> list[tuple[str, str]]:
    """(library, matched text) for the banned shared-object names in a string or file name."""
    return [(label, m.group(0)) for label, lib in LIBRARIES.items() if lib.shared and (m := lib.shared.search(name))]


_RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}
_RAW_OPEN = re.compile(r'"([^ ()\\\t\v\f\n]{0,16})\(')


def strip_comments(code: str) -> str:
    """Remove // and /* */ comments, keeping string literals (raw ones too) and every
    newline (so line numbers survive). Identifiers and numbers are read whole, so that a
    digit separator (1'000) is not taken for a character literal."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "/" and i + 1 < n and code[i + 1] == "/":
            j = code.find("\n", i)
            while j > 0 and code[j - 1] == "\\":          # a continued // comment goes on
                j = code.find("\n", j + 1)
            out.append("\n" * (code[i:j].count("\n") if j >= 0 else 0))
            i = n if j < 0 else j
        elif c == "/" and i + 1 < n and code[i + 1] == "*":
            j = code.find("*/", i + 2)
            chunk = code[i:] if j < 0 else code[i:j + 2]
            out.append(" " + "\n" * chunk.count("\n"))
            i = n if j < 0 else j + 2
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (code[j].isalnum() or code[j] == "_"):
                j += 1
            word = code[i:j]
            m = _RAW_OPEN.match(code, j) if word in _RAW_PREFIXES else None
            if m:                                       # R"delim( ... )delim"
                end = code.find(")" + m.group(1) + '"', m.end())
                j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(code[i:j])
            i = j
        elif c.isdigit() or (c == "." and i + 1 < n and code[i + 1].isdigit()):
            j = i + 1                                   # a pp-number, digit separators included
            while j < n:
                if code[j] in "eEpP" and j + 1 < n and code[j + 1] in "+-":
                    j += 2
                elif code[j].isalnum() or code[j] in "._":
                    j += 1
                elif code[j] == "'" and j + 1 < n and (code[j + 1].isalnum() or code[j + 1] == "_"):
                    j += 2
                else:
                    break
            out.append(code[i:j])
            i = j
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


def _labels_in(text: str) -> list[tuple[str, str]]:
    """(library label, matched text) for everything the source layers look for in `text`."""
    found = _code_match(text) + _shared_match(text)
    for m in INCLUDE.finditer(text):
        found += [(lib, m.group(1)) for lib in _header_libraries(m.group(1))]
    for label, pat in (("python-api", PY_NAME), ("runtime-code", RUNTIME_CODE_NAME), ("embedded-binary", EMBED_NAME)):
        if hit := pat.search(text):
            found.append((label, hit.group(0)))
    return found


def _squeezed_labels(code: str) -> list[str]:
    """Names assembled from pieces: the code without spaces, pasting or string splits."""
    squeezed = re.sub(r"\s+|##|\"\s*\"", "", code)
    found = list(dict.fromkeys(lib for lib, _ in _code_match(squeezed) + _shared_match(squeezed)))
    if SQUEEZED_EMBED.search(squeezed):
        found.append("embedded-binary")
    if re.search(r"libpython|PyRun_|PyGILState_|PyImport_|PyEval_", squeezed):
        found.append("python-api")
    if re.search(r"dlopen|dlsym|nvrtc|nvJitLink|cuModuleLoad|cuLibraryLoad|cudaLibraryLoad", squeezed):
        found.append("runtime-code")
    return found


def check_source(source: Path, display: str) -> list[BanHit]:
    code = strip_comments(source.read_text(encoding="utf-8", errors="replace"))
    hits = []
    for number, line in enumerate(code.splitlines(), 1):
        for lib, _ in _labels_in(line):
            hits.append(_hit(lib, "source", f"{display}:{number}", line.strip()[:160]))
    # token pasting or spaced-out names inside one line: look at the code without spaces too
    for lib in _squeezed_labels(code):
        if not any(h.library == lib for h in hits):
            hits.append(_hit(lib, "source", display, "name assembled from pieces (macro pasting or split strings)"))
    joined = code.replace("\\\n", "")
    for m in LINE_DIRECTIVE.finditer(joined):
        number = joined.count("\n", 0, m.start()) + 1
        hits.append(_hit("line-directive", "source", f"{display}:{number}",
                           "#line or linemarker: hides the candidate's lines behind another file name"))
    return hits


def _toolkit_roots() -> list[str]:
    cuda = Path(find_nvcc()).resolve().parent.parent
    roots = [str(cuda), "/usr/include", "/usr/lib/gcc", "/usr/local/cuda", "/usr/lib/x86_64-linux-gnu",
             "/usr/lib64", "/usr/lib/aarch64-linux-gnu"]
    return [r.rstrip("/") + "/" for r in roots]


def check_depfile(depfile: Path, source: Path) -> list[BanHit]:
    """Every file the compiler read, but the candidate itself: nvcc lists the source first
    (as it was in the temporary build directory, `<key>.<random>/candidate.cu`, renamed to
    `<key>/` afterwards); any other entry, a second copy of the candidate included, is checked."""
    if not depfile.is_file():
        return [_hit("unknown", "checker", str(depfile), "compiler dependency list missing")]
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    deps = [d for d in text.split(" : ", 1)[-1].split() if d.strip()]
    roots = _toolkit_roots()
    hits = []
    if deps and _is_build_source(deps[0], source):
        deps = deps[1:]
    else:
        hits.append(_hit("unknown", "checker", str(depfile), "dependency list does not start with the candidate"))
    for dep in deps:
        resolved = os.path.realpath(dep)
        for lib in _header_libraries(dep):
            hits.append(_hit(lib, "depfile", dep, "header of a banned library"))
        if not any(resolved.startswith(r) for r in roots):
            hits.append(_hit("foreign-header", "depfile", dep,
                               "header outside the CUDA toolkit and system: a candidate is one file"))
    return hits


def _is_build_source(dep: str, source: Path) -> bool:
    path, key = Path(dep), source.parent.name
    return (path.name == source.name and (path.parent.name == key or path.parent.name.startswith(key + "."))
            and os.path.realpath(path.parent.parent) == os.path.realpath(source.parent.parent))


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
        return [_hit("unknown", "checker", str(keep_dir), "no device code (cubin) kept by the build")]
    for path in [*cubins, *sorted(keep_dir.glob("*.ptx"))]:
        if path.suffix == ".cubin":
            out, err = _run_tool(["readelf", "-sW", str(path)])
            if out is None:
                return [_hit("unknown", "checker", str(path), err)]
            symbols = [line.split()[-1] for line in out.splitlines() if line.strip() and line.split()[-1] != "Name"]
        else:
            symbols = re.findall(r"\.(?:entry|func)\s+([\w$.]+)", path.read_text(errors="replace"))
        for sym in symbols:
            for lib, _ in _code_match(sym):
                hits.append(_hit(lib, "device-symbols", path.name, sym[:160]))
    return _dedupe(hits)


def check_device_origin(library: Path, keep_dir: Path) -> list[BanHit]:
    """Every device-code image in the library's .nv_fatbin is one this build's compiler made
    (a fatbin it kept, byte for byte): the judge loads them all, so an image placed there by
    hand (an `.incbin` of a fatbin, CUTLASS's or cuBLAS's, from a folder the build can read)
    would run while its device symbols were never checked."""
    made = {p.read_bytes() for p in keep_dir.glob("*.fatbin")}
    try:
        images = fatbin_images(library)
    except PlanError as exc:
        return [_hit("unknown", "checker", library.name, str(exc))]
    return [_hit("embedded-binary", "device-origin", library.name,
                 f"device-code image {k + 1} of {len(images)} in .nv_fatbin ({len(img)} bytes) is not one "
                 f"this build compiled from the candidate's source")
            for k, img in enumerate(images) if img not in made]


def check_host_library(library: Path) -> list[BanHit]:
    hits: list[BanHit] = []
    for flags in (["-D"], []):
        out, err = _run_tool(["nm", *flags, str(library)])
        if out is None:
            return [_hit("unknown", "checker", str(library), err)]
        for line in out.splitlines():
            parts = line.split()
            sym = parts[-1] if parts else ""
            kind_letter = parts[-2] if len(parts) >= 2 else ""
            kind = "undefined" if kind_letter in ("U", "w", "v") else "defined"
            for lib, _ in _code_match(sym):
                hits.append(_hit(lib, "host-symbols", library.name, f"{kind} symbol {sym[:140]}"))
            bare = sym.split("@", 1)[0]
            if PY_SYMBOL.match(bare):
                hits.append(_hit("python-api", "host-symbols", library.name, f"{kind} symbol {sym[:140]}"))
            # a local definition is static cudart's own; an undefined or exported one is the candidate's
            if RUNTIME_CODE_SYMBOL.match(bare) and (kind == "undefined" or kind_letter.isupper()):
                hits.append(_hit("runtime-code", "host-symbols", library.name, f"{kind} symbol {sym[:140]}"))
    out, err = _run_tool(["readelf", "-dW", str(library)])
    if out is None:
        return [_hit("unknown", "checker", str(library), err)]
    for needed in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out):
        if not NEEDED_ALLOWED.match(needed):
            libs = [lib for lib, _ in _shared_match(needed)] or ["not-allowed"]
            for lib in libs:
                hits.append(_hit(lib, "needed", library.name, f"links {needed} (outside the allow-list)"))
    data = library.read_bytes()
    for lib, pattern in SHARED_BYTES.items():
        for match in pattern.finditer(data):
            name = match.group(0).decode(errors="replace")[:80]
            hits.append(_hit(lib, "dlopen", library.name, f"names the library {name!r} (dlopen target)"))
    for match in PY_NAME_BYTES.finditer(data):
        name = match.group(0).decode(errors="replace")[:80]
        hits.append(_hit("python-api", "dlopen", library.name, f"names {name!r} (libpython or a C-API function)"))
    for match in RUNTIME_CODE_LIB_BYTES.finditer(data):
        name = match.group(0).decode(errors="replace")[:80]
        hits.append(_hit("runtime-code", "dlopen", library.name, f"names the library {name!r} (run-time compiler)"))
    hits += check_embedded(library, data)
    return _dedupe(hits)


def check_embedded(library: Path, data: bytes | None = None) -> list[BanHit]:
    """ELF or fatbin images anywhere in the library but the CUDA fatbin sections."""
    out, err = _run_tool(["readelf", "-SW", str(library)])
    if out is None:
        return [_hit("unknown", "checker", str(library), err)]
    data = library.read_bytes() if data is None else data
    hits = []
    sections = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", out, re.M)
    if not sections:
        return [_hit("unknown", "checker", str(library), "no section headers read")]
    for name, kind, offset, size in sections:
        if kind == "NOBITS" or name in FATBIN_SECTIONS:
            continue
        start, length = int(offset, 16), int(size, 16)
        chunk = data[start:start + length]
        for magic, what in MAGICS.items():
            at = chunk.find(magic)
            if at >= 0:
                hits.append(_hit("embedded-binary", "host-binary", library.name,
                                   f"{what} in section {name} at offset {start + at:#x}"))
    return hits


# preprocessed candidate ---------------------------------------------------------------
PREPROCESSED_CACHE = "preprocessed.hits.json"
PREPROCESSED_VERSION = 1
_DROP_WITH_VALUE = {"-o", "-MF", "-keep-dir", "--keep-dir", "-Xptxas", "--ptxas-options", "-Xlinker",
                    "--linker-options", "-odir", "--output-directory", "-MT", "-MQ", "-l", "-L"}
_DROP = {"-MD", "-MMD", "-M", "-MM", "-keep", "--keep", "-shared", "--shared", "-c", "--compile",
         "-lineinfo", "-G", "-dc", "-dw", "-rdc=true", "--relocatable-device-code=true", "-cubin", "-ptx"}


def preprocess_argv(build_result: BuildResult) -> list[str]:
    """The build's own nvcc command (same -gencode, -I, -D, -std), turned into `nvcc -E` of
    the cached candidate copy."""
    argv = shlex.split(build_result.command)
    work_src = None
    if "-o" in argv and argv.index("-o") + 1 < len(argv):
        work_src = os.path.join(os.path.dirname(argv[argv.index("-o") + 1]), "candidate.cu")
    out: list[str] = []
    skip = False
    for tok in argv[1:]:
        if skip:
            skip = False
            continue
        if tok in _DROP_WITH_VALUE:
            skip = True
            continue
        if tok in _DROP or tok.startswith(("-o=", "-MF=", "-Xptxas=", "--ptxas-options=", "-Xlinker=", "-l", "-L",
                                           "--keep-dir=", "-keep-dir=")) or tok == work_src:
            continue
        out.append(tok)
    return [find_nvcc(), *out, "-E", str(build_result.source)]


def candidate_lines(preprocessed: str) -> list[tuple[int, str]]:
    """(line, text) of the preprocessed output that come from the candidate itself: the
    main file, at include depth 0 (a linemarker with flag 1 enters a header, flag 2 leaves
    it), whatever name a #line gives it."""
    depth, number, lines = 0, 0, []
    for raw in preprocessed.splitlines():
        m = re.match(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$', raw)
        if m:
            flags = m.group(3).split()
            if "1" in flags:
                depth += 1
            elif "2" in flags:
                depth = max(0, depth - 1)
            number = int(m.group(1))
            continue
        if depth == 0:
            if raw.strip():
                lines.append((number, raw))
            number += 1
    return lines


def check_preprocessed(build_result: BuildResult, display: str) -> list[BanHit]:
    """The candidate after the preprocessor (macros expanded, pasting done), its own lines
    only; the result is cached beside the build, so a repeated check costs nothing."""
    assert build_result.dir is not None
    cache = build_result.dir / PREPROCESSED_CACHE
    doc = None
    try:
        doc = json.loads(cache.read_text())
        if doc.get("version") != PREPROCESSED_VERSION:
            doc = None
    except (OSError, ValueError):
        doc = None
    if doc is None:
        argv = preprocess_argv(build_result)
        try:
            # confined as the build is: a file it could not read there (`__has_include`) is
            # not read here either
            includes = [argv[k + 1] for k, tok in enumerate(argv[:-1]) if tok == "-I"]
            includes += [tok[2:] for tok in argv if tok.startswith("-I") and len(tok) > 2]
            proc = run_confined(argv, build_result.dir, includes, 120)
            error = None if proc.returncode == 0 else (proc.stderr.strip()[-300:] or f"exit {proc.returncode}")
            lines = candidate_lines(proc.stdout) if error is None else []
        except (OSError, subprocess.SubprocessError) as exc:
            error, lines = f"{type(exc).__name__}: {exc}", []
        doc = {"version": PREPROCESSED_VERSION, "command": shlex.join(argv), "error": error, "lines": lines}
        if error is None:
            fd, tmp = tempfile.mkstemp(prefix=".pp.", dir=build_result.dir)
            with os.fdopen(fd, "w") as fh:
                json.dump(doc, fh)
            os.replace(tmp, cache)
    if doc["error"]:
        return [_hit("unknown", "checker", display, f"preprocessing failed: {doc['error']}")]
    hits = []
    for number, text in doc["lines"]:
        for lib, _ in _labels_in(text):
            hits.append(_hit(lib, "preprocessed", f"{display}:{number}", text.strip()[:160]))
    for lib in _squeezed_labels("\n".join(text for _, text in doc["lines"])):
        if not any(h.library == lib for h in hits):
            hits.append(_hit(lib, "preprocessed", display, "name assembled from pieces (split strings)"))
    return hits


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
    hits += check_preprocessed(build, display)
    hits += check_depfile(build.dir / "deps.d", build.source)
    hits += check_device_code(build.dir / "keep")
    hits += check_device_origin(build.library, build.dir / "keep")
    hits += check_host_library(build.library)
    return hits


def runtime_libraries() -> list[str]:
    """Paths of the shared objects mapped into this process right now."""
    return process_libraries("self") or []


def process_libraries(pid: int | str) -> list[str] | None:
    """Paths of the shared objects mapped into process `pid` now; None when its map
    cannot be read."""
    paths = set()
    try:
        with open(f"/proc/{pid}/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 6 and parts[5].startswith("/"):
                    paths.add(parts[5])
    except OSError:
        return None
    return sorted(paths)


def check_runtime(loaded: list[str]) -> list[BanHit]:
    """Banned libraries among the shared objects mapped into the evaluation process."""
    return [_hit(found[0][0], "runtime", p, "mapped into the evaluation process")
            for p in loaded if (found := _shared_match(os.path.basename(p)))]
