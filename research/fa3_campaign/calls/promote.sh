# A promotion call (issue 42's milestones, the shape of s16c1): NEW over OLD, both
# research/fa3_campaign/cands/NAME.cu (carried; OLD defaults to the shipped kernel, copied as
# cands/$OLD.cu), in one call of ~7-8 min (timeout_s 590, BUDGET=510 s):
#   NEW smoke (the gate: a failure stops NEW's runs), OLD bench, NEW bench (FA3, cuDNN, FA2 and 4
#   hidden draws each, as the campaign's evaluations), NEW full (--no-timing), NEW and OLD
#   `--space 64 --seed 410041`, then OLDr and NEWr bench (the repeats) while time is left.
# Back in $OUT: evals.tgz (evals/NAME.SET.json, the names record.py imports), logs.tgz, table.txt.
#   NEW=v102 OLD=v100 bash research/fa3_campaign/calls/promote.sh
T0=$(date +%s)
BUDGET=${BUDGET:-510}
NEW=${NEW:?NEW=the candidate in research/fa3_campaign/cands/NEW.cu}; OLD=${OLD:-v100}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
B=research/fa3_campaign; C=$B/cands
mkdir -p $C
[ -f $C/$NEW.cu ] || { echo "promote.sh: $C/$NEW.cu is missing (carry research/fa3_campaign/cands)"; exit 2; }
[ -f $C/$OLD.cu ] || cp tests/candidates/fa3_h200_best.cu $C/$OLD.cu
# a repeat is the same file under its own name (the path each result records)
cp $C/$NEW.cu $C/${NEW}r.cu; cp $C/$OLD.cu $C/${OLD}r.cu
D=/tmp/promote; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals; tar czf $OUT/logs.tgz -C $D logs; cp $D/table.txt $OUT/ 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $D/logs/gpu.txt
# evs C SET LIMIT [FLAGS..]: cands/C.cu on SET into evals/C.SET.json; SET space64 is
# `--space 64 --seed 410041`
evs() {
  local c=$1 set_=$2 lim=$3; shift 3
  local sel="--scenarios $set_"; [ $set_ = space64 ] && sel="--space 64 --seed 410041"
  ev $c.$set_ $C/$c.cu $lim $sel "$@"
}
evs $NEW smoke $(cap 90)
GATE=$?
evs $OLD bench $(cap 150)
if [ $GATE -eq 0 ]; then
  evs $NEW bench $(cap 150)
  evs $NEW full $(cap 90) --no-timing
  evs $NEW space64 $(cap 160)
fi
evs $OLD space64 $(cap 160)
evs ${OLD}r bench $(cap 150)
[ $GATE -eq 0 ] && evs ${NEW}r bench $(cap 150)
echo "total $(( $(date +%s) - T0 )) s"
{
  cat $D/logs/gpu.txt
  names=$(for n in $OLD $NEW ${OLD}r ${NEW}r; do [ -s $D/evals/$n.bench.json ] && echo $n; done)
  [ -n "$names" ] && $PY $B/summary.py $D/evals $names | sed -n '1p;$p'
  $PY $B/promote_tables.py summary $D/evals
} > $D/table.txt 2>&1
cat $D/table.txt
