# call s28c1 (issue 39: the controls and the cost on main since session 28), ~9.5 min
# (timeout_s 590), any card (name it); .whl and .whl_old carried (.whl_old/old.tgz =
# `git archive --format=tar.gz -o .whl_old/old.tgz 6afe056`).
# Session 28 (H100, def9da3): the s27 pair brought the bench cost to 24.2 s against the old
# evaluator's 20.8 s (same call), but RMSNorm's r1k-c4k read 0.988-0.989 against itself in all
# three controls (0.992-0.994 in s25-s26): the candidate ~0.1 us a call slower in both orders
# (order_ratio 1.003), its inputs copied by the judge's stream. Main now copies them on the
# candidate's own stream at the head of its sample (worker.INPUTS_COPIED_IN "candidate", no
# wait more). This runs, on main:
#   1. a smoke evaluation (one scenario, the baseline against itself)
#   2. round3_final.sh rms: RMSNorm's 3 controls (is r1k-c4k back in [0.99, 1.01]?)
#   3. round3_final.sh facost: attention's 3 controls, then the shipped kernel, old evaluator
#      (6afe056) and new alternating after one warm-up each (the cost: within +15%?)
#   4. the judge under cProfile in the time left (where the judge's seconds go)
# If r1k-c4k is still out: `PROBE_ARGS="--control --repeat 2" VARIANTS="v0 judgecopy warm"
# bash benchmarks/judge_h200/round3_final.sh probe` says which placement holds it.
#   bash research/judge_cost/s28c1.sh
T0=$(date +%s)
BUDGET=${BUDGET:-575}
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
source benchmarks/judge_h200/venv.sh > /tmp/venv.log 2>&1 || { tail -5 /tmp/venv.log; exit 1; }
mkdir -p ${OUT:=/tmp/out}
R=$PWD
git log --oneline -1 > $OUT/commit.txt 2>/dev/null
(cd /tmp && timeout 120 /tmp/venv/bin/python -m socratic eval $R/src/socratic/kernels/flash_attn_fwd \
   --scenarios d128-s1k-b16-h16-causal --hidden 0 --no-compare --json > $OUT/smoke.json 2> $OUT/smoke.err)
SRC=$?
echo "smoke rc=$SRC $(( $(date +%s) - T0 )) s"
[ $SRC = 0 ] || { tail -6 $OUT/smoke.err; exit 3; }
timeout $(( $(left) - 300 )) bash benchmarks/judge_h200/round3_final.sh rms 2>&1 | tail -5
echo "after rms: $(left) s left"
COST_S=$(( $(left) - 100 )) bash benchmarks/judge_h200/round3_final.sh facost 2>&1 | tail -14
echo "after facost: $(left) s left"
if [ $(left) -gt 70 ]; then
  (cd /tmp && timeout $(( $(left) - 10 )) /tmp/venv/bin/python $R/research/judge_cost/profile.py $OUT/prof -- \
     flash_attn_fwd --scenarios bench --hidden 0 --no-compare > $OUT/profile.txt 2> $OUT/profile.err)
  echo "profile rc=$?"; tail -1 $OUT/profile.err
  grep -A25 "ncalls" $OUT/profile.txt | cut -c1-150 | head -55
fi
echo "total $(( $(date +%s) - T0 )) s"
