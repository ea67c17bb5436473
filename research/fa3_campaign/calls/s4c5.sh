# call s4c5, on what was left of session 4's device time: v66 = v65 with V waited for before S
# is issued at d64 only (HOP_WAIT_V_LATE_64=0: d64 lost 1-2% to the late wait in s4c1 and s4c2);
# v65 again; v66's full set
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
bash $B/run.sh v66:smoke v66:bench v65:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
EXTRA=--no-timing EVAL_LIMIT=60 bash $B/run.sh v66:full
