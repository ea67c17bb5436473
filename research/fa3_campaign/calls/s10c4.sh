# call s10c4 (session 10, issue 26): a work tile's own arithmetic as FA3's. ncu in s10c3 put
# the instructions v88 executes beyond FA3's at a work tile, not in the key loop (d128-s1k
# causal: 1080 a consumer warp a work tile against 957, 471 a key tile against 455; d64-s2k
# causal 1056 against 818): signed divisions in the tile's decode, the epilogue's IEEE 1/sum
# and log2f, a column index a element in the masked tile.
#   v96 = v89 + HOP_TILE_ARITH=1 (multiply-high divisions from host magic numbers, MUFU rcp
#         and lg2 in the epilogue, the mask against each row's limit less the thread's first
#         column: ISETP against constants, as FA3); key loops unchanged (472, 587, 426)
# Smoke first, then v88, v96, v88r, v96r, and v96's full set (the device time left: ~250 s).
# Prediction: +1-2% on short causal (d128 s1k-s2k, d64 s2k, d256 s2k) and d128-s1k without a
# mask, +0.5-1% overall
B=research/fa3_campaign
bash $B/run.sh v96:smoke v88:bench v96:bench v88r:bench v96r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v96:full
