# call s10c1 (next session, issue 26; written in session 9, not run). Make them first, from
# v88's make.py line (research/fa3_campaign/README.md):
#   v89 = v88 + HOP_K_AHEAD_64=0
#   v93 = v89 + HOP_PANEL_SPLIT=1 (a work tile's first S issued by halves of the head dim: Q
#         and the first K load as two halves with a barrier each, the first four wgmmas start
#         when the first half has landed; the key loop's SASS is v89's, instruction for
#         instruction). Its smoke first: new barriers can hang (the smoke's timeout catches it)
# Then v88, v89 and v93 twice each, interleaved, and v93's full set.
# Prediction: v93 +1-2% on short causal d128 and d256 (s1k-s2k, GQA, s3000), +0.3-0.5% overall
B=research/fa3_campaign
bash $B/run.sh v93:smoke v88:bench v89:bench v93:bench v88r:bench v89r:bench v93r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v93:full
