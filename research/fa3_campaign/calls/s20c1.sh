# call s20c1 (session 20, issues 39 and 42), one call of ~8-9 min (timeout_s 580):
#  1. issue 39: RMSNorm's control under the launch_order probe, v0 against warm (every page of a
#     sample's buffers read in its own context before its lead-in) and onectx (both roles in
#     the judge's context): does the per-run offset between the roles belong to the context?
#  2. issue 42: v101 = v100 (the shipped kernel) + research/fa3_campaign/v101_empty_noq.patch:
#     a work tile with no key to see (causal, seqlen_q > seqlen_k) loads no Q. v100's five worst
#     space draws are causal with seqlen_q >> seqlen_k (0.51-0.75x FA3, s16c1): the empty query
#     tiles, all at the end of the heavy-first order, each paid a Q load and its barrier round.
#     v101 full (--no-timing) and --space 64 --seed 410041 (the draws s16c1 read v100 on).
#   bash research/fa3_campaign/calls/s20c1.sh    (from the repository root; .whl, .whl_test carried)
T0=$(date +%s)
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH PYTHONUNBUFFERED=1
PY=/tmp/venv/bin/python
D=/tmp/s20c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs; (cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
timeout ${PROBE_S:-260} $PY research/launch_order/probe.py --control --repeat ${REPEAT:-2} ${VARIANTS:-v0 warm onectx} > $D/logs/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^(v0|onectx)#" $D/logs/probe.log
# v101: the shipped kernel with the patch's one hunk applied (its - lines replaced by its + lines)
# CAND=research/fa3_campaign/cands/v102.cu (carried): that kernel instead of v101
mkdir -p research/fa3_campaign/cands; C=${CAND:-research/fa3_campaign/cands/v101.cu}
[ -n "$CAND" ] || $PY - tests/candidates/fa3_h200_best.cu research/fa3_campaign/v101_empty_noq.patch $C <<'PYEOF' || exit 1
import sys
src, patch = (open(a).read() for a in sys.argv[1:3])
body = patch.split("\n@@", 1)[1].split("\n")[1:]   # the hunk's lines after its @@ header
old = "".join(l[1:] + "\n" for l in body if l[:1] in (" ", "-"))
new = "".join(l[1:] + "\n" for l in body if l[:1] in (" ", "+"))
assert src.count(old) == 1, "the patch does not apply to the shipped kernel"
open(sys.argv[3], "w").write(src.replace(old, new))
PYEOF
ev() {  # ev NAME LIMIT FLAGS...
  local name=$1 lim=$2; shift 2; local t=$(date +%s)
  timeout $lim $PY -m socratic eval flash_attn_fwd --candidate $C --timeout 30 --json "$@" > $D/evals/$name.json 2> $D/logs/$name.err
  echo "eval $name rc=$? $(( $(date +%s) - t ))s $($PY -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
print(s['n_correct'], '/', s['n'], 'fa3 %.4f' % (s.get('geomean_vs') or {}).get('fa3', 0))" $D/evals/$name.json 2>/dev/null)"
}
N=$(basename $C .cu)
ev $N.full 90 --scenarios full --no-timing
left=$(( ${CALL_S:-540} - ($(date +%s) - T0) - 10 ))
[ $left -gt 60 ] && ev $N.space64 $(( left < 160 ? left : 160 )) --space 64 --seed 410041 || echo "no time left for the space run ($left s)"
$PY research/fa3_campaign/promote_tables.py coverage $D/evals/$N.space64.json benchmarks/results/s16c1/evals/v100.space64.json 2>/dev/null | head -14   # last column: v100 in s16c1 (another call)
echo "total $(( $(date +%s) - T0 )) s"
