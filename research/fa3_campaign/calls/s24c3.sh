# call s24c3 (session 24, issue 39), ~9 min (timeout_s 590): the judge as it now ships.
# Marks between the copies of a timed sample only in a quarter of the pairs (blocks chosen at
# random, left out of the speed verdict; worker.MARKED_SHARE), the judge's buffers from
# cuMemAlloc (gpu.DirectMemory), the comparisons with the baseline beyond one rounding step.
#   1. RMSNorm's baseline against itself, bench --hidden 4, three runs (issue 39's control);
#      the first failing to run stops the call (the new code's first GPU run)
#   2. the round-3 GPU tests of the copies class and apart (the batch-ahead hostiles must still
#      fail, now through the marked pairs or marks_agree), their evidence kept
#   3. the shipped kernel (v100) on draw 28 three times: one bf16 step apart no longer fails
#   4. the other round-3 GPU tests in the time left
#   bash research/fa3_campaign/calls/s24c3.sh   (.whl, .whl_test, research/fa3_campaign/cands carried)
T0=$(date +%s)
BUDGET=${BUDGET:-570}
source research/fa3_campaign/calls/lib.sh || exit 1   # the venv, left, cap, ev
D=/tmp/s24c3; rm -rf $D; mkdir -p $D/evals $D/logs $D/evidence ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals logs evidence' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $D/logs/gpu.txt $D/card.txt
git rev-parse HEAD > $D/logs/commit.txt 2>/dev/null || true
rows() {  # rows FILE: correct / n, rows outside [0.99, 1.01], the speedups' range, marks_excess_us range
  $PY - "$1" <<'PYEOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"no result ({e})"); sys.exit()
rs = [s for s in doc["scenarios"] if s.get("speedup")]
sp = [s["speedup"] for s in rs]
out = [f"{s['id'][:18]} {s['speedup']:.3f}" for s in rs if not 0.99 <= s["speedup"] <= 1.01]
mx = [s["marks_excess_us"] for s in rs if s.get("marks_excess_us") is not None]
fails = [f"{s['id'][:24]}: {f[:150]}" for s in doc["scenarios"] for f in s.get("failures") or []]
print(f"{doc['summary']['n_correct']}/{doc['summary']['n']} outside {len(out)}/{len(rs)}"
      f" speedup {min(sp):.3f}-{max(sp):.3f}" + (f" marks_excess_us {min(mx):+.2f}..{max(mx):+.2f} ({len(mx)} rows)" if mx else "")
      + (" | " + "; ".join(out) if out else "") + "".join(f"\n   {f}" for f in fails[:4]))
PYEOF
}
R=src/socratic/kernels
for i in 1 2 3; do
  t=$(date +%s)
  (timeout $(cap 100) $PY -m socratic eval $R/rmsnorm --scenarios bench --hidden 4 --json > $D/evals/rms_ctl$i.json 2> $D/logs/rms_ctl$i.err)
  rc=$?
  echo "rms_ctl$i rc=$rc $(( $(date +%s) - t ))s $(rows $D/evals/rms_ctl$i.json)"
  if [ $i = 1 ] && [ $rc -gt 1 ]; then tail -5 $D/logs/rms_ctl$i.err | cut -c1-400; exit 1; fi
done
t=$(date +%s)
SOCRATIC_EVIDENCE=$D/evidence timeout $(cap 200) $PY -m pytest -q -rA -m gpu tests/test_round3_gpu.py -k "copies or apart" \
  -p no:cacheprovider --timeout 180 > $D/logs/tests_copies.log 2>&1
echo "round-3 tests (copies, apart) exit $? $(( $(date +%s) - t ))s: $(grep -E '^(FAILED|ERROR)|passed|failed' $D/logs/tests_copies.log | cut -c1-200 | tail -6)"
for r in 1 2 3; do
  ev v100.$r research/fa3_campaign/cands/v100.cu $(cap 60) --scenarios space-410041-28-d128-s518-b2-h2-full-gqa2 --hidden 0 --no-compare || true
  grep -o '"failures": \[[^]]*\]' $D/evals/v100.$r.json | grep -v '\[\]' | cut -c1-300
done
t=$(date +%s)
l=$(( $(left) - 15 ))
if [ $l -gt 60 ]; then
  SOCRATIC_EVIDENCE=$D/evidence timeout $l $PY -m pytest -q -rA -m gpu tests/test_round3_gpu.py -k "not copies and not apart" \
    -p no:cacheprovider --timeout 180 > $D/logs/tests_rest.log 2>&1
  echo "round-3 tests (the others) exit $? $(( $(date +%s) - t ))s: $(grep -E '^(FAILED|ERROR)|passed|failed' $D/logs/tests_rest.log | cut -c1-200 | tail -8)"
fi
echo "total $(( $(date +%s) - T0 )) s"
