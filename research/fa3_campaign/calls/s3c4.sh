# call s3c4: the family winners of s3c3 combined (v46), with the producer's sleeping waits (v48); full set of the better; GPU tests
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v46 v48; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
sleep 42
bash $B/run.sh v46:smoke v46:bench v48:smoke v48:bench v41:bench
mv $OUT/evals.tgz $OUT/evals1.tgz; mv $OUT/logs.tgz $OUT/logs1.tgz
mkdir -p /tmp/e1 && tar xzf $OUT/evals1.tgz -C /tmp/e1
best=$(python3 -c "
import json
g = {c: json.load(open(f'/tmp/e1/evals/{c}.bench.json'))['summary'] for c in ('v46', 'v48')}
ok = {c: s['geomean_vs']['fa3'] for c, s in g.items() if s['n_correct'] == s['n']}
print(max(ok, key=ok.get))")
echo "full set: $best"
bash $B/run.sh $best:full
timeout 170 python3 -m pytest -m gpu tests -q -p no:cacheprovider --durations=8 > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -14 $OUT/gpu_tests.txt
