# call s8c1 (session 8, issue 26): v79 again (s7c3's +0.34% over v75, its evaluations lost
# with session 7's machine), and the key loop's last uniform work: v80 = v79 + HOP_TURN_FIXED
# (the ping-pong hand-over without a count: every turn but a work tile's last hands on) +
# HOP_QREL_PEEL (the loop's last position peeled, with Q's release): plain tile d128 472 -> 462
# instructions (FA3 455), 176 keys 593 -> 585, d64 426 -> 416, d256 468 -> 453; v81 = v80 +
# HOP_STAGE_INC_256 (d256's ring position carried: 453 -> 442). v75, v79, v80 and v81 twice
# each, interleaved; full sets of v80 and v81 (correctness only)
B=research/fa3_campaign
bash $B/run.sh v80:smoke v81:smoke v75:bench v79:bench v80:bench v81:bench v75r:bench v79r:bench v80r:bench v81r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v80:full v81:full
