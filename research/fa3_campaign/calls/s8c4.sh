# call s8c4 (session 8, issue 26): the producer's order (hopper.mbarrier-wait, posed at the
# plateau in s8c3; st3 without K/V copies ran 5.8% faster at d128-s8k causal, 7.7% at s1k).
# v87 = v79 + HOP_K_AHEAD (K(t+1) loaded before V(t), as the consumers need them and as FA3's
# producer does); v88 = v87 + HOP_QREL_PEEL=3. v75, v79, v87 and v88 twice each, interleaved;
# v87's full set; then ncu of v87 and of st4 (v87 without K/V copies) on the two scenarios
B=research/fa3_campaign
bash $B/run.sh v87:smoke v88:smoke v75:bench v79:bench v87:bench v88:bench v75r:bench v79r:bench v87r:bench v88r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v87:full v88:full
export PYTHONPATH=/tmp/site
mkdir -p $OUT/ncu
for v in v87 st4; do python3 $B/quick.py build $v > $OUT/ncu/build_$v.txt 2>&1 & done; wait
for sc in d128-s8k-b2-h16-causal d128-s1k-b16-h16-causal; do
  for v in v87 st4; do
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed -k 'regex:attn_kernel' --launch-skip 3 --launch-count 1 python3 $B/quick.py once $v $sc 5 > $OUT/ncu/$v.$sc.txt 2>&1
    echo "ncu $sc $v rc=$? $(grep -hE '^ +(gpu__time|sm__pipe)' $OUT/ncu/$v.$sc.txt | awk '{print $1, $(NF)}' | tr '\n' ' ')"
  done
done
rm -f $OUT/ncu/build_*
