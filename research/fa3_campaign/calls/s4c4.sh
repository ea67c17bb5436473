# call s4c4, the last of session 4's device time: v65 = v61 (128-key tiles for d128 without a
# mask up to 1024 keys) + early rescale at d64 (v63's knob); v61 again beside it; v65's full set
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
bash $B/run.sh v65:smoke v65:bench v61:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
EXTRA=--no-timing EVAL_LIMIT=120 bash $B/run.sh v65:full
