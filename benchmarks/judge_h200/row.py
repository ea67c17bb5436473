"""One line of run.sh's table: label, exit code, seconds (and where they went, where the result
says: build, judge, comparisons), correct/total, geomeans, first failure."""
import json
import sys

label, rc, secs, path, err = sys.argv[1:6]
try:
    doc = json.load(open(path))
    s = doc["summary"]
    vs = " ".join(f"{k} {v:.3f}" for k, v in (s.get("geomean_vs") or {}).items())
    fail = next((f for r in doc["scenarios"] for f in r["failures"]), "")
    gm = s.get("geomean_speedup")
    parts = doc.get("seconds") or {}
    where = f"[build {parts['build']:.1f} judge {parts['judge']:.1f} comparisons {parts['comparisons']:.1f}] " if parts else ""
    print(f"{label:28s} rc={rc} {float(secs):6.1f}s {where}{s['n_correct']:3d}/{s['n']:<3d} "
          f"gm {gm if gm is None else round(gm, 4)} {vs} | {fail[:300]}")
except Exception as exc:
    tail = open(err).read().strip().splitlines()[-2:] if err else []
    print(f"{label:28s} rc={rc} {float(secs):6.1f}s no result ({type(exc).__name__}) {' | '.join(tail)[:300]}")
