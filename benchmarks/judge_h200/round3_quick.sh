# Judge round 3, short device call: the context probe (bounded), the new evaluator on RMSNorm's
# smoke set, then the round-3 hostile GPU tests. Logs under $OUT.
PROBE_S=60 bash research/ctx_probe/run.sh > $OUT/ctx_probe.txt 2>&1; grep -v "warning\|Remark\|^\s*^\|^\s*$" $OUT/ctx_probe.txt | tail -40
source benchmarks/judge_h200/venv.sh || exit 1
t0=$(date +%s); timeout 150 /tmp/venv/bin/python -m socratic eval rmsnorm --scenarios smoke --json > $OUT/rms_smoke.json 2> $OUT/rms_smoke.err
echo "rms smoke rc $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/rms_smoke.err | cut -c1-300
python3 benchmarks/judge_h200/row.py rms_smoke 0 0 $OUT/rms_smoke.json $OUT/rms_smoke.err 2>&1 | tail -3
cd /tmp && timeout ${TESTS_S:-300} /tmp/venv/bin/python -m pytest -p no:cacheprovider -m gpu -q -rA --timeout 200 -k "not hanging" \
  $OLDPWD/tests/test_round3_gpu.py > $OUT/gpu_tests.log 2>&1; echo "pytest exit $?"; cd $OLDPWD
grep -E "^(FAILED|ERROR|PASSED)|passed|failed|Error" $OUT/gpu_tests.log | tail -20
