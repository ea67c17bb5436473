# call s22c3 (session 22, issue 42): v105 = v104 with the zero-row kernels as their own
# instantiations (ZR), so every other kernel keeps v102's code (cuobjdump: all 14 non-ZR kernels
# instruction for instruction v102's). v105 bit for bit against v102 on causal seqlen_q >
# seqlen_k shapes, its gate, the 24 causal q > k draws timed v105 and v102 side by side, then
# v105 --space 64 --seed 410041 and the listed bench set (what a promotion would ship)
#   bash research/fa3_campaign/calls/s22c3.sh   (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-520}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s22c3; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
QG=space-410041-5-d96-q664-k195-b4-h32-causal-gqa8,space-410041-9-d128-q7579-k5166-b1-h8-causal-gqa8,space-410041-11-d64-q5396-k519-b1-h64-causal-gqa8,space-410041-14-d192-q918-k201-b6-h8-causal,space-410041-23-d64-q291-k174-b6-h1-causal,space-410041-37-d128-q8973-k776-b6-h32-causal-gqa4,space-410041-41-d96-q10410-k1134-b3-h32-causal-gqa4,space-410041-42-d96-q347-k228-b3-h32-causal-gqa2,space-410041-76-d128-q1514-k384-b7-h2-causal-gqa2,space-410041-80-d256-q1127-k147-b8-h32-causal-gqa4,space-410041-85-d192-q173-k121-b5-h16-causal-gqa8,space-410041-102-d64-q2022-k1528-b5-h2-causal,space-410041-107-d128-q1394-k72-b4-h64-causal-gqa4,space-410041-110-d128-q1905-k147-b6-h64-causal-gqa8,space-410041-115-d128-q741-k174-b2-h64-causal-gqa8,space-410041-116-d96-q480-k209-b6-h8-causal-gqa4,space-410041-118-d128-q756-k276-b6-h4-causal-gqa4,space-410041-131-d128-q2373-k163-b8-h64-causal-gqa4,space-410041-141-d128-q8855-k1706-b1-h32-causal-gqa8,space-410041-148-d128-q4404-k201-b8-h64-causal-gqa4,space-410041-152-d64-q321-k87-b7-h2-causal-gqa2,space-410041-153-d128-q897-k250-b6-h4-causal-gqa4,space-410041-154-d128-q1667-k560-b7-h8-causal-gqa8,space-410041-163-d128-q2717-k1126-b1-h32-causal-gqa4
( cd research/fa3_campaign
  timeout $(cap 45) $PY quick.py same v102 v105 $(echo $QG | tr , '\n' | sed -E 's/^space-[0-9]+-[0-9]+-//' | head -14) d64-q1000-k1-b2-h4-causal d256-q9000-k2500-b1-h8-causal d128-q3001-k70-b1-h2-causal-gqa2 --reps 4
  echo "same v102 v105 rc=$?" ) 2>&1 | tee $D/logs/same.txt
C=research/fa3_campaign/cands
ev v105.full $C/v105.cu $(cap 80) --scenarios full --no-timing && {
  ev v105.space64 $C/v105.cu $(cap 120) --space 64 --seed 410041
  for n in v105 v102; do ev $n.qg $C/$n.cu $(cap 75) --scenarios $QG --hidden 0; done
  ev v105.bench $C/v105.cu $(cap 150) --scenarios bench; }
echo "total $(( $(date +%s) - T0 )) s"
$PY - $D/evals/v105.qg.json $D/evals/v102.qg.json <<'PYEOF'
import json, math, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
runs = [load(p) for p in sys.argv[1:]]
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup")
f = lambda x: "%7.3f" % x if x else "      -"
print("%-46s %7s %7s  (xFA3, same call)" % ("draw", "v105", "v102"))
for i in runs[0] or runs[1]:
    bad = [n for n, run in zip(("v105", "v102"), runs) if run.get(i) and not run[i].get("correct")]
    print("%-46s %s %s %s" % (i[13:59], *(f(r(run.get(i))) for run in runs), " WRONG " + ",".join(bad) if bad else ""))
g = [math.exp(sum(math.log(r(s)) for s in run.values() if r(s)) / n) if (n := sum(1 for s in run.values() if r(s))) else None for run in runs]
print("%-46s %s %s" % ("geomean", *(f(x) for x in g)))
PYEOF
$PY research/fa3_campaign/promote_tables.py coverage $D/evals/v105.space64.json benchmarks/results/s16c1/evals/v100.space64.json 2>/dev/null | head -14   # last column: v100 in s16c1 (another call)
$PY research/fa3_campaign/summary.py $D/evals v105 2>/dev/null | sed -n '1p;$p'
