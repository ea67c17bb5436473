# call s3c2: uniform indices, descriptors once, late rescale (FA3's issue order) -- quick ranking, then evaluations
# (as run: quick.py's `time` verb, used here, was dropped after call s3c2; see quick.py)
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v34 v35 v36 v37 v38 v39; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
python3 $B/quick.py time v28,v34,v35,v36,v37,v38,v39 d128-s1k-b16-h16-full,d128-s2k-b8-h16-full,d128-s4k-b4-h16-full,d128-s8k-b2-h16-full,d128-s16k-b1-h16-full,d128-s1k-b16-h16-causal,d128-s2k-b8-h16-causal,d128-s4k-b4-h16-causal,d128-s8k-b2-h16-causal,d128-s16k-b1-h16-causal,d64-s2k-b8-h32-full,d64-s8k-b2-h32-full,d64-s2k-b8-h32-causal,d64-s8k-b2-h32-causal,d256-s2k-b8-h8-full,d256-s8k-b2-h8-full,d256-s2k-b8-h8-causal,d256-s8k-b2-h8-causal,d128-s2k-b4-h32-causal-gqa4,d128-s8k-b1-h32-causal-gqa4,d128-s4k-b2-h64-causal-gqa8,d128-s8k-b1-h64-causal-gqa8,d128-s1000-b16-h16-full,d128-s3000-b5-h16-causal,d128-q512-k8k-b4-h32-causal-gqa4,d128-q8k-k1k-b2-h16-full 2>&1 | tee $OUT/quick.txt
bash $B/run.sh v36:smoke v36:bench v28:bench v35:bench v37:bench v38:smoke v38:bench v39:smoke v39:bench v34:bench
