# call s25c1 (session 25, issue 39), ~9 min (timeout_s 590), any card (name it):
#   1. the new hostile copies_ahead_unmarked_rms (works ahead only where its copies run back to
#      back) and the other copies tests: rejected, or measured at its honest speed
#   2. probe --control --repeat 2: v0 (as shipped) and onectx (both roles in one context: is the
#      H200's ~0.1 us a call role offset on the 4 us rows the context's?)
#   3. the other round-3 GPU tests in the time left (the evaluator changed after s24c3-c4: the
#      rounding step read from the baseline alone, marked chains warmed, DirectMemory frees in
#      the judge's context); then `round3_final.sh gpu` in a second call
#   bash research/fa3_campaign/calls/s25c1.sh   (.whl, .whl_test carried)
T0=$(date +%s)
BUDGET=${BUDGET:-575}
source research/fa3_campaign/calls/lib.sh || exit 1
D=/tmp/s25c1; rm -rf $D; mkdir -p $D/evals $D/logs $D/evidence ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs evidence; (cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
t=$(date +%s)
SOCRATIC_EVIDENCE=$D/evidence timeout $(cap 290) $PY -m pytest -q -rA -m gpu tests/test_round3_gpu.py -k "copies or apart or maxfinite" \
  -p no:cacheprovider --timeout 180 > $D/logs/tests_copies.log 2>&1
echo "round-3 copies tests exit $? $(( $(date +%s) - t ))s: $(grep -E '^(FAILED|ERROR)|passed|failed' $D/logs/tests_copies.log | cut -c1-200 | tail -6)"
if [ -n "${PROBE:-}" ]; then   # as run in session 25: without it (the device time went to the tests)
  timeout $(cap 150) $PY research/launch_order/probe.py --control --repeat 2 v0 onectx > $D/logs/probe.log 2>&1
  echo "probe rc=$?"; cat /tmp/launch_order/summary.txt
  $PY research/launch_order/roles.py /tmp/launch_order v0 onectx 2>&1 | cut -c1-240
fi
t=$(date +%s)
SOCRATIC_EVIDENCE=$D/evidence timeout $(( $(left) - 10 )) $PY -m pytest -q -rA -m gpu -p no:cacheprovider --timeout 150 \
  tests/test_round3_gpu.py -k "not copies and not apart and not maxfinite" > $D/logs/tests_rest.log 2>&1
echo "round-3 tests (the rest) exit $? $(( $(date +%s) - t ))s: $(grep -E '^(FAILED|ERROR|PASSED)|passed|failed' $D/logs/tests_rest.log | cut -c1-160 | tail -12)"
echo "total $(( $(date +%s) - T0 )) s"
