# call s9c1 (next session, issue 26; written in session 8, not run). Make them first, from
# v88's make.py line (research/fa3_campaign/README.md):
#   v89 = v88 + HOP_K_AHEAD_64=0 (K before V at d128 and d256 only: d64 without a mask lost
#         1-2% with it in s8c4 and s8c5)
#   v90 = v88 with HOP_K_AHEAD=2 HOP_K_AHEAD_64=1 (also the next work tile's first K before
#         this tile's last V at d128 and d256; st4 was still 4.9-7.2% faster than v87; its
#         decode of the next tile spills 18 bytes in the producer's 24 registers). Its smoke
#         first: a new ordering of the producer's waits can hang (the smoke's timeout catches it)
# v88 and the new ones twice each, interleaved; their full sets.
B=research/fa3_campaign
bash $B/run.sh v89:smoke v90:smoke v88:bench v89:bench v90:bench v88r:bench v89r:bench v90r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v89:full v90:full
