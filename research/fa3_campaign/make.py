"""Assemble a single-file candidate: make.py NAME [MACRO=VALUE ...] -> cands/NAME.cu"""

import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
name, defines = sys.argv[1], sys.argv[2:]
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
