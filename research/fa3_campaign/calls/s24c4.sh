# call s24c4 (session 24, issue 39), ~6 min (timeout_s 380): on the card s24c3 ran on (an H200),
# the control as shipped now (v0: marks in a quarter of the pairs, buffers from cuMemAlloc)
# beside the design before (allmarked+mempool), one run each; then the evaluator's and judge's
# GPU tests on this code in the time left, their evidence kept.
T0=$(date +%s)
BUDGET=${BUDGET:-360}
source research/fa3_campaign/calls/lib.sh || exit 1
D=/tmp/s24c4; rm -rf $D; mkdir -p $D/evals $D/logs $D/evidence ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs evidence; (cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
timeout $(cap 130) $PY research/launch_order/probe.py --control --repeat 1 v0 allmarked+mempool > $D/logs/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 ))s"; cat /tmp/launch_order/summary.txt
$PY research/launch_order/roles.py /tmp/launch_order v0 allmarked+mempool 2>&1 | cut -c1-240
t=$(date +%s)
SOCRATIC_EVIDENCE=$D/evidence timeout $(( $(left) - 10 )) $PY -m pytest -q -rA -m gpu -p no:cacheprovider --timeout 150 \
  tests/test_evaluator_gpu.py tests/test_judge_gpu.py \
  -k "baseline_passes or correct_rewrite or hostile_candidate or reused_by_pointer or forged or blind_spot or baselines_pass" \
  > $D/logs/tests.log 2>&1
echo "GPU tests exit $? $(( $(date +%s) - t ))s: $(grep -E '^(FAILED|ERROR|PASSED)|passed|failed' $D/logs/tests.log | cut -c1-160 | tail -24)"
echo "total $(( $(date +%s) - T0 )) s"
