# call s10c3 (session 10, issue 26): parallelism.overlap-while-waiting by ncu, one launch
# each. v93 (the first load by halves) and v94 (two Q buffers) say a work tile's start does
# not wait for a load, so where do the consumers' warps wait, instruction by instruction, and
# how busy is the tensor pipe against FA3's? Source counters (warp-state samples per SASS
# instruction), warp-state and pipe statistics for v88 and FA3 on d128-s1k causal (the
# furthest d128 scenario), then d64-s2k causal (the furthest d64). v88.so is built here and
# carried: quick.py build v88, then cands/ holds only v88.cu and v88.so
# (as run; its loop is ncu_pair.sh since session 11, the same commands)
bash research/fa3_campaign/ncu_pair.sh v88 d128-s1k-b16-h16-causal d64-s2k-b8-h32-causal
