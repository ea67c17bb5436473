# call s5c1 (session 5, issue 26): first the hardened judge's hostile candidates and controls
# on this tree (call 3 of benchmarks/judge_h200 without its GPU tests), then the campaign on
# that judge (hidden scenarios and every input distribution on): v65 again (the start
# figure), v67 = v65 + HOP_MASK_LIMITS, v68 = v67 + HOP_REVERSE (key tiles from the diagonal
# down), v71 = v68 + 128-key tiles for d128 without a mask up to 2k keys, v70 = v68 without
# hop_tile (the persistent kernel for long causal d128 too)
SKIP_GPU_TESTS=1 bash benchmarks/judge_h200/call3.sh
for f in evals.tgz logs.tgz table.txt; do mv $OUT/$f $OUT/judge_$f; done
B=research/fa3_campaign
bash $B/run.sh v68:smoke v65:bench v68:bench v67:bench v71:smoke v71:bench v70:smoke v70:bench
