# call s8c3 (session 8, issue 26): v86 = v79 + HOP_QREL_PEEL=3 (the peel in d128's 176-key
# kernel only, without HOP_TURN_FIXED, which cost d64 1.5-3% in s8c2). v75, v79 and v86 twice
# each, interleaved; v86's full set. Then gap.free-memory-free-math by stubs (wrong by design,
# timed by ncu one launch each, never evaluated): st1 = v79 without exponentials, st2 = v79
# without the softmax, st3 = v79 without K/V copies after the ring's first stages; v79 and FA3
# beside them, on d128-s8k-b2-h16-causal and d128-s1k-b16-h16-causal
B=research/fa3_campaign
bash $B/run.sh v86:smoke v75:bench v79:bench v86:bench v75r:bench v79r:bench v86r:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mv $OUT/side_by_side.txt $OUT/side_by_side1.txt
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v86:full
export PYTHONPATH=/tmp/site   # run.sh's installs (it runs in its own shell)
mkdir -p $OUT/ncu
for v in v79 st1 st2 st3; do python3 $B/quick.py build $v > $OUT/ncu/build_$v.txt 2>&1 & done; wait
for sc in d128-s8k-b2-h16-causal d128-s1k-b16-h16-causal; do
  for v in v79 st1 st2 st3 fa3; do
    k='regex:attn_kernel'; [ $v = fa3 ] && k='regex:[Ff]lash|Fwd|device_kernel'
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed -k "$k" --launch-skip 3 --launch-count 1 python3 $B/quick.py once $v $sc 5 > $OUT/ncu/$v.$sc.txt 2>&1
    echo "ncu $sc $v rc=$? $(grep -hE '^ +(gpu__time|sm__pipe)' $OUT/ncu/$v.$sc.txt | awk '{print $1, $(NF)}' | tr '\n' ' ')"
  done
done
