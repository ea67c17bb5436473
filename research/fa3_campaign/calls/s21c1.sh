# call s21c1 (session 21, issue 42), one call of ~7-9 min (timeout_s 590): head dim 96's tiles.
# v100 reads 0.867x FA3 at d96 over the space (s16c1), its non-causal long draws 0.79-0.92x.
# Its d96 tiles (2 consumers, 128 x 128, docs/research/hd96_192.md) were reasoned, never timed;
# FA3 runs d96 with 3 consumers (192-row Q tiles) and 144-key tiles (P through shared memory).
# Each variant is the shipped kernel with #defines put first (its knobs are #ifndef), timed on
# the d96 draws among the first DRAWS of seed SEED (23 of 160 at 410041), FA3 beside it.
# Variants that build with no spills here (nvcc 13, sm_90a): nc3bn96, nc3bn112, bn144, bn176.
#   bash research/fa3_campaign/calls/s21c1.sh    (from the repository root; .whl, .whl_test carried)
#   BASE=research/fa3_campaign/cands/v102.cu bash ...   (the variants over another kernel, cands/ carried)
T0=$(date +%s)
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH PYTHONUNBUFFERED=1
PY=/tmp/venv/bin/python
SEED=${SEED:-410041}; DRAWS=${DRAWS:-160}; BUDGET=${BUDGET:-560}
D=/tmp/s21c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
IDS=$($PY -m socratic eval flash_attn_fwd --list --space $DRAWS --seed $SEED | grep -oE "space-[0-9]+-[0-9]+-d96-[^ ]+" | paste -sd, -)
echo "d96 draws: $(echo $IDS | tr , '\n' | grep -c .)"
ev() {  # ev NAME FILE: the d96 draws, timed, FA3/cuDNN/FA2 beside
  local name=$1 f=$2 lim=$(( BUDGET - ($(date +%s) - T0) - 10 )); local t=$(date +%s)
  [ $lim -lt 40 ] && { echo "$name: skipped (budget spent)"; return; }
  timeout $(( lim < 130 ? lim : 130 )) $PY -m socratic eval flash_attn_fwd --candidate $f --hidden 0 --timeout 30 --json --scenarios $IDS > $D/evals/$name.json 2> $D/logs/$name.err
  echo "$name rc=$? $(( $(date +%s) - t ))s"
}
for v in ${VARIANTS-v100: nc3bn96:HOP_NC_96=3,HOP_BN_96=96 nc3bn112:HOP_NC_96=3,HOP_BN_96=112 bn144:HOP_BN_96=144}; do
  name=${v%%:*}; f=$D/$name.cu
  echo "${v#*:}" | tr , '\n' | grep . | sed 's/^/#define /; s/=/ /' > $f; cat ${BASE:-tests/candidates/fa3_h200_best.cu} >> $f
  ev $name $f
done
$PY - $D/evals/*.json <<'PYEOF'
import json, math, sys
runs = {}
for path in sys.argv[1:]:
    try: doc = json.load(open(path))
    except Exception: continue
    runs[path.split("/")[-1][:-5]] = {s["id"]: s for s in doc["scenarios"]}
names = list(runs); ids = [i for i in next(iter(runs.values()), {})]
def ratio(s): return ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup")
print("%-52s" % "draw (speedup vs FA3)" + "".join("%12s" % n for n in names))
for i in ids:
    print("%-52s" % i[:52] + "".join("%12s" % ("%.3f" % r if (r := ratio(runs[n].get(i))) else "-") for n in names))
row = []
for n in names:
    rs = [r for i in ids if (r := ratio(runs[n].get(i)))]
    ok = sum(1 for i in ids if (runs[n].get(i) or {}).get("correct"))
    row.append("%.3f/%d/%d" % (math.exp(sum(map(math.log, rs)) / len(rs)) if rs else 0, ok, len(ids)))
print("%-52s" % "geomean/correct/n" + "".join("%12s" % c for c in row))
PYEOF
echo "total $(( $(date +%s) - T0 )) s"
