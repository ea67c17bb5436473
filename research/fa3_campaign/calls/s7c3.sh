# call s7c3 (session 7, issue 26): v79 = v75 + the TMA epilogue at d128 only (HOP_EPI_TMA=1
# HOP_EPI_TMA_64=0: over s7c1 and s7c2, +0.5-1% on d128's 128-key kernels, -0.4 to -0.8% at d64)
# + no hop_tile (q512-k8k +0.4%) + 128-key tiles for d128 without a mask up to 4k keys (s7c2's
# v77b: s4k +1.2%, s8k and s16k -0.7 to -1%). v75 and v79 three times each, interleaved; v79's
# full set; then ncu's L2 figures of v79 and FA3 on d128-s8k-b1-h32-causal-gqa4 (bound.l2-bound)
B=research/fa3_campaign
bash $B/run.sh v79:smoke v75:bench v79:bench v75r:bench v79r:bench v75s:bench v79s:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v79:full
export PYTHONPATH=/tmp/site   # run.sh's installs (it runs in its own shell)
SC=d128-s8k-b1-h32-causal-gqa4
M=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum.per_second,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_read.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
mkdir -p $OUT/ncu; python3 $B/quick.py build v79 > $OUT/ncu/build.txt 2>&1
timeout 90 ncu --clock-control none --metrics $M -k regex:attn_kernel --launch-skip 3 --launch-count 1 python3 $B/quick.py once v79 $SC 5 > $OUT/ncu/v79.txt 2>&1; echo "ncu v79 rc=$?"
timeout 90 ncu --clock-control none --metrics $M -k regex:'[Ff]lash|Fwd|device_kernel' --launch-skip 3 --launch-count 1 python3 $B/quick.py once fa3 $SC 5 > $OUT/ncu/fa3.txt 2>&1; echo "ncu fa3 rc=$?"
grep -hE "^ +[a-z_]+__[a-z_.]+ " $OUT/ncu/v79.txt $OUT/ncu/fa3.txt
