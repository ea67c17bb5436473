# call s10c3 (session 10, issue 26): parallelism.overlap-while-waiting by ncu, one launch
# each. v93 (the first load by halves) and v94 (two Q buffers) say a work tile's start does
# not wait for a load, so where do the consumers' warps wait, instruction by instruction, and
# how busy is the tensor pipe against FA3's? Source counters (warp-state samples per SASS
# instruction), warp-state and pipe statistics for v88 and FA3 on d128-s1k causal (the
# furthest d128 scenario), then d64-s2k causal (the furthest d64). v88.so is built here and
# carried: quick.py build v88, then cands/ holds only v88.cu and v88.so
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
N=/tmp/ncu; mkdir -p $N
SECT="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section InstructionStats --section SchedulerStats --section LaunchStats --section Occupancy"
for sc in d128-s1k-b16-h16-causal d64-s2k-b8-h32-causal; do
  for v in v88 fa3; do
    k='regex:attn_kernel'; [ $v = fa3 ] && k='regex:[Ff]lash|Fwd|device_kernel'
    r=$N/$v.$sc
    timeout 80 ncu --clock-control none $SECT --import-source no -k "$k" --launch-skip 3 --launch-count 1 -o $r python3 $B/quick.py once $v $sc 5 > $r.log 2>&1
    echo "ncu $v $sc rc=$?"
    [ -f $r.ncu-rep ] || continue
    ncu -i $r.ncu-rep --page raw --csv > $r.raw.csv 2>&1
    ncu -i $r.ncu-rep --page details > $r.details.txt 2>&1
    ncu -i $r.ncu-rep --page source --csv --print-source sass > $r.source.csv 2>&1
    grep -E "Duration|Executed Ipc A|Issue Slots Busy|No Eligible|Eligible Warps|Warp Cycles Per Issued" $r.details.txt | head -8
    (cd /tmp && tar czf $OUT/ncu.tgz.part --exclude='*.ncu-rep' ncu && mv $OUT/ncu.tgz.part $OUT/ncu.tgz)
  done
done
