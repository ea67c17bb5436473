"""What bounds attention's forward pass at each head dim on Hopper (issue 42's first question),
from the datasheet's pipes, beside FA3's measured speeds.

    python3 research/fa3_campaign/bounds.py [ANCHORS.json]   # default ../shared/data/h200-attention-anchors.json

Per (query, key) pair the forward pass does 4*d tensor-core FLOPs (Q K^T and P V), one
exponential (MUFU: 16 a clock per SM) and a few FP32 operations (scale and subtract the row
max, the max, the sum, the bf16 pack, the output's rescale: about 3.5 + d/128). Cycles per pair
per SM, at the datasheet's tensor rate (989.4 TFLOP/s dense bf16 = 4096 FLOP a clock per SM at
1.83 GHz on 132 SMs):
  tensor  d / 1024      exp  1 / 16      fp32  (3.5 + d/128) / 128
Two models: `overlap` (softmax entirely hidden under the other warpgroup's matrix products:
the slower pipe bounds) and `serial` (no overlap: tensor + exp). FA3's TFLOP/s (causal ones
count half the pairs, as the anchors do) is printed as a fraction of each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PEAK = 989.4e12          # dense bf16 FLOP/s, H100 SXM and H200 (datasheet)
CLOCK = 1.83e9           # the clock that peak assumes
SMS = 132
TENSOR = PEAK / (SMS * CLOCK)   # FLOP a clock per SM (4096)
MUFU = 16                # exponentials a clock per SM
FP32 = 128               # FP32 lanes a clock per SM


def cycles(d: int) -> dict[str, float]:
    """Cycles per (query, key) pair per SM, for each pipe."""
    return {"tensor": 4 * d / TENSOR, "exp": 1 / MUFU, "fp32": (3.5 + d / 128) / FP32}


def tflops(d: int, model: str) -> float:
    """The bound in TFLOP/s (4*d FLOPs a pair) under `model`."""
    c = cycles(d)
    per_pair = max(c["tensor"], c["exp"]) if model == "overlap" else c["tensor"] + c["exp"]
    return 4 * d / per_pair * SMS * CLOCK / 1e12


def main(path: Path) -> int:
    try:
        anchors = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"bounds.py: {path}: cannot read the anchors ({exc})", file=sys.stderr)
        return 2
    print(f"{'d':>4} {'tensor':>7} {'exp':>6} {'fp32':>6}   {'overlap':>8} {'serial':>7}   cycles/pair/SM; bounds TFLOP/s")
    for d in (64, 96, 128, 192, 256):
        c = cycles(d)
        print(f"{d:>4} {c['tensor']:7.4f} {c['exp']:6.4f} {c['fp32']:6.4f}   {tflops(d, 'overlap'):8.0f} {tflops(d, 'serial'):7.0f}")
    print(f"\nFA3 (anchors: {path.name}), TFLOP/s and its fraction of each bound")
    print(f"{'causal':>6} {'d':>4} {'s':>6} {'fa3':>6} {'/overlap':>9} {'/serial':>8} {'cudnn':>6}")
    for a in sorted(anchors, key=lambda a: (a["causal"], a["d"], a["s"])):
        d = a["d"]
        print(f"{int(a['causal']):>6} {d:>4} {a['s']:>6} {a['fa3']:6.0f} {a['fa3'] / tflops(d, 'overlap'):9.2f} "
              f"{a['fa3'] / tflops(d, 'serial'):8.2f} {a['cudnn']:6.0f}")
    return 0


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[3] / "shared" / "data" / "h200-attention-anchors.json"
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else default))
