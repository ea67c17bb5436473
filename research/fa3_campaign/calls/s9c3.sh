# call s9c3 (session 9, issue 26), both from v89 (v88 + HOP_K_AHEAD_64=0):
#   v91 = v89 + HOP_STAGES_128=3 (a third K/V stage at d128 with 128-key tiles, O then from
#         registers: no room for its buffer; refuted at v57 when the copies were not late,
#         tried again now that st4 says the consumers wait for them)
#   v92 = v89 + HOP_PP_CONT_MAX_128=1000000 (the ping-pong runs on across work tiles at d128
#         without a mask at every length; measured -2% at s8k-s16k before K_AHEAD)
# smokes, then v89, v91, v92 and v88 once each, and the new ones' full sets
B=research/fa3_campaign
bash $B/run.sh v91:smoke v92:smoke v89:bench v91:bench v92:bench v88:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v91:full v92:full
