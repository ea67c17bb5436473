# device call 1 of the judge isolation (issue 21): hostile candidates, the shipped kernel,
# the Hopper probe and the RMSNorm baseline under the old and the new evaluator side by
# side, the full set, and five self-against-self RMSNorm runs
C=/tmp/cands; B=tests/candidates
PROBE_SET=d128-s1k-b16-h16-full,d128-s4k-b4-h16-full,d128-q8k-k1k-b2-h16-full,d64-s128-b2-h4-full,d128-s1000-b16-h16-full
bash benchmarks/judge_h200/run.sh \
  h_timer_patch=new:rmsnorm:$C/timer_patch.cu:bench h_forge_result=new:rmsnorm:$C/forge_result.cu:bench \
  h_static_alloc=new:rmsnorm:$C/static_alloc.cu:bench h_sync_inside=new:rmsnorm:$C/sync_inside.cu:bench \
  h_own_allocation=new:rmsnorm:$C/own_allocation.cu:bench h_left_running=new:rmsnorm:$C/left_running.cu:smoke \
  h_correct=new:rmsnorm:$C/correct.cu:bench \
  probe_new=new:flash_attn_fwd:$B/hopper_probe.cu:$PROBE_SET:--no-compare probe_old=old:flash_attn_fwd:$B/hopper_probe.cu:$PROBE_SET:--no-compare \
  rms_old=old:rmsnorm:baseline:bench rms_new=new:rmsnorm:baseline:bench \
  best_old=old:flash_attn_fwd:$B/fa3_h200_best.cu:bench best_new=new:flash_attn_fwd:$B/fa3_h200_best.cu:bench \
  best_full=new:flash_attn_fwd:$B/fa3_h200_best.cu:full:--no-timing \
  rms_ctl1=new:rmsnorm:baseline:bench rms_ctl2=new:rmsnorm:baseline:bench rms_ctl3=new:rmsnorm:baseline:bench \
  rms_ctl4=new:rmsnorm:baseline:bench rms_ctl5=new:rmsnorm:baseline:bench
