# Issue 41's GPU check, on an H100 or H200 node, from the repository root, with .whl/ (the
# fa3-fwd wheel) carried: `socratic eval flash_attn_fwd --space N --seed S` on the shipped
# kernel (tests/candidates/fa3_h200_best.cu), twice with the same seed; FA3, cuDNN and FA2
# timed beside it. In $OUT/space.tgz (space/): gpu.txt, draws.txt (the ids the seed draws, listed
# before anything runs), runK.json (the result, with `coverage`), runK.txt (its table),
# runK.err (progress lines), compare.txt; a short table last (benchmarks/space_compare.py:
# the same draws? every cell's geomean within 3%? each hidden field's cells, run 1 | run 2).
#   bash benchmarks/space_check.sh [N [SEED]]      N = 64, SEED = 410041 by default
#   RUNS=1 bash benchmarks/space_check.sh; RUNS=2 bash benchmarks/space_check.sh   # one run a call
# (with RUNS=2 alone, run1.json from the earlier call, on the same warm machine, is in /tmp/space; or SPACE_RUN1)
# socratic's children run `python -I` (no PYTHONPATH): socratic and FA3 live in /tmp/venv
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH
N=${1:-64}; SEED=${2:-410041}; K=tests/candidates/fa3_h200_best.cu
# the work in /tmp/space; $OUT gets space.tgz (all of it) and compare.txt: a call brings back
# at most 8 files
D=/tmp/space; mkdir -p $D
trap 'tar czf $OUT/space.tgz -C /tmp space; cp $D/compare.txt $OUT/ 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $D/gpu.txt
/tmp/venv/bin/python -m socratic eval flash_attn_fwd --list --space $N --seed $SEED > $D/draws.txt || exit 1
for run in ${RUNS:-1 2}; do
  t0=$(date +%s)
  timeout ${RUN_LIMIT:-285} /tmp/venv/bin/python -m socratic eval flash_attn_fwd --candidate $K --space $N \
    --seed $SEED --json > $D/run$run.json 2> $D/run$run.err
  rc=$?
  echo "run $run: exit $rc in $(( $(date +%s) - t0 )) s ($(grep -c '"event": "scenario"' $D/run$run.err) scenarios done)"
  /tmp/venv/bin/python -c "import sys; from socratic.contracts import read_eval; from socratic.evaluator.report import table; print(table(read_eval(sys.argv[1])))" $D/run$run.json > $D/run$run.txt 2>&1
  grep -E "correct  geomean|^coverage:" $D/run$run.txt
done
R1=${SPACE_RUN1:-$D/run1.json}
if [ -f $R1 ] && [ -f $D/run2.json ]; then
  /tmp/venv/bin/python benchmarks/space_compare.py $R1 $D/run2.json > $D/compare.txt 2>&1; rc=$?
  cat $D/compare.txt
  exit $rc
fi
cat $D/run${RUNS:-1}.txt | sed -n '/^coverage:/,$p'
