#!/usr/bin/env bash
# Any NVIDIA GPU (issue 43), checked on a GPU node: the RMSNorm task built for the arch the
# device reports (no --arch) evaluates correct and ~1.00x against itself; the attention task
# builds for sm_90a on Hopper (or refuses in one line elsewhere); a template task from
# `socratic task new` evaluates too. Results under $OUT; a table is printed last.
# Run from the checkout: OUT=/tmp/arch bash benchmarks/arch_check.sh
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export SOCRATIC_CACHE="$OUT/cache"
nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader > "$OUT/gpu.txt" 2>&1
run() {  # name, then the eval arguments
  local name=$1; shift
  $PY -m socratic eval "$@" --json > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo $? > "$OUT/$name.rc"
}
run rmsnorm rmsnorm --hidden 2
run attention_check flash_attn_fwd --check-only
(cd "$OUT" && $PY -m socratic task new mysoftmax > /dev/null)
run mysoftmax "$OUT/mysoftmax" --scenarios smoke
$PY - "$OUT" <<'PY'
import json, re, sys
from pathlib import Path
out = Path(sys.argv[1])
print("gpu:", (out / "gpu.txt").read_text().strip())
print(f"{'run':<18} {'rc':>3} {'arch':<8} {'correct':>8} {'geomean':>8} {'min':>7}  note")
for name in ("rmsnorm", "attention_check", "mysoftmax"):
    rc = (out / f"{name}.rc").read_text().strip()
    try:
        d = json.loads((out / f"{name}.json").read_text())
    except ValueError:
        err = (out / f"{name}.err").read_text().strip().splitlines()
        print(f"{name:<18} {rc:>3} {'-':<8} {'-':>8} {'-':>8} {'-':>7}  {err[-1][:90] if err else ''}")
        continue
    m = re.search(r"code=(sm_\w+)", d["build"]["command"])
    s = d["summary"]
    gm = f"{s['geomean_speedup']:.3f}" if s.get("geomean_speedup") else "-"
    mn = f"{s['min_speedup']:.3f}" if s.get("min_speedup") else "-"
    print(f"{name:<18} {rc:>3} {m.group(1) if m else '?':<8} {s['n_correct']:>4}/{s['n']:<3} {gm:>8} {mn:>7}  "
          f"{'build ' + ('ok' if d['build']['ok'] else 'FAILED')}")
PY
