# call s12c2 (issue 26; written in session 11, which had no device: not run). After s12c1:
# where v98's executed instructions still exceed FA3's, by ncu's source counters (one launch
# each, as s10c3), on the scenarios furthest from FA3 in each head dim: d128-s1k causal, d64-s2k
# causal and d256-s2k causal. Read with ncu_counts.py, --per the work tiles' consumer-warp
# counts: 16384 (2048 work tiles x 8 warps), 33792 (2816 x 12) and 8192 (1024 x 8). s10c3 put
# v88's excess at a work tile (d128 1080 instructions a consumer warp against FA3's 957, d64 1056
# against 818); v98 removes the decode's divisions, the mask's column indices, the IEEE
# reciprocal and logarithm and the split stores. Expected: d128 within ~40 of FA3's a work tile,
# d64 ~100 over (the register epilogue's transposes: SHFL 16, SEL 48 against FA3's 4 STSM)
# quick.py build v98 here; cands/ then holds v98.cu and v98.so (carried)
bash research/fa3_campaign/ncu_pair.sh v98 d128-s1k-b16-h16-causal d64-s2k-b8-h32-causal d256-s2k-b8-h8-causal
