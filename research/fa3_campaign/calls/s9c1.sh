# call s9c1 (next session, issue 26; written in session 8, not run): v89 = v88 with K before V
# at d128 and d256 only (HOP_K_AHEAD_64=0: d64 without a mask lost 1-2% with it in s8c4 and
# s8c5). v88 and v89 twice each, interleaved, v75 once; v89's full set. Make them first:
#   python3 research/fa3_campaign/make.py v89 <v88's make.py line> HOP_K_AHEAD_64=0
B=research/fa3_campaign
bash $B/run.sh v89:smoke v88:bench v89:bench v75:bench v88r:bench v89r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v89:full
