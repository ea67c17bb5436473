# call s4c3: v60 = v54 + L2 hints + late rescale at d128 (the persistent kernel); variants over
# v60: 128-key tiles for short d128 without a mask (v61), no hop_tile (v62), early rescale at
# d64 (v63), 48 MB causal sections (v64); v48 again; the full set of the best, correctness only
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v60 v61 v62 v63 v64; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
sleep 45
bash $B/run.sh v60:smoke v60:bench v54:bench v61:smoke v61:bench v62:smoke v62:bench v63:smoke v63:bench v64:smoke v64:bench v48:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mkdir -p /tmp/e1 && tar xzf $OUT/evals1.tgz -C /tmp/e1
best=$(python3 -c "
import json
ok = {}
for c in ('v60', 'v61', 'v62', 'v63', 'v64'):
    try: s = json.load(open(f'/tmp/e1/evals/{c}.bench.json'))['summary']
    except Exception: continue
    if s['n_correct'] == s['n']: ok[c] = s['geomean_vs']['fa3']
print(max(ok, key=ok.get))")
echo "full set: $best"
EXTRA=--no-timing EVAL_LIMIT=230 bash $B/run.sh $best:full
