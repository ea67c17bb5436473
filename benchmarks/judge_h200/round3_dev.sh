# Judge round 3, first device call: the CUDA-context probe, the GPU-marked tests on the new
# evaluator, then the shipped kernel (smoke) and RMSNorm's baseline (bench) through the new
# evaluator and the old one (.whl_old/old.tgz) side by side. Logs under $OUT.
bash research/ctx_probe/run.sh > $OUT/ctx_probe.txt 2>&1; grep -v warning $OUT/ctx_probe.txt | grep -v "^\s*$" | head -40
source benchmarks/judge_h200/venv.sh || exit 1
ev() {  # ev NAME PY TASK CAND SET
  t0=$(date +%s.%N)
  timeout 200 $2 -m socratic eval $3 --candidate $4 --scenarios $5 --json > $OUT/$1.json 2> $OUT/$1.err
  rc=$?
  python3 benchmarks/judge_h200/row.py $1 $rc $(python3 -c "print($(date +%s.%N)-$t0)") $OUT/$1.json $OUT/$1.err
  [ $rc -gt 1 ] && tail -3 $OUT/$1.err | cut -c1-300
}
ev new_fa_bench /tmp/venv/bin/python flash_attn_fwd tests/candidates/fa3_h200_best.cu bench
ev old_fa_bench /tmp/venv_old/bin/python flash_attn_fwd tests/candidates/fa3_h200_best.cu bench
ev new_rms_bench /tmp/venv/bin/python rmsnorm src/socratic/kernels/rmsnorm/baseline.cu bench
ev old_rms_bench /tmp/venv_old/bin/python rmsnorm src/socratic/kernels/rmsnorm/baseline.cu bench
cd /tmp && timeout ${TESTS_S:-300} /tmp/venv/bin/python -m pytest -p no:cacheprovider -m gpu -q -rA \
  $OLDPWD/tests/test_round3_gpu.py $OLDPWD/tests/test_evaluator_gpu.py $OLDPWD/tests/test_judge_gpu.py > $OUT/gpu_tests.log 2>&1; echo "pytest exit $?"; cd $OLDPWD
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.log | tail -25
