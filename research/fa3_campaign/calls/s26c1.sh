# call s26c1 (issue 42), ~5 min (timeout_s 400), any card (name it): v107 = v106 +
# v107_zero_memset.patch (d256's zero rows, O part, as one 2-D memset node before the kernel where
# they outweigh the work that could hide them: draw 80 read 0.78x FA3 under v106, whose 512 B
# bulk copies fill at ~1 TB/s) beside v106 on the 24 causal q > k draws (s22c3's QG) and the
# six worst draws, same call.
#   bash research/fa3_campaign/calls/s26c1.sh   (.whl, .whl_test and research/fa3_campaign/cands/v107.cu carried)
T0=$(date +%s)
BUDGET=${BUDGET:-390}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s26c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
C=research/fa3_campaign/cands
[ -f $C/v107.cu ] || { echo "s26c1: $C/v107.cu was not carried"; exit 2; }
V106=tests/candidates/fa3_h200_best.cu   # the shipped kernel is v106
W=space-410041-80-d256-q1127-k147-b8-h32-causal-gqa4,space-410041-14-d192-q918-k201-b6-h8-causal,space-410041-9-d128-q7579-k5166-b1-h8-causal-gqa8,space-410041-42-d96-q347-k228-b3-h32-causal-gqa2,space-410041-11-d64-q5396-k519-b1-h64-causal-gqa8,space-410041-41-d96-q10410-k1134-b3-h32-causal-gqa4
QG=$(sed -n 's/^QG=//p' research/fa3_campaign/calls/s22c3.sh)
ev v107.qg $C/v107.cu $(cap 150) --scenarios $QG --hidden 0   # the first evaluation of each builds it (~45 s)
ev v106.qg $V106 $(cap 150) --scenarios $QG --hidden 0
ev v107.worst $C/v107.cu $(cap 60) --scenarios $W --hidden 0
ev v106.worst $V106 $(cap 60) --scenarios $W --hidden 0
$PY - $D/evals/v107.qg.json $D/evals/v106.qg.json $D/evals/v107.worst.json $D/evals/v106.worst.json <<'PYEOF'
import json, math, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
a, b, wa, wb = (load(p) for p in sys.argv[1:])
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup") or 0
ok = lambda s: "" if (s or {}).get("correct") else " WRONG: " + "; ".join((s or {}).get("failures", []))[:120]
for x, y, what in ((a, b, "q > k"), (wa, wb, "worst")):
    for i in x:
        print("%-6s %-50s v107 %6.3f  v106 %6.3f  xFA3%s" % (what, i[13:63], r(x.get(i)), r(y.get(i)), ok(x.get(i))))
both = [i for i in a if r(a[i]) and r(b.get(i))]
if both:
    g = lambda d: math.exp(sum(math.log(r(d[i])) for i in both) / len(both))
    print("q > k geomean over %d draws: v107 %.4f  v106 %.4f  xFA3 (same call)" % (len(both), g(a), g(b)))
PYEOF
echo "total $(( $(date +%s) - T0 )) s"
