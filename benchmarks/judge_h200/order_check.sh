# The launch-order check (H100, session 14): RMSNorm's baseline against itself on tiny hidden
# shapes, where the candidate context's input copies once overlapped the baseline's sample
# (1.16x baseline-first vs 1.00x candidate-first); then the two GPU tests that fixed tests
# changed. A table last; evaluations in $OUT/evidence.tgz.
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
mkdir -p /tmp/evidence
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
for i in 1 2; do
  (cd /tmp && timeout 120 /tmp/venv/bin/python -m socratic eval rmsnorm --scenarios r1-c4k,r17-c1000 --hidden 8 --seed $i --json > /tmp/evidence/order$i.json 2>/dev/null)
  /tmp/venv/bin/python -c "
import json,sys; d=json.load(open('/tmp/evidence/order$i.json'))
for r in d['scenarios']+(d.get('hidden') or []): print(f\"{r['id']:<24} copies {r.get('copies')} speedup {r.get('speedup') or 0:.4f} order {r.get('order_ratio') or 0:.4f} {r['failures'][:1]}\")"
done
(cd /tmp && SOCRATIC_EVIDENCE=/tmp/evidence timeout 200 /tmp/venv/bin/python -m pytest -p no:cacheprovider -m gpu -q --timeout 150 \
  $OLDPWD/tests/test_evaluator_gpu.py -k "dlopen or pointer_cache or baseline_passes" 2>&1 | tail -4)
tar czf $OUT/evidence.tgz -C /tmp evidence
