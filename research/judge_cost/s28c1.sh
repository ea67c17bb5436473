# call s28c1 (issue 39: the control's r1k-c4k row under the s27 pair), ~9 min (timeout_s 590),
# any card (name it); .whl carried.
# Session 28 (H100, def9da3): the s27 pair brought the bench cost to 24.2 s against the old
# evaluator's 20.8 s (same call), but RMSNorm's r1k-c4k read 0.988-0.989 against itself in all
# three controls (0.992-0.994 in s26): the candidate ~0.1 us a call slower in both orders
# (order_ratio 1.003). Its inputs are now copied by the judge's stream, so nothing of its own
# context touches them before its sample. This asks, with the probe's control (the bench set
# and 4 hidden draws, the baseline against itself), which of these holds every row in
# [0.99, 1.01], two runs each (then, in the time left, the judge under cProfile):
#   v0        as on main (INPUTS_COPIED_IN "judge")
#   candcopy  the candidate's inputs copied on its own stream at the head of its sample (no wait more)
#   warm      every page of a sample's buffers read in its own context before its lead-in
#   candcopy+warm
# The winner is then made the default (worker.INPUTS_COPIED_IN / WARM_PAGES) and the next call
# runs `round3_final.sh facost` and `rms` on it (the cost, and both tasks' controls).
#   bash research/judge_cost/s28c1.sh
T0=$(date +%s)
BUDGET=${BUDGET:-575}
source benchmarks/judge_h200/venv.sh > /tmp/venv.log 2>&1 || { tail -5 /tmp/venv.log; exit 1; }
mkdir -p ${OUT:=/tmp/out}; R=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
timeout $(( BUDGET - ($(date +%s) - T0) - 20 )) /tmp/venv/bin/python research/launch_order/probe.py --control --repeat 2 \
  ${VARIANTS:-v0 candcopy warm candcopy+warm} > $OUT/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 )) s"
(cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)
/tmp/venv/bin/python research/launch_order/roles.py /tmp/launch_order ${VARIANTS:-v0 candcopy warm candcopy+warm} > $OUT/roles.txt 2>&1
cat /tmp/launch_order/summary.txt 2>/dev/null || tail -20 $OUT/probe.log
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
if [ $(left) -gt 90 ]; then   # where the judge's seconds go (the cost is +16%: research/judge_cost)
  (cd /tmp && timeout $(( $(left) - 15 )) /tmp/venv/bin/python $R/research/judge_cost/profile.py $OUT/prof -- \
     flash_attn_fwd --scenarios bench --hidden 0 --no-compare > $OUT/profile.txt 2> $OUT/profile.err)
  echo "profile rc=$?"; tail -2 $OUT/profile.err
  grep -A28 "ncalls" $OUT/profile.txt | cut -c1-150 | head -60
fi
echo "total $(( $(date +%s) - T0 )) s"
