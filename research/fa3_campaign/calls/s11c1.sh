# call s11c1 (next session, issue 26; written in session 10, not run). Make them first, from
# v96's make.py line (research/fa3_campaign/README.md); v96 and v88 are the shipped files:
#   cp tests/candidates/fa3_h200_best.cu cands/v96.cu (and v96r.cu); v88: the session's
#   candidates/ (socratic unpack, then candidates/ by sha) or make.py's v88 line (same SASS)
#   v97 = v96's line + HOP_TILE_ARITH_256=0 HOP_TILE_ARITH_176=0: v96's work-tile arithmetic
#         only where it gained (d128's 128-key kernel, d64); its d256 and 176-key kernels are
#         v89's SASS instruction for instruction, its 128-key and d64 kernels v96b's (v96 as
#         make.py now writes it: FDiv without its divisor field, 8 bytes less a divisor)
# Smoke first, then v88, v96 and v97 twice each, interleaved, and v97's full set.
# Prediction (s10c4's rows with v88's d256 and 176-key ones): v97 +0.9-1.0% over v88,
# +0.3-0.4% over v96; d256 and d128-s8k-s16k without a mask back at v88's
B=research/fa3_campaign
bash $B/run.sh v97:smoke v88:bench v96:bench v97:bench v88r:bench v96r:bench v97r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v97:full
