# on the H200, from the repository root: evaluations in order, each
# `LABEL=EVALUATOR:TASK:CANDIDATE:SET[:FLAGS]` (EVALUATOR new or old; CANDIDATE a path, or
# "baseline"; FLAGS joined by "+", e.g. --no-compare+--no-timing); JSON in
# $OUT/evals/LABEL.json, stderr in /tmp/logs; a table last. EXTRA goes on every command line.
source benchmarks/judge_h200/setup.sh || exit 1
# the hostile candidates of tests/candidates/*_hostile.py as files: /tmp/cands/NAME.cu
PYTHONPATH=. python3 -c "
import os; os.makedirs('/tmp/cands', exist_ok=True)
from tests.candidates import blindspot_hostile as c, isolation_hostile as a, rmsnorm_hostile as b
for m in (a, b, c):
    for n in {**getattr(m, 'ENTRIES', {}), **getattr(m, 'STATIC', {}), **getattr(m, 'SOURCES', {})}:
        open(f'/tmp/cands/{n}.cu', 'w').write(m.source(n))
"
mkdir -p $OUT/evals /tmp/logs
for item in "$@"; do
  label=${item%%=*}; spec=${item#*=}
  IFS=: read -r which task cand set_ flags <<< "$spec"
  if [ "$which" = old ]; then pp=$OLD; else pp=$NEW; fi
  args=(eval "$task" --scenarios "$set_" --json $EXTRA ${flags//+/ })
  [ "$cand" != baseline ] && args+=(--candidate "$cand")
  t0=$(date +%s%N)
  PYTHONPATH=$pp timeout ${EVAL_LIMIT:-300} python3 -m socratic "${args[@]}" > $OUT/evals/$label.json 2> /tmp/logs/$label.err
  rc=$?
  t1=$(date +%s%N)
  python3 benchmarks/judge_h200/row.py "$label" $rc "$(( (t1 - t0) / 1000000 ))e-3" $OUT/evals/$label.json /tmp/logs/$label.err
  (cd $OUT && tar czf evals.tgz.part evals && mv evals.tgz.part evals.tgz)   # what is done comes back
  tar czf $OUT/logs.tgz -C /tmp logs
done | tee $OUT/table.txt
rm -rf $OUT/evals
