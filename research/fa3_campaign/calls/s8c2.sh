# call s8c2 (session 8, issue 26): v83 = v79 + HOP_TURN_FIXED (not at d256, where it grows the
# persistent tile); v85 = v83 + HOP_QREL_PEEL=3 (the peel in d128's 176-key kernel only, where
# v80 gained). v75, v79, v83 and v85 twice each, interleaved; full sets of v83 and v85
B=research/fa3_campaign
bash $B/run.sh v83:smoke v85:smoke v75:bench v79:bench v83:bench v85:bench v75r:bench v79r:bench v83r:bench v85r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v83:full v85:full
