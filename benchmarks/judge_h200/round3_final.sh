# Judge round 3, the record issue 39 asks for, in device calls of under 10 minutes each
# (the machine stays warm between them: /tmp/venv is made once):
#   bash benchmarks/judge_h200/round3_final.sh probe     # research/launch_order (VARIANTS=...): what moves microsecond rows off 1.0 (~5 min)
#   bash benchmarks/judge_h200/round3_final.sh first     # when device time is short: copies, tamper, sandbox tests + one RMSNorm control
#   bash benchmarks/judge_h200/round3_final.sh tests     # tests/test_round3_gpu.py (hostile candidates, hangs, planted modules)
#   bash benchmarks/judge_h200/round3_final.sh gpu       # the other GPU-marked test files (330 s was too short, s16)
#   bash benchmarks/judge_h200/round3_final.sh rest      # the GPU-marked tests of the kernels, the FA3 session, the lock, the demo campaign
#   bash benchmarks/judge_h200/round3_final.sh rms       # RMSNorm's 3 controls
#   bash benchmarks/judge_h200/round3_final.sh fa        # attention's 3 controls, the shipped kernel new vs old evaluator
#   bash benchmarks/judge_h200/round3_final.sh controls  # rms then fa, in one call
#   bash benchmarks/judge_h200/round3_final.sh rmsbest   # RMSNorm's 3 controls, then the shipped kernel new vs old evaluator
#   bash benchmarks/judge_h200/round3_final.sh cost      # a bench evaluation's seconds, old and new alternating (until COST_S, 570 s)
#   bash benchmarks/judge_h200/round3_final.sh facost    # attention's 3 controls, then cost until COST_S (570 s)
#   bash benchmarks/judge_h200/round3_final.sh one       # controls, then round-3 tests (K=) until CALL_S (570 s) of the call
# Every evaluation a test runs is kept in $OUT/evidence (tests/evalcli.py, SOCRATIC_EVIDENCE);
# the controls and side-by-side runs in $OUT/evals. collect.py turns them into
# hostile_h200.json and control_h200.json.
[ -x /tmp/venv/bin/socratic ] || { OLD=1 source benchmarks/judge_h200/venv.sh || exit 1; }
# a machine set up before the test extras were carried (textual, the test doubles)
/tmp/venv/bin/python -c "import textual, socratic_doubles" 2>/dev/null || { source <(sed -n '/^test_extras()/,/^}/p' benchmarks/judge_h200/venv.sh); test_extras; }
export PATH=/tmp/venv/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
# each invocation its own evidence, tarred into $OUT at the end (a call brings back only a few
# files; two invocations in one call must not wipe each other's)
MODE=$1; R3=/tmp/r3/$MODE.$$; rm -rf $R3; mkdir -p $R3/evidence $R3/evals
trap 'tar czf $OUT/evidence_$MODE.tgz -C $R3 evidence evals; python3 benchmarks/judge_h200/copy_profiles.py $R3/evidence $R3/evals > $OUT/copy_profiles_$MODE.txt' EXIT
ev() {  # ev LABEL PYTHON TASK SET [FLAGS...]: the task's baseline unless --candidate is in FLAGS
  label=$1 py=$2 task=$3 set_=$4; shift 4
  t0=$(date +%s.%N)
  (cd /tmp && timeout ${EV_S:-200} $py -m socratic eval $task --scenarios $set_ --json "$@" > $R3/evals/$label.json 2> $R3/evals/$label.err)
  rc=$?
  python3 benchmarks/judge_h200/row.py $label $rc $(python3 -c "print($(date +%s.%N)-$t0)") $R3/evals/$label.json $R3/evals/$label.err
}
tests() {  # tests LIMIT FILES...: pytest from /tmp (socratic from /tmp/venv), the evidence kept
  limit=$1; shift
  (cd /tmp && SOCRATIC_EVIDENCE=$R3/evidence timeout $limit /tmp/venv/bin/python -m pytest -p no:cacheprovider \
     -m gpu -q -rA --timeout 240 ${K:+-k "$K"} "${@/#/$OLDPWD/}" >> $OUT/gpu_tests.log 2>&1; echo "pytest exit $?")
  grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.log | cut -c1-220 | tail -12
}
R=$PWD/src/socratic/kernels
rms() { for i in 1 2 3; do ev rms_ctl$i /tmp/venv/bin/python $R/rmsnorm bench --hidden 4; done; }
best() {   # the shipped kernel under this evaluator and the old one, side by side (figures and cost)
  ev fa_best_new /tmp/venv/bin/python $R/flash_attn_fwd bench --candidate $PWD/tests/candidates/fa3_h200_best.cu
  ev fa_best_old /tmp/venv_old/bin/python /tmp/oldsrc/kernels/flash_attn_fwd bench --candidate $PWD/tests/candidates/fa3_h200_best.cu
}
cost() {   # a bench evaluation's cost (the 26 listed, no hidden draw: the same work), old and new
          # alternating, after one warm-up evaluation each of one scenario, timed and compared
          # (every build, CUDA's and the comparisons' first loads: no timed evaluation pays them);
          # each ev bounded so the call ends by COST_S (570)
  local cand=$PWD/tests/candidates/fa3_h200_best.cu old="/tmp/venv_old/bin/python /tmp/oldsrc/kernels/flash_attn_fwd"
  local new="/tmp/venv/bin/python $R/flash_attn_fwd"
  ev fa_warm_new $new d128-s1k-b16-h16-full --hidden 0 --candidate $cand
  ev fa_warm_old $old d128-s1k-b16-h16-full --hidden 0 --candidate $cand
  for i in 1 2 3; do
    for who in old new; do
      local left=$(( ${COST_S:-570} - SECONDS - 10 ))
      [ $left -gt 70 ] || return 0
      if [ $who = old ]; then EV_S=$left ev fa_cost_old$i $old bench --hidden 0 --candidate $cand
      else EV_S=$left ev fa_cost_new$i $new bench --hidden 0 --candidate $cand; fi
    done
  done
}
fa_controls() { for i in 1 2 3; do ev fa_ctl$i /tmp/venv/bin/python $R/flash_attn_fwd bench --hidden 4 --no-compare; done; }
fa() { fa_controls; best; }
case "$1" in
  probe) /tmp/venv/bin/python research/launch_order/probe.py ${PROBE_ARGS:-} ${VARIANTS:-v0 swap pool oneset noevents malloc}
         cat /tmp/launch_order/orders.* | tail -40 ;;
  tests) tests 540 tests/test_round3_gpu.py ;;
  first) K="copies or out_of_reach or keeps_nothing" tests 420 tests/test_round3_gpu.py   # the new defences first
         ev rms_ctl1 /tmp/venv/bin/python $R/rmsnorm bench --hidden 4 ;;
  gpu)   tests ${GPU_S:-500} tests/test_evaluator_gpu.py tests/test_judge_gpu.py tests/test_hopper_probe.py ;;
  rest)  tests ${REST_S:-540} tests/test_kernels.py tests/test_fa3_session.py tests/test_gpulock.py tests/test_harness_demo.py ;;
  rms)   rms ;;
  fa)    fa ;;
  controls) rms; fa ;;
  rmsbest) rms; best ;;
  cost)  cost ;;
  facost) fa_controls; cost ;;
  one)   rms; fa   # when one call may be all there is: the controls, then the round-3 tests in what is left
         left=$(( ${CALL_S:-570} - SECONDS )); [ $left -gt 60 ] || { echo "no time left for tests"; exit 0; }
         K="${K:-copies or out_of_reach}" tests $left tests/test_round3_gpu.py ;;
  *) echo "usage: round3_final.sh probe|tests|first|gpu|rest|rms|fa|controls|rmsbest|cost|facost|one"; exit 2 ;;
esac
