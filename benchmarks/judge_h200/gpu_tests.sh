# the GPU-marked tests on the H200 (CI has no GPU): the evaluator, the judge's isolation and
# blind spots, the Hopper probe. Pure-Python test wheels in .whl_test/ (gitignored: carry it; pytest and
# its plugins: `pip download --no-deps pytest pytest-timeout pytest-asyncio pluggy iniconfig
# packaging exceptiongroup`; no tomli: the device runs Python 3.12). Full log in $OUT/gpu_tests.log.
source benchmarks/judge_h200/setup.sh || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/tst .whl_test/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/fa3:/tmp/tst
python3 -c "import socratic, pytest; print('socratic', socratic.__file__, 'pytest', pytest.__version__)"
timeout ${GPU_TESTS_LIMIT:-540} python3 -m pytest -p no:cacheprovider -m gpu -q -rA \
  tests/test_evaluator_gpu.py tests/test_judge_gpu.py tests/test_hopper_probe.py \
  > $OUT/gpu_tests.log 2>&1
echo "pytest exit $?"
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed" $OUT/gpu_tests.log | tail -40
