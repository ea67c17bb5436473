# Ran in session 20 (benchmarks/results/s16c1): fa3_hd_all.cu is now tests/candidates/fa3_h200_best.cu
# (`git show 189f0f9:tests/candidates/fa3_hd_all.cu` is the file this script read).
# call s16c1 (session 16, issue 42; written in session 15, not yet run): promote
# tests/candidates/fa3_hd_all.cu (= v100: head dims 96 and 192 on the Hopper path; the same
# machine code as v96 at head dims 64/128/256) over v96, the shipped kernel, in one call.
# Session 15 (H100, benchmarks/results/s15_h100_20261206): v100 84/84 on the full set's d96/d192
# scenarios, 0.990x FA3 over `--space 64 --seed 410041` against v96's 0.833x / 0.842x.
#   bash research/fa3_campaign/calls/s16c1.sh      (from the repository root, `.whl` carried:
#                                                   the fa3-fwd wheel; ~7-8 min, BUDGET=510 s)
# In order, each skipped once the budget is spent (the space runs and repeats go first):
#   v100 smoke (the gate: a failure stops v100's runs), v96 bench, v100 bench (FA3, cuDNN, FA2
#   and 4 hidden draws each, as the campaign's evaluations), v100 full (--no-timing, as s10c4),
#   v100 and v96 `--space 64 --seed 410041`, then v96r and v100r bench while time is left.
# Back in $OUT (a call returns at most 8 files): evals.tgz (evals/NAME.SET.json, the names
# record.py imports: results/s16c1/evals/...), logs.tgz (each run's stderr, gpu.txt), table.txt.
# Prediction: bench v100 = v96 within noise (same SASS on the bench's head dims), full 210/210,
# space v100 ~0.99x FA3, v96 ~0.84x (d96/d192 0.9x against 0.5-0.6x).
T0=$(date +%s)
BUDGET=${BUDGET:-510}
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH PYTHONUNBUFFERED=1
PY=/tmp/venv/bin/python
B=research/fa3_campaign; C=$B/cands
mkdir -p $C
# the candidates by the campaign's names (the path each result records); a repeat is the same file
cp tests/candidates/fa3_hd_all.cu $C/v100.cu; cp $C/v100.cu $C/v100r.cu
cp tests/candidates/fa3_h200_best.cu $C/v96.cu; cp $C/v96.cu $C/v96r.cu
D=/tmp/s16c1; rm -rf $D; mkdir -p $D/evals $D/logs ${OUT:=/tmp/out}
trap 'tar czf $OUT/evals.tgz -C $D evals; tar czf $OUT/logs.tgz -C $D logs; cp $D/table.txt $OUT/ 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $D/logs/gpu.txt
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# the seconds a step may take: its own cap, or what is left of the budget less 10 s for the table
cap() { local l=$(( $(left) - 10 )); [ $l -lt $1 ] && echo $l || echo $1; }
# ev NAME SET LIMIT [FLAGS..]: evaluations/NAME.SET.json; SET space64 is `--space 64 --seed 410041`
ev() {
  local c=$1 set_=$2 lim=$3; shift 3
  if [ $lim -lt 40 ]; then echo "eval $c $set_: skipped (budget spent, $(left) s left)"; return 9; fi
  local sel="--scenarios $set_"; [ $set_ = space64 ] && sel="--space 64 --seed 410041"
  local t=$(date +%s)
  timeout $lim $PY -m socratic eval flash_attn_fwd --candidate $C/$c.cu $sel --timeout 30 --json "$@" \
    > $D/evals/$c.$set_.json 2> $D/logs/$c.$set_.err
  local rc=$?
  echo "eval $c $set_ rc=$rc $(( $(date +%s) - t ))s (limit $lim) $($PY -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
print(s['n_correct'], '/', s['n'], 'fa3 %.4f' % (s.get('geomean_vs') or {}).get('fa3', 0))" $D/evals/$c.$set_.json 2>/dev/null)"
  [ $rc -ne 0 ] && tail -2 $D/logs/$c.$set_.err | cut -c1-300
  return $rc
}
ev v100 smoke $(cap 90)
GATE=$?
ev v96 bench $(cap 150)
if [ $GATE -eq 0 ]; then
  ev v100 bench $(cap 150)
  ev v100 full $(cap 90) --no-timing
  ev v100 space64 $(cap 160)
fi
ev v96 space64 $(cap 160)
ev v96r bench $(cap 150)
[ $GATE -eq 0 ] && ev v100r bench $(cap 150)
echo "total $(( $(date +%s) - T0 )) s"
# the table, last: bench side by side (xFA3, TFLOP/s), then the space runs by head dim
{
  cat $D/logs/gpu.txt
  names=$(for n in v96 v100 v96r v100r; do [ -s $D/evals/$n.bench.json ] && echo $n; done)
  [ -n "$names" ] && $PY $B/summary.py $D/evals $names | sed -n '1p;$p'
  $PY $B/promote_tables.py summary $D/evals
} > $D/table.txt 2>&1
cat $D/table.txt
