# call s7c1 (session 7, issue 26): the work tile's ends. v76a = v75 + HOP_EPI_TMA (O through its
# own shared buffer by stmatrix and a TMA store under the next work tile, FA3's epilogue; d64 and
# d128 with 128-key tiles); v76b = v75 + HOP_Q2 (two Q buffers: refuted at v28, before the loop
# was fixed); v76c = both; v76d = v75 without hop_tile (the persistent loop gained in session 6,
# hop_tile did not). v75 and v76a twice each, interleaved (v75r, v76ar: the same files again);
# full sets of the new epilogue (correctness only)
B=research/fa3_campaign
bash $B/run.sh v76a:smoke v76c:smoke v76b:smoke v76d:smoke v75:bench v76a:bench v76c:bench v76b:bench v76d:bench v75r:bench v76ar:bench v76cr:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v76a:full v76c:full
