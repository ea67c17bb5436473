# call s12c1 (issue 26; written in session 11, which had no device: not run). Make them first:
#   cp tests/candidates/fa3_h200_best.cu cands/v96.cu: the shipped kernel
#   python3 make.py v97; python3 make.py v98 (lines.txt: v96 + HOP_TILE_ARITH_256=0
#   HOP_TILE_ARITH_176=0, session 10; v96 + HOP_ST128=1, session 11)
#   for n in v96 v97 v98; do cp cands/$n.cu cands/${n}r.cu; done
# Session 11 read v96's SASS: in every kernel with the register epilogue (d64, d256's persistent
# kernel, d128's 176-key kernel) each 16-byte O store had become four 4-byte stores (NVVM split
# the uint4 store once HOP_TILE_ARITH changed the code around it; v89 has STG.E.128). Those are
# the kernels where v96 lost or did not gain in s10c4. v98 writes each as one st.global.v4:
# 16-byte stores in every kernel again, key loops unchanged (472, 589, 426, 468, 448), each
# kernel 14-21% smaller than v89's. v97 is session 10's guess at the same loss (those kernels
# back on v89's arithmetic; its d64 stores are still split).
# Smoke first, then v96, v98, v97 and their repeats interleaved, and v98's full set.
# Prediction against v96: d256-s2k and s8k without a mask and s2k causal +1.5-3%, d128-s8k and
# s16k without a mask +1-1.5% (the 176-key kernel), d64 +0.5-1.5% (ARITH's gain there, which the
# split stores ate); the rest unchanged: +0.4-0.7% geomean. v98 over v97: d64 +0.5-1.5%, and
# ARITH's share at d256 and 176 keys
B=research/fa3_campaign
bash $B/run.sh v98:smoke v96:bench v98:bench v97:bench v96r:bench v98r:bench v97r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v98:full
