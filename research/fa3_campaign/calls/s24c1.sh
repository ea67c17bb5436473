# call s24c1 (next session, issues 39 and 42), one call of ~9 min (timeout_s 590):
# (session 25: variant `stamps` and the timer stamps are gone; probe.py now refuses it: this script is the record of s24c1 as run)
#  1. issue 39: RMSNorm's control under the probe's stamps (worker.COPY_MARKS "stamps": a
#     one-thread kernel writing the global timer between the copies, not an event record node,
#     which cost ~2.5 us a copy in s23), warm+stamps, and, without marks, onectx (no context
#     switch: is the candidate's -0.05 us a call the context's?) and malloc (the judge's buffers
#     from cuMemAlloc like the candidate context's: is it the allocations?) and swap (the kernels
#     on each other's buffers every other two pairs: is it where the buffers lie? s20 said no,
#     but with the event nodes' 0.3 us offsets over it), two runs each;
#     then the batch-ahead hostile candidates under stamps (the copy profile must still catch
#     them: "do not each do their own work"). hidden.stamps says where the stamps went.
#  2. issue 42: v106's speed on draw 80 (d256 q1127 k147: v105 read 0.264x FA3 in s22c3, v106
#     issues the zero-row fill from a warp) and the draws s22c3 read worst, then the 24 causal
#     q > k draws v106 beside v102 while time is left.
#   bash research/fa3_campaign/calls/s24c1.sh   (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-560}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s24c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs; (cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
P="$PY research/launch_order/probe.py"
timeout $(cap 320) $P --control --repeat 2 stamps warm+stamps onectx+noevents malloc+noevents swap+noevents > $D/logs/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 ))s"; cat /tmp/launch_order/summary.txt; cp /tmp/launch_order/summary.txt $D/logs/control.txt
for h in copies_batch_ahead_rms copies_batch_pairs_rms; do
  timeout $(cap 60) $P --candidate $h --scenarios r1-c4k,r16-c4k,r17-c1000 --out /tmp/launch_order/$h stamps > $D/logs/$h.log 2>&1
  echo "$h under stamps rc=$?: $(cat /tmp/launch_order/$h/summary.txt 2>/dev/null | cut -c1-300)"
done
cat /tmp/launch_order/hidden.* 2>/dev/null | sort | uniq -c | head -3
$PY research/launch_order/roles.py /tmp/launch_order stamps warm+stamps onectx+noevents malloc+noevents swap+noevents 2>&1 | cut -c1-240
C=research/fa3_campaign/cands
W=space-410041-80-d256-q1127-k147-b8-h32-causal-gqa4,space-410041-14-d192-q918-k201-b6-h8-causal,space-410041-9-d128-q7579-k5166-b1-h8-causal-gqa8,space-410041-42-d96-q347-k228-b3-h32-causal-gqa2,space-410041-11-d64-q5396-k519-b1-h64-causal-gqa8,space-410041-41-d96-q10410-k1134-b3-h32-causal-gqa4
ev v106.worst $C/v106.cu $(cap 110) --scenarios $W --hidden 0   # the first evaluation builds v106 (~45 s)
QG=$(sed -n 's/^QG=//p' research/fa3_campaign/calls/s22c3.sh)
for n in v106 v102; do ev $n.qg $C/$n.cu $(cap 110) --scenarios $QG --hidden 0; done
$PY - $D/evals/v106.worst.json $D/evals/v106.qg.json $D/evals/v102.qg.json <<'PYEOF'
import json, sys
def load(p):
    try: return {s["id"]: s for s in json.load(open(p))["scenarios"]}
    except Exception: return {}
worst, a, b = (load(p) for p in sys.argv[1:])
r = lambda s: ((s or {}).get("comparisons") or {}).get("fa3", {}).get("speedup") or 0
for i, s in worst.items():
    print("%-50s v106 %6.3f xFA3%s" % (i[13:63], r(s), "" if s.get("correct") else " WRONG: " + "; ".join(s["failures"])[:120]))
for i in a:
    print("%-50s v106 %6.3f  v102 %6.3f  xFA3 (same call)%s" % (i[13:63], r(a.get(i)), r(b.get(i)), "" if a[i].get("correct") else " v106 WRONG"))
PYEOF
echo "total $(( $(date +%s) - T0 )) s"
