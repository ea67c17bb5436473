# call s9c2 (session 9, issue 26): the GPU tests on this tree's judge (lasting_lag: a device
# lag counted only when it recurs), then v88 and v89 twice each, interleaved (v89 read
# +0.1-0.2% in s9c1, one of its repeats failed by the judge's host-stall defect), then
# gap.idle-sms (posed at the end of session 8) by ncu, one launch each: the SMs' active
# cycles, mean against max and min, for v88 and FA3 on the two furthest scenarios
B=research/fa3_campaign
GPU_TESTS_LIMIT=280 bash benchmarks/judge_h200/gpu_tests.sh 2>&1 | tail -4
bash $B/run.sh v88:bench v89:bench v88r:bench v89r:bench
export PYTHONPATH=/tmp/site   # run.sh's installs (it runs in its own shell)
mkdir -p $OUT/ncu
python3 $B/quick.py build v88 > $OUT/ncu/build_v88.txt 2>&1
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_elapsed.max
for sc in d128-s1k-b16-h16-causal d64-s2k-b8-h32-causal; do
  for v in v88 fa3; do
    k='regex:attn_kernel'; [ $v = fa3 ] && k='regex:[Ff]lash|Fwd|device_kernel'
    timeout 60 ncu --clock-control none --metrics $M -k "$k" --launch-skip 3 --launch-count 1 python3 $B/quick.py once $v $sc 5 > $OUT/ncu/$v.$sc.txt 2>&1
    echo "ncu $sc $v rc=$? $(grep -hE '^ +(gpu__time|sm__cycles)' $OUT/ncu/$v.$sc.txt | awk '{print $1, $(NF)}' | tr '\n' ' ')"
  done
done
