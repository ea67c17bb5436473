# Sourced by the device calls of session 21 on (s21c2.sh, s21c3.sh, promote.sh): the venv, the
# budget and one evaluation with its summary line. The caller sets T0, BUDGET and D (evals/ and
# logs/ under it) before calling ev.
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH PYTHONUNBUFFERED=1
PY=/tmp/venv/bin/python
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# the seconds a step may take: its own cap, or what is left of the budget less 10 s
cap() { local l=$(( $(left) - 10 )); [ $l -lt $1 ] && echo $l || echo $1; }
# ev NAME FILE LIMIT [FLAGS..]: `socratic eval` of FILE into $D/evals/NAME.json, progress in
# $D/logs/NAME.err; one line: exit code, seconds, correct / n, geomeans against the baseline and FA3
ev() {
  local name=$1 f=$2 lim=$3; shift 3
  [ $lim -lt 25 ] && { echo "eval $name: skipped (budget spent, $(left) s left)"; return 9; }
  local t=$(date +%s)
  timeout $lim $PY -m socratic eval flash_attn_fwd --candidate $f --timeout 30 --json "$@" > $D/evals/$name.json 2> $D/logs/$name.err
  local rc=$?
  echo "eval $name rc=$rc $(( $(date +%s) - t ))s (limit $lim) $($PY -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
print(s['n_correct'], '/', s['n'], 'base %.4f' % (s.get('geomean_speedup') or 0), 'fa3 %.4f' % (s.get('geomean_vs') or {}).get('fa3', 0))" $D/evals/$name.json 2>/dev/null)"
  [ $rc -ne 0 ] && tail -2 $D/logs/$name.err | cut -c1-300
  return $rc
}
