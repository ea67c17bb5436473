# on the device: evaluate candidates in order; run.sh SET CAND... (CAND = name in benchmarks/fa3_campaign/cands, from make.py, or "baseline")
[ -f .devtools/setup.sh ] && source .devtools/setup.sh   # on the device: wheels and socratic into /tmp/site
set +e
SET=$1; shift
mkdir -p $OUT/evals /tmp/logs
for c in "$@"; do
  t0=$(date +%s)
  if [ "$c" = baseline ]; then src=kernels/flash_attn_fwd/baseline.cu; else src=benchmarks/fa3_campaign/cands/$c.cu; fi
  timeout 300 python3 -m socratic eval flash_attn_fwd --candidate $src --scenarios $SET --timeout 30 $EXTRA --json > $OUT/evals/$c.$SET.json 2> /tmp/logs/$c.$SET.err
  echo "eval $c $SET rc=$? $(( $(date +%s) - t0 ))s"
  tail -2 /tmp/logs/$c.$SET.err | cut -c1-300
done
(cd $OUT && tar czf evals.tgz evals && rm -rf evals)
tar czf $OUT/logs.tgz -C /tmp logs
