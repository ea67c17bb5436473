"""Issue 42's summary table (benchmarks/hd_paths_check.sh): per head dim, the shipped and the
new kernel side by side: scenarios, how many correct, the geomean (and min) against FA3,
cuDNN and the task's baseline over the correct ones; then the edge-case correctness run.

    python benchmarks/hd_paths_table.py DIR

DIR holds what the check wrote: timed_new.json, timed_old.json (a result document each,
`socratic eval --json`), full_new.json (correctness only), and their .err progress lines,
read instead where a run was cut off before writing its document. Plain json: any of
them may be missing."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

HD_RE = re.compile(r"(?:^|-)d(\d+)-")


def rows(d: Path, name: str) -> tuple[list[dict], str]:
    """A run's scenario rows, and where they came from."""
    doc = d / f"{name}.json"
    try:
        data = json.loads(doc.read_text())
        return list(data.get("scenarios") or []) + list(data.get("hidden") or []), "json"
    except (OSError, ValueError):
        pass
    out = []
    try:
        for line in (d / f"{name}.err").read_text().splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and ev.get("event") == "scenario":
                out.append(ev)
    except OSError:
        return [], "missing"
    return out, "progress lines (run cut off: no comparisons)" if out else "missing"


def head_dim(row: dict) -> int | None:
    hd = (row.get("params") or {}).get("head_dim")
    if hd is None:
        m = HD_RE.search(row.get("id", ""))
        hd = int(m.group(1)) if m else None
    return int(hd) if hd is not None else None


# a comparison's time on a scenario from any run of this check (the same GPU, the same call):
# a run cut off before its comparisons were timed is read against another run's
REF_MS: dict[tuple[str, str], float] = {}
BORROWED: set[str] = set()


def ratio(row: dict, against: str) -> float | None:
    if not row.get("correct"):
        return None
    if against == "baseline":
        sp = row.get("speedup")
    else:
        sp = ((row.get("comparisons") or {}).get(against) or {}).get("speedup")
        ms = REF_MS.get((row.get("id", ""), against))
        if not sp and ms and row.get("candidate_ms"):
            sp = ms / row["candidate_ms"]
            BORROWED.add(row.get("id", ""))
    return float(sp) if sp else None


def geo(vals: list[float]) -> str:
    if not vals:
        return "    -    "
    g = math.exp(sum(math.log(v) for v in vals) / len(vals))
    return f"{g:5.3f} ({min(vals):4.2f})"


def main() -> int:
    d = Path(sys.argv[1])
    runs = {}
    variants = sorted(f.stem for f in d.glob("var_*.json")) + sorted(
        f.stem for f in d.glob("var_*.err") if not (d / f"{f.stem}.json").exists())
    for name in ("timed_old", "timed_new", *variants):
        runs[name], src = rows(d, name)
        print(f"{name}: {len(runs[name])} scenarios from {src}")
    for rs in runs.values():
        for r in rs:
            for name, cmp in (r.get("comparisons") or {}).items():
                if (cmp or {}).get("ms"):
                    REF_MS.setdefault((r.get("id", ""), name), float(cmp["ms"]))
    hds = sorted({hd for rs in runs.values() for r in rs if (hd := head_dim(r)) is not None})
    print()
    print("timed draws (geomean (min) over the correct ones; ratio = their time / the kernel's)")
    print(f"{'hd':>4} {'kernel':8} {'correct':>8}  {'vs fa3':>13} {'vs cudnn':>13} {'vs base':>13}  failing")
    for hd in hds:
        for name, label in (("timed_old", "shipped"), ("timed_new", "new"), *((v, v[4:]) for v in variants)):
            rs = [r for r in runs[name] if head_dim(r) == hd]
            if not rs:
                continue
            ok = sum(1 for r in rs if r.get("correct"))
            cols = [geo([v for r in rs if (v := ratio(r, a)) is not None]) for a in ("fa3", "cudnn", "baseline")]
            bad = [r.get("id", "?") for r in rs if not r.get("correct")]
            print(f"{hd:>4} {label[:8]:8} {ok:>3}/{len(rs):<4}  {cols[0]:>13} {cols[1]:>13} {cols[2]:>13}  "
                  + (", ".join(bad[:3]) + (f" (+{len(bad) - 3})" if len(bad) > 3 else "")))
    if BORROWED:
        print(f"({len(BORROWED)} rows read against another run's comparison times: their own run "
              "was cut off before its comparisons)")
    # the same draws in both: the new kernel's time over the shipped one's, per head dim
    old = {r.get("id"): r for r in runs["timed_old"]}
    print()
    for hd in hds:
        pairs = [(old[r["id"]], r) for r in runs["timed_new"] if head_dim(r) == hd and r.get("id") in old]
        sp = [o["candidate_ms"] / n["candidate_ms"] for o, n in pairs
              if o.get("correct") and n.get("correct") and o.get("candidate_ms") and n.get("candidate_ms")]
        if sp:
            print(f"d{hd}: new vs shipped (shipped's time / new's), {len(sp)} draws: geomean {geo(sp)}")
    full, src = rows(d, "full_new")
    print()
    print(f"edge cases (the full set's d96/d192 scenarios, new kernel, correctness only; {src}):")
    for hd in sorted({head_dim(r) for r in full if head_dim(r) is not None}):
        rs = [r for r in full if head_dim(r) == hd]
        bad = [r.get("id", "?") + (f" [{r['error']}]" if r.get("error") else "") for r in rs if not r.get("correct")]
        print(f"  d{hd}: {len(rs) - len(bad)}/{len(rs)} correct" + (": " + ", ".join(bad[:6]) if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
