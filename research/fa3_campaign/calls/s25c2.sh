# call s25c2 (session 25, issue 42), ~3 min (timeout_s 240), any card (name it): why draw 80
# (d256 q1127 k147 b8 h32 causal GQA 4, 87% of its rows see no key) reads 0.78x FA3 under v106
# and 0.93x under v102 (s24c1, H100, same call), while draw 41 (d96, 89% such rows) reads 1.07x
# under v106 and 0.79x under v102: one Nsight Compute profile of each kernel and FA3 on it.
# Here first: bash research/fa3_campaign/cands.sh; python research/fa3_campaign/quick.py build v102 v106
#   bash research/fa3_campaign/calls/s25c2.sh   (carry .whl, research/fa3_campaign/cands/v102.so,
#                                                 research/fa3_campaign/cands/v106.so)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=d256-q1127-k147-b8-h32-causal-gqa4
bash research/fa3_campaign/ncu_pair.sh v106 $S
mv $OUT/ncu.tgz $OUT/ncu_v106.tgz 2>/dev/null
rm -rf /tmp/ncu
bash research/fa3_campaign/ncu_pair.sh v102 $S   # (FA3 profiled again beside it)
mv $OUT/ncu.tgz $OUT/ncu_v102.tgz 2>/dev/null
