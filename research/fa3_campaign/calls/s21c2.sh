# call s21c2 (session 21, issues 39 and 42): what s20c1 and s21c1 ask, in one call of ~9.5 min
# (timeout_s 595) for a session whose device time allows one. Steps in the order 2, 3, 1, each
# capped so the whole stays within BUDGET s (default 560):
#  1. issue 39: RMSNorm's control under research/launch_order/probe.py, v0 / warm / onectx, one
#     run each (REPEAT), PROBE_S s at most
#  2. issue 42: v102 (cands/v102.cu, carried: v100 + v101_empty_noq.patch + v102_pack_gqa.patch)
#     full --no-timing (the gate), then `--space 64 --seed 410041` (s16c1 read v100 there)
#  3. head dim 96's tiles over v102 on the d96 draws among the first 160 of seed 410041:
#     v102 itself, nc3bn96, nc3bn112 (three consumers; build with no spills), --no-compare
#     (each against the baseline in its own run; v102's space run gives its FA3 ratio)
#   bash research/fa3_campaign/calls/s21c2.sh    (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-560}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
C=${CAND:-research/fa3_campaign/cands/v102.cu}; N=$(basename $C .cu)
D=/tmp/s21c2; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs; (cd /tmp && tar czf $OUT/launch_order.tgz launch_order 2>/dev/null)' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt
ev $N.full $C $(cap 90) --scenarios full --no-timing
GATE=$?
if [ $GATE -eq 0 ]; then
  ev $N.space64 $C $(cap 160) --space 64 --seed 410041
  IDS=$($PY -m socratic eval flash_attn_fwd --list --space 160 --seed 410041 | grep -oE "space-[0-9]+-[0-9]+-d96-[^ ]+" | paste -sd, -)
  for v in ${D96-$N: nc3bn112:HOP_NC_96=3,HOP_BN_96=112 nc3bn96:HOP_NC_96=3,HOP_BN_96=96}; do
    name=${v%%:*}; f=$D/$name.cu
    echo "${v#*:}" | tr , '\n' | grep . | sed 's/^/#define /; s/=/ /' > $f; cat $C >> $f
    ev d96.$name $f $(cap 80) --scenarios $IDS --hidden 0 --no-compare
  done
fi
[ $(left) -gt 60 ] && timeout $(cap ${PROBE_S:-150}) $PY research/launch_order/probe.py --control --repeat ${REPEAT:-1} ${VARIANTS:-v0 warm onectx} > $D/logs/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 ))s"; cat /tmp/launch_order/summary.txt 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
$PY research/fa3_campaign/promote_tables.py coverage $D/evals/$N.space64.json benchmarks/results/s16c1/evals/v100.space64.json 2>/dev/null | head -14   # last column: v100 in s16c1 (another call)
