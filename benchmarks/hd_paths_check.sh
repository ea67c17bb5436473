# Issue 42's GPU check, on an H100 or H200 node, from the repository root, with .whl/ (the
# fa3-fwd wheel) carried: head dims 96 and 192 on the Hopper path (tests/candidates/
# fa3_hd_all.cu) beside the shipped kernel (tests/candidates/fa3_h200_best.cu, where they
# take the fa2 kernel), FA3, cuDNN and FA2 timed beside each. In $OUT/hd_paths.tgz (hd_paths/):
#   gpu.txt, draws.txt          the GPU; the space draws (seed SEED, first DRAWS) listed first
#   smoke_new.{json,err}        4 edge shapes on the new kernel, correctness only, 20 s a
#                               scenario: a hang or crash there skips its other runs
#   full_new.{json,err,txt}     the full set's 84 d96/d192 scenarios (lengths 1, 17, 127, 129,
#                               1000, q<k, q>k; causal and not; GQA 1/4/8), correctness only
#   timed_new.*, timed_old.*    the d96/d192 draws among the first DRAWS of seed SEED, checked
#                               and timed (against the baseline, FA3, cuDNN, FA2), each kernel
#   var_NAME.*                  a tile variant of the new kernel on its head dim's draws
#                               (default: d96 with three consumers and 96-key tiles; below)
#   table.txt                   the summary, printed last (benchmarks/hd_paths_table.py)
#   bash benchmarks/hd_paths_check.sh            # ~6-8 min; stops starting work at BUDGET s
#   DRAWS=48 bash benchmarks/hd_paths_check.sh   # fewer timed draws (~13 instead of 21)
#   NEW=file.cu OLD=file.cu SEED=S BUDGET=s      # other kernels, draw, time budget (500 s)
# socratic's children run `python -I` (no PYTHONPATH): socratic and FA3 live in /tmp/venv
T0=$(date +%s)
[ -x /tmp/venv/bin/socratic ] || { source benchmarks/judge_h200/venv.sh || exit 1; }
export PATH=/tmp/venv/bin:$PATH
PY=/tmp/venv/bin/python
NEW=${NEW:?NEW=the kernel to check beside the shipped one (fa3_hd_all.cu was promoted to it at 189f0f9)}; OLD=${OLD:-tests/candidates/fa3_h200_best.cu}
SEED=${SEED:-42042}; DRAWS=${DRAWS:-80}; BUDGET=${BUDGET:-500}
# the work in /tmp/hd_paths; $OUT gets hd_paths.tgz (all of it) and table.txt: a call brings
# back at most 8 files
D=/tmp/hd_paths; rm -rf $D; mkdir -p $D ${OUT:=/tmp/out}
trap 'tar czf $OUT/hd_paths.tgz -C /tmp hd_paths; cp $D/table.txt $OUT/ 2>/dev/null' EXIT
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# the seconds a step may take: its own cap, or what is left of the budget less 15 s for the table
cap() { local l=$(( $(left) - 15 )); [ $l -lt $1 ] && echo $l || echo $1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $D/gpu.txt
cat $D/gpu.txt
$PY -m socratic eval flash_attn_fwd --list --space $DRAWS --seed $SEED > $D/draws.txt || exit 1
$PY -m socratic eval flash_attn_fwd --list > $D/sets.txt || exit 1
IDS=$(grep -oE 'space-[0-9]+-[0-9]+-d(96|192)-[^ ]+' $D/draws.txt | paste -sd, -)
FULL=$(awk '/^full /{f=1;next} /^[^ ]/{f=0} f' $D/sets.txt | grep -oE '^ +d(96|192)-[^ ]+' | tr -d ' ' | paste -sd, -)
SMOKE=d96-s129-b2-h8-causal-gqa4,d192-q1000-k127-b1-h16-causal-gqa8,d96-q129-k1000-b2-h2-full,d192-s1000-b1-h2-causal
echo "timed draws: $(echo $IDS | tr , '\n' | grep -c .)  edge cases: $(echo $FULL | tr , '\n' | grep -c .)"

# ev NAME LIMIT FILE ARGS..: one evaluation, its document in NAME.json, progress in NAME.err
ev() {
  local name=$1 lim=$2 file=$3; shift 3
  if [ $lim -lt 30 ]; then echo "$name: skipped (budget spent)"; return 9; fi
  local t=$(date +%s)
  timeout $lim $PY -m socratic eval flash_attn_fwd --candidate $file --hidden 0 --json "$@" > $D/$name.json 2> $D/$name.err
  local rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - t )) s ($(grep -c '"event": "scenario"' $D/$name.err) scenarios done, limit $lim s)"
  $PY -c "import sys; from socratic.contracts import read_eval; from socratic.evaluator.report import table; print(table(read_eval(sys.argv[1])))" \
    $D/$name.json > $D/$name.txt 2>&1
  grep -E "correct  geomean" $D/$name.txt
  return $rc
}
# the new kernel's gate: any scenario that errs (timeout, crash) stops its other runs
ev smoke_new $(cap 150) $NEW --scenarios $SMOKE --no-timing --no-compare --timeout 20
GATE=$($PY -c "
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception: print('no result'); sys.exit()
bad = [r['id'] + ': ' + str(r.get('error')) for r in d['scenarios'] if r.get('error')]
print('; '.join(bad) if bad else 'ok')" $D/smoke_new.json)
echo "gate: $GATE"
if [ "$GATE" = ok ]; then
  ev full_new $(cap 150) $NEW --scenarios $FULL --no-timing --no-compare --timeout 20
  ev timed_new $(cap 200) $NEW --scenarios $IDS --timeout 45
fi
ev timed_old $(cap 200) $OLD --scenarios $IDS --timeout 45
# tile variants of the new kernel, each timed on the draws of its head dims, while budget is
# left: NAME:HD:KNOB=V,KNOB=V (HD a regex: 96, 192, 96|192; knobs the kernel's #ifndef ones)
#   VARIANTS="" bash benchmarks/hd_paths_check.sh                      # none
#   VARIANTS="bn176:96:HOP_BN_96=176 bn96:192:HOP_BN_192=96" bash benchmarks/hd_paths_check.sh
for v in ${VARIANTS-nc3bn96:96:HOP_NC_96=3,HOP_BN_96=96}; do
  name=${v%%:*}; rest=${v#*:}; vhd=${rest%%:*}; f=$D/var_$name.cu
  echo "${rest#*:}" | tr , '\n' | sed 's/^/#define /; s/=/ /' > $f && cat $NEW >> $f
  vids=$(echo $IDS | tr , '\n' | grep -E -- "-d($vhd)-" | paste -sd, -)
  [ "$GATE" = ok ] && [ -n "$vids" ] && ev var_$name $(cap 120) $f --scenarios $vids --timeout 45
done
echo "total $(( $(date +%s) - T0 )) s"
$PY benchmarks/hd_paths_table.py $D | tee $D/table.txt
