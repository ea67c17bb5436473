"""Assemble a single-file candidate.

    make.py NAME [MACRO=VALUE ...]   -> cands/NAME.cu with those macros (each given once)
    make.py NAME                     -> cands/NAME.cu from the line NAME in lines.txt
"""

import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent


def named_lines(path: Path) -> dict[str, list[str]]:
    """lines.txt: NAME: [BASE] MACRO=VALUE ... [-MACRO ...], each resolved to its macros."""
    resolved: dict[str, dict[str, str]] = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        name, sep, rest = text.partition(":")
        words = rest.split()
        if not sep or not name.strip():
            sys.exit(f"make.py: {path}:{n}: not 'NAME: [BASE] MACRO=VALUE ...'")
        macros: dict[str, str] = {}
        if words and "=" not in words[0] and not words[0].startswith("-"):
            if words[0] not in resolved:
                sys.exit(f"make.py: {path}:{n}: base {words[0]!r} is not an earlier line")
            macros = dict(resolved[words.pop(0)])
        for w in words:
            if w.startswith("-"):
                if macros.pop(w[1:], None) is None:
                    sys.exit(f"make.py: {path}:{n}: {w[1:]} is not in the base")
            elif "=" in w:
                key, value = w.split("=", 1)
                macros[key] = value
            else:
                sys.exit(f"make.py: {path}:{n}: {w!r} is neither MACRO=VALUE nor -MACRO")
        resolved[name.strip()] = macros
    return {name: [f"{k}={v}" for k, v in macros.items()] for name, macros in resolved.items()}


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    name, defines = argv[0], argv[1:]
    if not defines:
        known = named_lines(here / "lines.txt")
        if name not in known:
            sys.exit(f"make.py: {name!r} has no line in {here / 'lines.txt'}; give its macros")
        defines = known[name]
    gen = subprocess.run([sys.executable, str(here / "gen_wgmma.py")], capture_output=True, text=True, check=True).stdout
    hopper = (here / "src/hopper_part.cuh").read_text().replace('#include "wgmma_gen.cuh"\n', gen)
    # the one-CTA-a-tile kernel (hopper_tile.cuh) goes in only where a candidate asks for it
    tile = (here / "src/hopper_tile.cuh").read_text().replace('#include "wgmma_gen.cuh"\n', gen)
    head = "".join(f"#define {d.split('=')[0]} {d.split('=')[1]}\n" for d in defines)
    with_tile = any(d.startswith("HOP_TILE_LONG_128=") and not d.endswith("=0") for d in defines)
    text = (here / "src/header.txt").read_text() + head + (here / "src/fa2_part.cuh").read_text() + (tile if with_tile else "") + hopper
    (here / "cands").mkdir(exist_ok=True)
    (here / "cands" / f"{name}.cu").write_text(text)
    print(here / "cands" / f"{name}.cu")


if __name__ == "__main__":
    main(sys.argv[1:])
