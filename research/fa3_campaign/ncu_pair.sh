# on the GPU node, from the repository root: ncu_pair.sh CAND SCEN... profiles one launch of
# CAND (cands/CAND.so, built here by quick.py build and carried) and one of FA3 on each scenario,
# as call s10c3 did: source counters (executed instructions and warp-state samples per SASS
# instruction), warp state, pipes. $OUT/ncu.tgz: NAME.SCEN.{raw,source}.csv and .details.txt,
# read with ncu_counts.py
source research/fa3_campaign/device_setup.sh || exit 1
cand=$1; shift
N=/tmp/ncu; mkdir -p $N
SECT="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section InstructionStats --section SchedulerStats --section LaunchStats --section Occupancy"
for sc in "$@"; do
  for v in $cand fa3; do
    k='regex:attn_kernel'; [ $v = fa3 ] && k='regex:[Ff]lash|Fwd|device_kernel'
    r=$N/$v.$sc
    timeout 80 ncu --clock-control none $SECT --import-source no -k "$k" --launch-skip 3 --launch-count 1 -o $r python3 research/fa3_campaign/quick.py once $v $sc 5 > $r.log 2>&1
    echo "ncu $v $sc rc=$?"
    [ -f $r.ncu-rep ] || continue
    ncu -i $r.ncu-rep --page raw --csv > $r.raw.csv 2>&1
    ncu -i $r.ncu-rep --page details > $r.details.txt 2>&1
    ncu -i $r.ncu-rep --page source --csv --print-source sass > $r.source.csv 2>&1
    grep -E "Duration|Executed Ipc A|Issue Slots Busy|No Eligible|Eligible Warps|Warp Cycles Per Issued" $r.details.txt | head -8
    (cd /tmp && tar czf $OUT/ncu.tgz.part --exclude='*.ncu-rep' ncu && mv $OUT/ncu.tgz.part $OUT/ncu.tgz)
  done
done
