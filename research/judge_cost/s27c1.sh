# call s27c1 (issue 39, the cost of a bench evaluation), ~9.5 min (timeout_s 590), any card
# (name it); .whl, .whl_test and .whl_old carried (.whl_old/old.tgz = `git archive 6afe056`):
#   1. hash_many.patch applied here, on the device's copy (unless main has it already)
#   2. profile.py: the judge worker under cProfile, the baseline against itself on the 26
#      listed scenarios (--hidden 0 --no-compare): where a pair's ~3.5 ms go
#   3. round3_final.sh cost: old (6afe056) and new alternating, one warm-up each first
#   bash research/judge_cost/s27c1.sh
T0=$(date +%s)
grep -q hash_many src/socratic/evaluator/helpers.cu || git apply research/judge_cost/hash_many.patch \
  || patch -p1 < research/judge_cost/hash_many.patch || { echo "s27c1: hash_many.patch does not apply"; exit 2; }
source benchmarks/judge_h200/venv.sh > /tmp/venv.log 2>&1 || { tail -5 /tmp/venv.log; exit 1; }
mkdir -p ${OUT:=/tmp/out}
R=$PWD
(cd /tmp && timeout 200 /tmp/venv/bin/python $R/research/judge_cost/profile.py $OUT/prof -- \
   flash_attn_fwd --scenarios bench --hidden 0 --no-compare > $OUT/profile.txt 2> $OUT/profile.err)
echo "profile rc=$? $(( $(date +%s) - T0 )) s: $(grep -m1 took $OUT/profile.txt)"
sed -n '/ncalls/,$p' $OUT/profile.txt | cut -c1-160 | head -60
COST_S=$(( ${BUDGET:-575} - ($(date +%s) - T0) )) bash benchmarks/judge_h200/round3_final.sh cost 2>&1 | tail -12
echo "total $(( $(date +%s) - T0 )) s"
