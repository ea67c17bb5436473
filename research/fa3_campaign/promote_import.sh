# The CPU steps after a promotion call (calls/promote.sh, or s16c1.sh in session 20), from the
# repository root, socratic on PATH (the worktree's .venv/bin):
#   bash research/fa3_campaign/promote_import.sh CALL NEW OLD FILES_AT STEPS
# CALL: the call's name (s23c2); NEW, OLD: the kernels it ran, research/fa3_campaign/cands/NEW.cu
# and OLD.cu (OLD: the shipped kernel as it was; the repeats NEWr, OLDr are copies of them).
# FILES_AT: the folder the device call's files came back in (evals.tgz, logs.tgz, table.txt).
# STEPS: the steps to append to steps.txt (as s16c1_steps.txt: its `say` texts written from the
# call's figures, `@@import CALL` naming each result to import; checked against what came back). It
#   1. unpacks evals.tgz and logs.tgz into results/CALL/ (evals/NAME.SET.json: record.py's names),
#   2. writes cands/NEWr.cu and OLDr.cu and checks each imported result's candidate sha256
#      against cands/NAME.cu (the file the call evaluated),
#   3. appends STEPS to steps.txt, unpacks the pack into sessions/fa3-h200, replays the new steps
#      (record.py FIRST: the imports resume the campaign; `@@stop NEW` puts NEW in the workspace;
#      `@@giveup` ends it), packs it back over src/socratic/sessions/fa3-h200.socratic,
#   4. copies cands/NEW.cu over tests/candidates/fa3_h200_best.cu (the shipped kernel),
#   5. prints each new evaluation's number, file and figures (for tests/test_fa3_session.py's
#      constants) and writes results/CALL/listed.md and coverage.md (docs/CAMPAIGN_FA3.md's tables).
# DRY=1 runs it with TODO texts left in (in a scratch clone: it rewrites the pack).
# The space runs (set space:64@410041) are not imported: the pack's task (its copy of task.toml
# from session 1) declares no [hidden] space to draw them from; they stay under
# results/CALL/evals and benchmarks/results/.
# Session 20 ran it as promote_hd_all.sh for s16c1 (v100 over v96; PROMOTE_HD_ALL.md), with the
# two kernels read from tests/candidates/ (fa3_hd_all.cu, fa3_h200_best.cu).
set -e
USAGE="usage: promote_import.sh CALL NEW OLD FILES_AT STEPS"
CALL=${1:?$USAGE}; NEW=${2:?$USAGE}; OLD=${3:?$USAGE}; A=${4:?$USAGE}; STEPS=${5:?$USAGE}
B=research/fa3_campaign; R=$B/results/$CALL; PACK=src/socratic/sessions/fa3-h200.socratic
[ -f $PACK ] && [ -f $B/steps.txt ] || { echo "run from the repository root"; exit 2; }
if grep -q TODO "$STEPS" && [ -z "$DRY" ]; then echo "$STEPS: write the TODO texts first"; exit 2; fi
[ -e sessions/fa3-h200 ] && { echo "sessions/fa3-h200 exists: remove it first"; exit 2; }
rm -rf $R; mkdir -p $R
tar xzf $A/evals.tgz -C $R; tar xzf $A/logs.tgz -C $R 2>/dev/null || true
for k in $NEW $OLD; do
  [ -f $B/cands/$k.cu ] || { echo "promote_import.sh: $B/cands/$k.cu: no such file (the kernel call $CALL ran)"; exit 2; }
  cp $B/cands/$k.cu $B/cands/${k}r.cu
done
# every import line names a result that came back whole, evaluated from the file it names
python3 - "$STEPS" "$R" "$B" "$CALL" <<'EOF'
import hashlib, json, sys
from pathlib import Path
steps, res, b, want = Path(sys.argv[1]).read_text(), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
lines = [l.split() for blk in steps.split("\n@@") if blk.lstrip("@").startswith("import")
         for l in blk.strip().splitlines()[1:] if l.strip()]
have = sorted(p.name for p in (res / "evals").glob("*.json"))
bad = []
for call, name, set_ in lines:
    p = res / "evals" / f"{name}.{set_}.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        bad.append(f"{p.name}: {exc}"); continue
    sha = hashlib.sha256((b / "cands" / f"{name}.cu").read_bytes()).hexdigest()
    if d["candidate"]["sha256"] != sha:
        bad.append(f"{p.name}: evaluated {d['candidate']['path']}, not cands/{name}.cu")
    if call != want:
        bad.append(f"{call} {name} {set_}: not call {want}")
print("results back:", ", ".join(have))
print("to import:", ", ".join(f"{n}.{s}" for _, n, s in lines))
if bad:
    sys.exit("promote_import: " + "; ".join(bad))
EOF
FIRST=$(python3 -c "print(len([s for s in open('$B/steps.txt').read().split('\n@@') if s.strip()]))")
BEFORE=$(python3 -c "from socratic.sessionfiles import open_session; from pathlib import Path; print(len(open_session(Path('$PACK')).names('evals')))")
printf '%s\n' "$(cat "$STEPS")" >> $B/steps.txt
socratic unpack fa3-h200 sessions/fa3-h200
python3 $B/record.py $FIRST | tee $R/record.log
socratic pack sessions/fa3-h200 -o /tmp/fa3-h200.socratic.new && mv /tmp/fa3-h200.socratic.new $PACK
rm -rf sessions/fa3-h200
cp $B/cands/$NEW.cu tests/candidates/fa3_h200_best.cu
python3 - "$PACK" <<'EOF'
import sys
from socratic.sessionfiles import open_session
from pathlib import Path
f = open_session(Path(sys.argv[1]))
print("evaluations in the pack now (n  set  candidate  n_correct/n  vs fa3  hidden):")
for name in f.names("evals")[-12:]:
    d = f.read_json(name)
    s, h = d["summary"], d.get("hidden_summary") or {}
    print(f"  {name}  {d['set']:6} {d['candidate']['path']:38} {s['n_correct']}/{s['n']}  "
          f"{(s.get('geomean_vs') or {}).get('fa3', 0):.4f}  hidden {h.get('n_correct')}/{h.get('n')}  {d['gpu']['name']}")
EOF
python3 $B/promote_tables.py listed $R/evals/$NEW.bench.json > $R/listed.md
[ -s $R/evals/$NEW.space64.json ] && python3 $B/promote_tables.py coverage $R/evals/$NEW.space64.json \
  $( [ -s $R/evals/$OLD.space64.json ] && echo $R/evals/$OLD.space64.json ) > $R/coverage.md
echo "tables: $R/listed.md $R/coverage.md; record.py's output: $R/record.log (evaluations before: $BEFORE)"
# the figures the tests name (as s16c1_tests.patch: TOP, TOP_GEOMEAN, the sessions and their span)
socratic report fa3-h200 | sed -n 2,3p
socratic report fa3-h200 --md | grep -E "^\| (best geomean|best min|duration) "
