"""Record the campaign into a manual session: steps.txt, in the order they happened.

Run from the repository root after `socratic attach flash_attn_fwd --agent manual
--auto-questions --session-dir sessions/fa3-h200`: record.py [FIRST [LAST]] (step indices).
"""

import shutil
import subprocess
import sys

S = "sessions/fa3-h200"
R = "research/fa3_campaign/results"   # one folder per device call, evals/NAME.SET.json (the session keeps them as evals/)

def cand(name):
    return "src/socratic/kernels/flash_attn_fwd/baseline.cu" if name == "baseline" else f"research/fa3_campaign/cands/{name}.cu"

def imp(call, name, set_):
    out = subprocess.run(["socratic", "hook", "evaluate", "--session", S, "--import", f"{R}/{call}/evals/{name}.{set_}.json",
                          "--candidate", cand(name)], capture_output=True, text=True)
    print(f"--- import {call} {name}.{set_} rc={out.returncode}")
    print((out.stdout + out.stderr).strip()[-1500:])
    if out.returncode not in (0, 1):
        sys.exit(1)

def say(text):
    out = subprocess.run(["socratic", "hook", "say", "--session", S, "-"], input=text, capture_output=True, text=True)
    print(f"--- say rc={out.returncode}: {text[:70]}...")
    print((out.stdout + out.stderr).strip()[-1500:])
    if out.returncode != 0:
        sys.exit(1)

steps = [s for s in open("research/fa3_campaign/steps.txt").read().split("\n@@") if s.strip()]
start = int(sys.argv[1]) if len(sys.argv) > 1 else 0
stop = int(sys.argv[2]) if len(sys.argv) > 2 else len(steps)
for i, st in enumerate(steps[start:stop], start):
    kind, _, body = st.strip().lstrip("@").partition("\n")
    print(f"[{i}] {kind}")
    if kind.startswith("import"):
        for line in body.strip().splitlines():
            imp(*line.split())
    elif kind.startswith("stop"):
        shutil.copy(cand(body.strip()), f"{S}/workspace/candidate.cu")
        out = subprocess.run(["socratic", "hook", "stop", "--session", S], capture_output=True, text=True)
        print(f"--- stop rc={out.returncode}")
        print((out.stdout + out.stderr).strip()[-800:])
    elif kind.startswith("giveup"):
        out = subprocess.run(["socratic", "hook", "stop", "--session", S, "--give-up", body.strip()], capture_output=True, text=True)
        print(f"--- give-up rc={out.returncode}")
        print((out.stdout + out.stderr).strip()[-800:])
    elif kind.startswith("inject"):
        out = subprocess.run(["socratic", "inject", S, "--bank", body.strip()], capture_output=True, text=True)
        print((out.stdout + out.stderr).strip())
    elif kind.startswith("say"):
        say(body.strip())
    elif kind.startswith("retract"):   # later: evaluations taken back (first line: their numbers)
        ns, _, why = body.strip().partition("\n")
        part = ["--comparisons"] if "comparisons" in kind else []
        out = subprocess.run(["socratic", "retract", S, *ns.split(), *part, "--why", why.strip()],
                             capture_output=True, text=True)
        print((out.stdout + out.stderr).strip())
        if out.returncode != 0:
            sys.exit(1)
