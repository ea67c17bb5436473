# device call 3 (the hardened hooks' session): the hostile candidates and the self-against-self
# controls again on this tree's judge (first-distribution timing), then the GPU-marked tests.
# JSONs in $OUT/evals.tgz: copy them into benchmarks/results/judge_isolation/ and run
# collect.py for hostile_h200.json and control_h200.json.
C=/tmp/cands; F=flash_attn_fwd
export EVAL_LIMIT=150
bash benchmarks/judge_h200/run.sh \
  h_timer_patch=new:rmsnorm:$C/timer_patch.cu:bench h_forge_result=new:rmsnorm:$C/forge_result.cu:bench \
  h_static_alloc=new:rmsnorm:$C/static_alloc.cu:bench h_sync_inside=new:rmsnorm:$C/sync_inside.cu:bench \
  h_own_allocation=new:rmsnorm:$C/own_allocation.cu:bench h_left_running=new:rmsnorm:$C/left_running.cu:smoke \
  b_listed_shapes=new:$F:$C/listed_shapes.cu:bench:--no-compare b_no_max=new:$F:$C/no_max.cu:bench:--no-compare \
  b_half_squares=new:rmsnorm:$C/half_squares.cu:bench \
  rms_hctl1=new:rmsnorm:baseline:bench rms_hctl2=new:rmsnorm:baseline:bench rms_hctl3=new:rmsnorm:baseline:bench \
  fa_hctl1=new:$F:baseline:bench:--no-compare fa_hctl2=new:$F:baseline:bench:--no-compare \
  fa_hctl3=new:$F:baseline:bench:--no-compare > /tmp/call3_table.txt 2>&1
cp /tmp/call3_table.txt $OUT/table.txt; tail -16 /tmp/call3_table.txt
[ -n "$SKIP_GPU_TESTS" ] || GPU_TESTS_LIMIT=300 bash benchmarks/judge_h200/gpu_tests.sh 2>&1 | tail -3
