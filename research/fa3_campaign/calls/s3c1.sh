# call s3c1: quick A/B of the Q double buffer, ncu of v28 and FA3 on d128-s4k causal, then evaluations
# (as run: quick.py's `time` verb, used here, was dropped after call s3c2; see quick.py)
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
S=d128-s1k-b16-h16-causal,d128-s2k-b8-h16-causal,d128-s4k-b4-h16-causal,d128-s8k-b2-h16-causal,d128-s2k-b4-h32-causal-gqa4,d128-s3000-b5-h16-causal,d128-s1k-b16-h16-full,d128-s2k-b8-h16-full,d128-s1000-b16-h16-full,d64-s2k-b8-h32-causal,d64-s2k-b8-h32-full,d64-s8k-b2-h32-full
python3 $B/quick.py time fa3,v28,v29,v30,v31,v32 $S 2>&1 | tee $OUT/quick.txt
mkdir -p /tmp/ncu
# warm the evaluator's build cache in parallel (the evaluations below then find their builds)
for c in v29 v30 v31 v32; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
SC=d128-s4k-b4-h16-causal
timeout 200 ncu --clock-control none --set full --import-source no -k regex:attn_kernel --launch-skip 3 --launch-count 1 -o /tmp/ncu/v28 python3 $B/quick.py once v28 $SC 5 > /tmp/ncu/v28.log 2>&1; echo "ncu v28 rc=$?"
timeout 200 ncu --clock-control none --set full --import-source no -k regex:'[Ff]lash|Fwd|device_kernel' --launch-skip 3 --launch-count 1 -o /tmp/ncu/fa3 python3 $B/quick.py once fa3 $SC 5 > /tmp/ncu/fa3.log 2>&1; echo "ncu fa3 rc=$?"
for r in v28 fa3; do
  [ -f /tmp/ncu/$r.ncu-rep ] || continue
  ncu -i /tmp/ncu/$r.ncu-rep --page raw --csv > /tmp/ncu/$r.raw.csv 2>&1
  ncu -i /tmp/ncu/$r.ncu-rep --page details > /tmp/ncu/$r.details.txt 2>&1
  ncu -i /tmp/ncu/$r.ncu-rep --page source --csv --print-source sass > /tmp/ncu/$r.source.csv 2>&1
  grep -E "Duration|Executed Ipc A|Issue Slots Busy|No Eligible|Eligible Warps|Registers Per|Compute \(SM\) Th" /tmp/ncu/$r.details.txt | head -12
done
tar czf $OUT/ncu.tgz -C /tmp ncu
wait
bash $B/run.sh v29:smoke v29:bench v28:bench v30:bench v31:bench v32:bench
