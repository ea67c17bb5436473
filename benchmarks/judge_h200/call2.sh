# device call 2: the blind spots (issue 22) and the rest of the isolation (issue 21): hostile
# candidates against hidden scenarios and input distributions, five self-against-self runs
# of each task's bench set with both on, the shipped kernel on hidden shapes and the full set,
# the two remaining isolation candidates, and the cost of a bench evaluation old vs new
C=/tmp/cands; B=tests/candidates; F=flash_attn_fwd
export EVAL_LIMIT=200
bash benchmarks/judge_h200/run.sh \
  b_listed_shapes=new:$F:$C/listed_shapes.cu:bench:--no-compare b_no_max=new:$F:$C/no_max.cu:bench:--no-compare \
  b_half_squares=new:rmsnorm:$C/half_squares.cu:bench \
  rms_hctl1=new:rmsnorm:baseline:bench rms_hctl2=new:rmsnorm:baseline:bench rms_hctl3=new:rmsnorm:baseline:bench \
  rms_hctl4=new:rmsnorm:baseline:bench rms_hctl5=new:rmsnorm:baseline:bench \
  fa_hctl1=new:$F:baseline:bench:--no-compare fa_hctl2=new:$F:baseline:bench:--no-compare \
  fa_hctl3=new:$F:baseline:bench:--no-compare fa_hctl4=new:$F:baseline:bench:--no-compare \
  fa_hctl5=new:$F:baseline:bench:--no-compare \
  best_hidden=new:$F:$B/fa3_h200_best.cu:bench:--hidden+8 best_full_dist=new:$F:$B/fa3_h200_best.cu:full:--no-timing \
  h_forge_result=new:rmsnorm:$C/forge_result.cu:bench h_left_running=new:rmsnorm:$C/left_running.cu:smoke \
  cost_old=old:$F:baseline:bench cost_new=new:$F:baseline:bench:--hidden+0 \
  $(for n in wrong stale_output partial_write input_mutation side_stream side_busy deferred pointer_cache \
       shape_special precision_downgrade timed_only_downgrade device_settings; do
      echo "r_$n=new:rmsnorm:$C/$n.cu:smoke:--hidden+0"; done)
