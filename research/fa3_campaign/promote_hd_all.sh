# Ran in session 20 (benchmarks/results/s16c1): fa3_hd_all.cu is now tests/candidates/fa3_h200_best.cu
# (`git show 189f0f9:tests/candidates/fa3_hd_all.cu` is the file this script read).
# The CPU steps after call s16c1 (research/fa3_campaign/PROMOTE_HD_ALL.md), from the repository
# root, socratic on PATH (the worktree's .venv/bin):
#   bash research/fa3_campaign/promote_hd_all.sh FILES_AT STEPS
# FILES_AT: the folder the device call's files came back in (evals.tgz, logs.tgz, table.txt).
# STEPS: the steps to append to steps.txt (s16c1_steps.txt, its `say` texts written from the
# call's figures; its @@import block is checked against what came back). It
#   1. unpacks evals.tgz and logs.tgz into results/s16c1/ (evals/NAME.SET.json: record.py's names),
#   2. writes cands/v100.cu, v100r.cu (tests/candidates/fa3_hd_all.cu), v96.cu, v96r.cu and checks
#      each result's candidate sha256 against them,
#   3. appends STEPS to steps.txt, unpacks the pack into sessions/fa3-h200, replays the new steps
#      (record.py FIRST: the imports resume the campaign; @@stop v100 puts v100 in the workspace;
#      @@giveup ends it), packs it back over src/socratic/sessions/fa3-h200.socratic,
#   4. copies fa3_hd_all.cu over tests/candidates/fa3_h200_best.cu (the shipped kernel),
#   5. prints each new evaluation's number, file and figures (for tests/test_fa3_session.py's
#      constants) and writes results/s16c1/listed.md and coverage.md (docs/CAMPAIGN_FA3.md's tables).
# The space runs (set space:64@410041) are not imported: the pack's task (its copy of task.toml
# from session 1) declares no [hidden] space to draw them from; they are kept in the repository
# under benchmarks/results/ instead (step 6 of PROMOTE_HD_ALL.md).
set -e
A=${1:?usage: promote_hd_all.sh FILES_AT STEPS}; STEPS=${2:?usage: promote_hd_all.sh FILES_AT STEPS}
B=research/fa3_campaign; R=$B/results/s16c1; PACK=src/socratic/sessions/fa3-h200.socratic
[ -f $PACK ] && [ -f $B/steps.txt ] || { echo "run from the repository root"; exit 2; }
if grep -q TODO "$STEPS" && [ -z "$DRY" ]; then echo "$STEPS: write the TODO texts first"; exit 2; fi
[ -e sessions/fa3-h200 ] && { echo "sessions/fa3-h200 exists: remove it first"; exit 2; }
rm -rf $R; mkdir -p $R
tar xzf $A/evals.tgz -C $R; tar xzf $A/logs.tgz -C $R 2>/dev/null || true
mkdir -p $B/cands
cp tests/candidates/fa3_hd_all.cu $B/cands/v100.cu; cp tests/candidates/fa3_hd_all.cu $B/cands/v100r.cu
cp tests/candidates/fa3_h200_best.cu $B/cands/v96.cu; cp tests/candidates/fa3_h200_best.cu $B/cands/v96r.cu
# every import line names a result that came back whole, evaluated from the file it names
python3 - "$STEPS" "$R" "$B" <<'EOF'
import hashlib, json, sys
from pathlib import Path
steps, res, b = Path(sys.argv[1]).read_text(), Path(sys.argv[2]), Path(sys.argv[3])
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
    if call != "s16c1":
        bad.append(f"{call} {name} {set_}: not call s16c1")
print("results back:", ", ".join(have))
print("to import:", ", ".join(f"{n}.{s}" for _, n, s in lines))
if bad:
    sys.exit("promote_hd_all: " + "; ".join(bad))
EOF
FIRST=$(python3 -c "print(len([s for s in open('$B/steps.txt').read().split('\n@@') if s.strip()]))")
BEFORE=$(python3 -c "from socratic.sessionfiles import open_session; from pathlib import Path; print(len(open_session(Path('$PACK')).names('evals')))")
printf '%s\n' "$(cat "$STEPS")" >> $B/steps.txt
socratic unpack fa3-h200 sessions/fa3-h200
python3 $B/record.py $FIRST | tee $R/record.log
socratic pack sessions/fa3-h200 -o /tmp/fa3-h200.socratic.new && mv /tmp/fa3-h200.socratic.new $PACK
rm -rf sessions/fa3-h200
cp tests/candidates/fa3_hd_all.cu tests/candidates/fa3_h200_best.cu
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
python3 $B/promote_tables.py listed $R/evals/v100.bench.json > $R/listed.md
[ -s $R/evals/v100.space64.json ] && python3 $B/promote_tables.py coverage $R/evals/v100.space64.json \
  $( [ -s $R/evals/v96.space64.json ] && echo $R/evals/v96.space64.json ) > $R/coverage.md
echo "tables: $R/listed.md $R/coverage.md; record.py's output: $R/record.log (evaluations before: $BEFORE)"
# the figures the tests name (s16c1_tests.patch: TOP, TOP_GEOMEAN, the sessions and their span)
socratic report fa3-h200 | sed -n 2,3p
socratic report fa3-h200 --md | grep -E "^\| (best geomean|best min|duration) "
