# call s3c3: uniform/descriptor fixes per kernel, d256 causal persistent, long-d128 path, 192 keys, ping-pong limit, d64 late rescale; ncu of v41; GPU tests
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v40 v41 v42 v43 v44 v45; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
sleep 45
bash $B/run.sh v41:smoke v41:bench v35:bench v40:smoke v40:bench v42:smoke v42:bench v43:smoke v43:bench v44:smoke v44:bench v45:smoke v45:bench
python3 $B/quick.py build v41 && mkdir -p /tmp/ncu && timeout 150 ncu --clock-control none --set full --import-source no -k regex:attn_kernel --launch-skip 3 --launch-count 1 -o /tmp/ncu/v41 python3 $B/quick.py once v41 d128-s4k-b4-h16-causal 5 > /tmp/ncu/v41.log 2>&1; echo "ncu v41 rc=$?"
[ -f /tmp/ncu/v41.ncu-rep ] && { ncu -i /tmp/ncu/v41.ncu-rep --page raw --csv > /tmp/ncu/v41.raw.csv; ncu -i /tmp/ncu/v41.ncu-rep --page details > /tmp/ncu/v41.details.txt; ncu -i /tmp/ncu/v41.ncu-rep --page source --csv --print-source sass > /tmp/ncu/v41.source.csv; grep -E "Duration|Compute \(SM\) Th" /tmp/ncu/v41.details.txt; }
tar czf $OUT/ncu.tgz -C /tmp ncu
timeout 240 python3 -m pytest -m gpu tests -q -p no:cacheprovider --durations=12 > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -25 $OUT/gpu_tests.txt
