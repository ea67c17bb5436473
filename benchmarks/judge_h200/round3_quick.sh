# Judge round 3, short device call: the new evaluator on RMSNorm's smoke set, the round-3
# hostile GPU tests (no hangs), then the shipped attention kernel's bench set. Logs under $OUT.
source benchmarks/judge_h200/venv.sh || exit 1
/tmp/venv/bin/python -c "import cuda.bindings, torch, pytest; print('venv ok', torch.__version__)"
ev() {  # ev NAME TASK CAND SET
  t0=$(date +%s.%N)
  timeout ${EV_S:-200} /tmp/venv/bin/python -m socratic eval $2 --candidate $3 --scenarios $4 --json > $OUT/$1.json 2> $OUT/$1.err
  rc=$?
  python3 benchmarks/judge_h200/row.py $1 $rc $(python3 -c "print($(date +%s.%N)-$t0)") $OUT/$1.json $OUT/$1.err
  [ $rc -gt 1 ] && tail -3 $OUT/$1.err | cut -c1-300
}
ev rms_smoke rmsnorm src/socratic/kernels/rmsnorm/baseline.cu smoke
cd /tmp && timeout ${TESTS_S:-240} /tmp/venv/bin/python -m pytest -p no:cacheprovider -m gpu -q -rA --timeout 200 -k "not hanging" \
  $OLDPWD/tests/test_round3_gpu.py > $OUT/gpu_tests.log 2>&1; echo "pytest exit $?"; cd $OLDPWD
grep -E "^(FAILED|ERROR|PASSED)|passed|failed" $OUT/gpu_tests.log | cut -c1-250 | tail -14
ev fa_bench flash_attn_fwd tests/candidates/fa3_h200_best.cu bench
