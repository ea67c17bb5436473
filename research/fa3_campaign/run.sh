# on the device, from the repository root: evaluate candidates in order with the real evaluator
#   run.sh NAME:SET ...   (NAME: cands/NAME.cu from make.py, or "baseline"; SET: smoke, bench, full)
# A candidate whose smoke evaluation fails (or hangs) is skipped for the rest of the call,
# and so is its repeat NAMEr.
# Results: $OUT/evals.tgz (evals/NAME.SET.json), logs: $OUT/logs.tgz; a side-by-side table last.
source research/fa3_campaign/device_setup.sh || exit 1
set +e
mkdir -p $OUT/evals /tmp/logs
failed=" "
bench=()
for item in "$@"; do
  c=${item%%:*}; set_=${item#*:}
  # a repeat (NAME r) is the same file: skipped with it
  case "$failed" in *" ${c%r} "*) echo "skip $c $set_ (its smoke failed)"; continue;; esac
  t0=$(date +%s)
  if [ "$c" = baseline ]; then src=kernels/flash_attn_fwd/baseline.cu; else src=research/fa3_campaign/cands/$c.cu; fi
  timeout ${EVAL_LIMIT:-400} python3 -m socratic eval flash_attn_fwd --candidate $src --scenarios $set_ --timeout ${SCENARIO_TIMEOUT:-20} $EXTRA --json \
    > $OUT/evals/$c.$set_.json 2> /tmp/logs/$c.$set_.err
  rc=$?
  echo "eval $c $set_ rc=$rc $(( $(date +%s) - t0 ))s $(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print(s['n_correct'],'/',s['n'],'fa3 %.3f' % (s.get('geomean_vs') or {}).get('fa3',0))" $OUT/evals/$c.$set_.json 2>/dev/null)"
  [ $rc -ne 0 ] && tail -2 /tmp/logs/$c.$set_.err | cut -c1-300
  [ "$set_" = smoke ] && [ $rc -ne 0 ] && failed="$failed$c "
  [ "$set_" = bench ] && [ -s $OUT/evals/$c.$set_.json ] && bench+=("$c")
  (cd $OUT && tar czf evals.tgz.part evals && mv evals.tgz.part evals.tgz)   # what is done comes back
done
[ ${#bench[@]} -gt 0 ] && python3 research/fa3_campaign/summary.py $OUT/evals "${bench[@]}" | tee $OUT/side_by_side.txt
rm -rf $OUT/evals
tar czf $OUT/logs.tgz -C /tmp logs
