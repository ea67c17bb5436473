# call s21c3 (session 21, issue 42): the least that tells whether v102 is right and where it
# gains, for a call of ~4 min (BUDGET 230 s): v102 full --no-timing (the gate), then the 23 draws
# of `--space 64 --seed 410041` that v101 or v102 change (causal with seqlen_q > seqlen_k, or
# packed by FA3's rule), timed with FA3 beside, v102 then v100 (the shipped kernel) while time is
# left. s16c1 read v100 on the same draws (benchmarks/results/s16c1/evals/v100.space64.json).
#   bash research/fa3_campaign/calls/s21c3.sh    (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-230}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s21c3; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
IDS=space-410041-3-d192-s159-b1-h16-causal-gqa2,space-410041-5-d96-q664-k195-b4-h32-causal-gqa8,space-410041-7-d128-q216-k1343-b2-h8-full-gqa4,space-410041-9-d128-q7579-k5166-b1-h8-causal-gqa8,space-410041-11-d64-q5396-k519-b1-h64-causal-gqa8,space-410041-14-d192-q918-k201-b6-h8-causal,space-410041-20-d64-q398-k208-b2-h8-full-gqa8,space-410041-23-d64-q291-k174-b6-h1-causal,space-410041-25-d96-s180-b4-h32-causal-gqa8,space-410041-28-d128-s518-b2-h2-full-gqa2,space-410041-31-d128-s182-b1-h64-causal-gqa4,space-410041-35-d128-s394-b7-h8-full-gqa4,space-410041-37-d128-q8973-k776-b6-h32-causal-gqa4,space-410041-41-d96-q10410-k1134-b3-h32-causal-gqa4,space-410041-42-d96-q347-k228-b3-h32-causal-gqa2,space-410041-43-d128-s94-b6-h16-causal-gqa4,space-410041-47-d128-s651-b3-h32-full-gqa4,space-410041-50-d64-q595-k613-b8-h4-causal-gqa4,space-410041-52-d64-s205-b8-h16-full-gqa2,space-410041-53-d64-s287-b4-h64-full-gqa4,space-410041-57-d64-s493-b3-h16-full-gqa8,space-410041-61-d192-q183-k112-b4-h64-full-gqa4,space-410041-63-d64-q95-k237-b4-h64-causal-gqa4
ev v102.full research/fa3_campaign/cands/v102.cu $(cap 80) --scenarios full --no-timing && \
  ev v102.sub research/fa3_campaign/cands/v102.cu $(cap 75) --scenarios $IDS --hidden 0
ev v100.sub tests/candidates/fa3_h200_best.cu $(cap 75) --scenarios $IDS --hidden 0
echo "total $(( $(date +%s) - T0 )) s"
$PY - $D/evals/v102.sub.json $D/evals/v100.sub.json benchmarks/results/s16c1/evals/v100.space64.json <<'PYEOF'
import json, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
runs = [load(p) for p in sys.argv[1:]]
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup")
f = lambda x: "%7.3f" % x if x else "      -"
print("%-46s %7s %7s %7s  (xFA3; s16c1: v100 in another call)" % ("draw", "v102", "v100", "s16c1"))
for i in runs[0] or runs[1]:
    print("%-46s %s %s %s" % (i[13:59], *(f(r(run.get(i))) for run in runs)))
PYEOF
