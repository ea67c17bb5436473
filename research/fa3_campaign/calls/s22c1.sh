# call s22c1 (session 22, issue 42): is v102's one failure in s21c3 (draw 28, "timed runs differ
# from the baseline by 0.00781") a race, and does v103 (v102 + v103_zero_rows.patch: the rows no
# key reaches written by the producer's idle warps, no work tile for them) hold and gain?
#  1. quick.py same: v102 against v101 bit for bit on the draws it packs (fresh inputs, the
#     workspace scrambled, v102 launched twice per set), 200 sets of draw 28; v103 against v102
#     on causal seqlen_q > seqlen_k shapes
#  2. v103 full --no-timing (the gate), the 23 draws s21c3 timed, v103 and v102 side by side
#  3. v103 --space 64 --seed 410041 with what is left
#   bash research/fa3_campaign/calls/s22c1.sh   (.whl, .whl_test, research/fa3_campaign/cands with
#                                                v101/v102/v103 .cu and .so carried)
T0=$(date +%s)
BUDGET=${BUDGET:-570}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s22c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
SUB=$(grep "^IDS=" research/fa3_campaign/calls/s21c3.sh | cut -d= -f2)
PACKED="d192-s159-b1-h16-causal-gqa2 d96-q664-k195-b4-h32-causal-gqa8 d128-q216-k1343-b2-h8-full-gqa4 d64-q398-k208-b2-h8-full-gqa8 d96-s180-b4-h32-causal-gqa8 d128-s518-b2-h2-full-gqa2 d128-s182-b1-h64-causal-gqa4 d128-s394-b7-h8-full-gqa4 d96-q347-k228-b3-h32-causal-gqa2 d128-s94-b6-h16-causal-gqa4 d128-s651-b3-h32-full-gqa4 d64-q595-k613-b8-h4-causal-gqa4 d64-s205-b8-h16-full-gqa2 d64-s287-b4-h64-full-gqa4 d64-s493-b3-h16-full-gqa8 d192-q183-k112-b4-h64-full-gqa4 d64-q95-k237-b4-h64-causal-gqa4 d256-q300-k4k-b2-h16-causal-gqa4"
QGTK="d128-q8973-k776-b6-h32-causal-gqa4 d96-q10410-k1134-b3-h32-causal-gqa4 d64-q5396-k519-b1-h64-causal-gqa8 d192-q918-k201-b6-h8-causal d128-q7579-k5166-b1-h8-causal-gqa8 d96-q664-k195-b4-h32-causal-gqa8 d64-q1000-k1-b2-h4-causal d256-q9000-k2500-b1-h8-causal d128-q3000-k70-b1-h2-causal-gqa2 d64-q291-k174-b6-h1-causal"
( cd research/fa3_campaign
  timeout $(cap 90) $PY quick.py same v101 v102 $PACKED --reps 24
  echo "same v101 v102 rc=$?"
  timeout $(cap 40) $PY quick.py same v101 v102 d128-s518-b2-h2-full-gqa2 --reps 200
  echo "same v101 v102 (draw 28) rc=$?"
  timeout $(cap 60) $PY quick.py same v102 v103 $QGTK --reps 12
  echo "same v102 v103 rc=$?" ) 2>&1 | tee $D/logs/same.txt
ev v103.full research/fa3_campaign/cands/v103.cu $(cap 80) --scenarios full --no-timing && {
  ev v103.sub research/fa3_campaign/cands/v103.cu $(cap 75) --scenarios $SUB --hidden 0
  ev v102.sub research/fa3_campaign/cands/v102.cu $(cap 75) --scenarios $SUB --hidden 0
  ev v103.space64 research/fa3_campaign/cands/v103.cu $(cap 170) --space 64 --seed 410041; }
echo "total $(( $(date +%s) - T0 )) s"
$PY - $D/evals/v103.sub.json $D/evals/v102.sub.json <<'PYEOF'
import json, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
runs = [load(p) for p in sys.argv[1:]]
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup")
f = lambda x: "%7.3f" % x if x else "      -"
print("%-46s %7s %7s  (xFA3, same call)" % ("draw", "v103", "v102"))
for i in runs[0] or runs[1]:
    bad = [n for n, run in zip(("v103", "v102"), runs) if run.get(i) and not run[i].get("correct")]
    print("%-46s %s %s %s" % (i[13:59], *(f(r(run.get(i))) for run in runs), " WRONG " + ",".join(bad) if bad else ""))
PYEOF
$PY research/fa3_campaign/promote_tables.py coverage $D/evals/v103.space64.json benchmarks/results/s16c1/evals/v100.space64.json 2>/dev/null | head -14   # last column: v100 in s16c1 (another call)
