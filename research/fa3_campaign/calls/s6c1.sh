# call s6c1 (session 6, issue 26): the key loop's issue slots. v74d = v65 + HOP_STAGE_U +
# HOP_QDESC_HOIST=2 + HOP_PLAIN_NOINF (plain d128 tile 495 -> 470 instructions, FA3 455; d64
# 449 -> 424; 176 keys 612 -> 592; d256 484-490 -> 469-471); v75 = v74d + v73's choices (key
# tiles from the diagonal down, 128-key tiles for d128 without a mask up to 2k keys). v65 and
# v74d twice each, interleaved, for the noise (v65r, v74dr: the same files again); v74d's and v75's full sets (correctness only)
B=research/fa3_campaign
bash $B/run.sh v74d:smoke v75:smoke v74d:bench v65:bench v75:bench v74dr:bench v65r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v74d:full v75:full
