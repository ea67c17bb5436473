# call s7c2 (session 7, issue 26): v77 = v76a without hop_tile (s7c1: v76d's +1% at q512-k8k);
# v78 = v77 + HOP_STAGE_INC (the ring position carried across key tiles: plain tile d128 472 ->
# 468 instructions, 176 keys 593 -> 587, d64 427 -> 419, d256 468 -> 453); v77b = v77 with
# 128-key tiles (and the TMA epilogue) for d128 without a mask at every length. v75, v77 and v78
# twice each, interleaved; full sets of v77 and v78 (correctness only); then the L2 figures of v78
# and FA3 on d128-s8k-b1-h32-causal-gqa4 (the bound.l2-bound question) by ncu
B=research/fa3_campaign
bash $B/run.sh v77:smoke v78:smoke v77b:smoke v75:bench v77:bench v78:bench v77b:bench v75r:bench v77r:bench v78r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v77:full v78:full
SC=d128-s8k-b1-h32-causal-gqa4
M=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum.per_second,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_read.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
mkdir -p /tmp/ncu; python3 $B/quick.py build v78 > /tmp/ncu/build.log 2>&1
timeout 90 ncu --clock-control none --metrics $M -k regex:attn_kernel --launch-skip 3 --launch-count 1 python3 $B/quick.py once v78 $SC 5 > /tmp/ncu/v78.txt 2>&1; echo "ncu v78 rc=$?"
timeout 90 ncu --clock-control none --metrics $M -k regex:'[Ff]lash|Fwd|device_kernel' --launch-skip 3 --launch-count 1 python3 $B/quick.py once fa3 $SC 5 > /tmp/ncu/fa3.txt 2>&1; echo "ncu fa3 rc=$?"
grep -E "^  [a-z].*__" /tmp/ncu/v78.txt /tmp/ncu/fa3.txt
cp -r /tmp/ncu $OUT/ncu
