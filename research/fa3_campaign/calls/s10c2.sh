# call s10c2 (session 10, issue 26): two Q buffers again, on v89. The answer to
# memory.bytes-in-flight put the consumers' wait at a work tile's start, and v93 (the first
# load by halves) did not shorten it, so the wait is not the first K's bytes. With one Q buffer
# the next work tile's Q is issued only once both consumers have issued their last S, and lands
# a load's latency later, with two P V (the last of each consumer) to hide it:
#   v94 = v89 + HOP_Q2=1 (two Q buffers where they fit beside O's: d128's 128-key kernels, d64)
#   v95 = v94 + HOP_Q2_64=0 (d128 only)
# HOP_Q2 was refuted in session 2 (v29-v32), before the persistent ping-pong, O's TMA store
# and K ahead. Smokes first, then v88, v89, v94, v95, v88r, v94r, v95r, then the full sets.
# Prediction: v94/v95 +1-2% on short causal d128 (s1k-s2k, GQA s2k, s3000) and d128-s1k,
# s1000 without a mask; +0.3-0.6% overall; d64 either way
B=research/fa3_campaign
bash $B/run.sh v94:smoke v95:smoke v88:bench v89:bench v94:bench v95:bench v88r:bench v94r:bench v95r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v94:full v95:full
