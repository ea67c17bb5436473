# call s5c2 (session 5, issue 26): the GPU-marked tests on this tree first, then: v72 = v65 +
# key tiles from the diagonal down + the mask's limits except at d64 + 128-key tiles for d128
# without a mask up to 2k keys (s5c1's gains together, d64 as in v65); v73 = v72 without the
# mask's limits; v69 = v65 without the ping-pong barrier (pricing it); v65 again; v72's full set
GPU_TESTS_LIMIT=300 bash benchmarks/judge_h200/gpu_tests.sh 2>&1 | tail -4
B=research/fa3_campaign
bash $B/run.sh v72:smoke v72:bench v65:bench v73:smoke v73:bench v69:smoke v69:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v72:full
