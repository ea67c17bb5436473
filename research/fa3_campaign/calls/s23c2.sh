# call s23c2 (session 23, issue 42): v106 = v105 with the zero-row fill's bulk copies issued by
# all 32 lanes of the producer's warp 1 (v105 issued from one thread a CTA: draw 80, d256 q1127
# k147 b8 h32 causal gqa4, 128 MB of zero rows in 512 B copies, read 0.264x FA3 against v102's
# 0.939, s22c3). v106 bit for bit against v102 where rows see no key (draw 80 among them), v106
# and v105 on the qg draws s22c3 read worst, then the promotion call (promote.sh NEW=v106).
#   bash research/fa3_campaign/calls/s23c2.sh   (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-560}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s23c2; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
( cd research/fa3_campaign
  timeout $(cap 50) $PY quick.py same v102 v106 d256-q1127-k147-b8-h32-causal-gqa4 d64-q5396-k519-b1-h64-causal-gqa8 \
      d96-q10410-k1134-b3-h32-causal-gqa4 d192-q918-k201-b6-h8-causal d128-q3001-k70-b1-h2-causal-gqa2 d64-q1000-k1-b2-h4-causal --reps 3
  echo "same v102 v106 rc=$?" ) 2>&1 | tee $D/logs/same.txt
W=space-410041-80-d256-q1127-k147-b8-h32-causal-gqa4,space-410041-14-d192-q918-k201-b6-h8-causal,space-410041-9-d128-q7579-k5166-b1-h8-causal-gqa8,space-410041-42-d96-q347-k228-b3-h32-causal-gqa2,space-410041-11-d64-q5396-k519-b1-h64-causal-gqa8,space-410041-41-d96-q10410-k1134-b3-h32-causal-gqa4
C=research/fa3_campaign/cands
for n in v106 v105; do ev $n.worst $C/$n.cu $(cap 45) --scenarios $W --hidden 0; done
$PY - $D/evals/v106.worst.json $D/evals/v105.worst.json <<'PYEOF'
import json, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
a, b = (load(p) for p in sys.argv[1:])
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup") or 0
for i in a or b:
    print("%-50s v106 %6.3f  v105 %6.3f  xFA3%s" % (i[13:63], r(a.get(i)), r(b.get(i)), "" if (a.get(i) or {}).get("correct") else " v106 WRONG"))
PYEOF
tar czf $OUT/s23c2.tgz -C $D evals logs
echo "before promote.sh $(( $(date +%s) - T0 )) s"
NEW=v106 OLD=v100 BUDGET=$(( BUDGET - ($(date +%s) - T0) )) bash research/fa3_campaign/calls/promote.sh
