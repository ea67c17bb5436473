"""The tables a promotion writes into docs/CAMPAIGN_FA3.md, from `socratic eval --json` results
(issue 42: the listed per-scenario table and the coverage table against FA3, cuDNN and FA2).

    python3 promote_tables.py listed BENCH.json                 the per-scenario table (Markdown)
    python3 promote_tables.py coverage NEW.json [OLD.json]      a space run by head dim, causal
                                                                and key length (Markdown); OLD's
                                                                FA3 column beside NEW's
    python3 promote_tables.py summary DIR                       one line a result, then each
                                                                space run by head dim (text; the
                                                                device call's table, s16c1.sh)

Ratios are the comparison's time over the kernel's (> 1: the kernel is faster); a geomean is
over the correct rows that have the ratio (SDPA, i.e. cuDNN and FA2, cannot run a bottom-right
causal mask with seqlen_q != seqlen_k).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

NAMES = ("fa3", "cudnn", "fa2")


def geo(vals: list[float]) -> float | None:
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def vs(row: dict, name: str) -> float | None:
    if name == "baseline":
        return row.get("speedup")
    return ((row.get("comparisons") or {}).get(name) or {}).get("speedup")


def f3(v: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def listed(path: Path) -> str:
    doc = json.loads(path.read_text())
    out = ["| scenario | ms | TFLOP/s | vs FA3 | vs cuDNN | vs FA2 | vs baseline |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    rows = doc["scenarios"]
    for r in rows:
        mark = "" if r["correct"] else " (incorrect)"
        out.append(f"| {r['id']}{mark} | {f3(r.get('candidate_ms'))} | {f3(r.get('tflops'), '{:.0f}')} | "
                   + " | ".join(f3(vs(r, n)) for n in NAMES) + f" | {f3(vs(r, 'baseline'), '{:.2f}')} |")
    ok = [r for r in rows if r["correct"]]
    out.append("| **geomean** | | | " + " | ".join(f"**{f3(geo([vs(r, n) for r in ok]))}**" for n in NAMES)
               + f" | **{f3(geo([vs(r, 'baseline') for r in ok]), '{:.2f}')}** |")
    hs = doc.get("hidden_summary") or {}
    out.append("")
    out.append(f"{doc['summary']['n_correct']}/{doc['summary']['n']} correct; hidden draws "
               f"{hs.get('n_correct')}/{hs.get('n')} correct, vs FA3 "
               f"{f3((hs.get('geomean_vs') or {}).get('fa3'))}; {doc.get('gpu', {}).get('name', '?')}")
    return "\n".join(out)


def kbin(k: int) -> str:
    for lo, hi in ((1, 300), (300, 1024), (1024, 4096), (4096, 1 << 30)):
        if lo <= k < hi:
            return f"{lo}-{hi - 1}" if hi < 1 << 30 else f">= {lo}"
    return str(k)


def cells(doc: dict) -> dict[tuple[str, str], list[dict]]:
    by: dict[tuple[str, str], list[dict]] = {}
    for r in doc["scenarios"]:
        p = r["params"]
        for key in (("head_dim", str(p["head_dim"])), ("causal", str(p["causal"])),
                    ("seqlen_k", kbin(int(p["seqlen_k"]))), ("all", "")):
            by.setdefault(key, []).append(r)
    order = {"head_dim": 0, "causal": 1, "seqlen_k": 2, "all": 3}
    return dict(sorted(by.items(), key=lambda kv: (order[kv[0][0]], _num(kv[0][1]))))


def _num(label: str) -> float:
    try:
        return float(label.split("-")[0].lstrip(">= "))
    except ValueError:
        return 0.0


def coverage(new: Path, old: Path | None) -> str:
    nd = json.loads(new.read_text())
    od = json.loads(old.read_text()) if old else None
    oc = cells(od) if od else {}
    head = "| field | value | n | correct | vs FA3 | vs cuDNN | vs FA2 | vs baseline |"
    if od:
        head += " shipped before: vs FA3 |"
    out = [head, "|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if od else "")]
    for (field, label), rows in cells(nd).items():
        ok = [r for r in rows if r["correct"]]
        name = "**all**" if field == "all" else field
        line = (f"| {name} | {label} | {len(rows)} | {len(ok)} | "
                + " | ".join(f"{f3(geo([vs(r, n) for r in ok]))} ({f3(min((vs(r, n) for r in ok if vs(r, n)), default=None))})"
                             for n in NAMES)
                + f" | {f3(geo([vs(r, 'baseline') for r in ok]))} |")
        if od:
            orows = [r for r in oc.get((field, label), []) if r["correct"]]
            line += f" {f3(geo([vs(r, 'fa3') for r in orows]))} |"
        out.append(line)
    out.append("")
    out.append(f"geomean (min) over the correct draws of `{nd['set']}`, {nd.get('gpu', {}).get('name', '?')}"
               + (f"; the last column: {od['candidate']['path']} in the same call" if od else ""))
    return "\n".join(out)


def summary(folder: Path) -> str:
    out = []
    docs = {}
    for f in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            out.append(f"{f.name}: unreadable ({exc})")
            continue
        docs[f.name] = doc
        s = doc.get("summary") or {}
        hs = doc.get("hidden_summary") or {}
        g = s.get("geomean_vs") or {}
        out.append(f"{f.name:24} {s.get('n_correct')}/{s.get('n')} correct"
                   + (f" (hidden {hs.get('n_correct')}/{hs.get('n')})" if hs else "")
                   + "".join(f"  {n} {g[n]:.4f}" for n in NAMES if g.get(n)))
    space = {k: d for k, d in docs.items() if str(d.get("set", "")).startswith("space:")}
    if space:
        names = sorted(space)
        out.append("")
        out.append("space runs by head dim, geomean vs FA3 (n correct/n): " + ", ".join(names))
        hds = sorted({r["params"]["head_dim"] for d in space.values() for r in d["scenarios"]})
        for hd in hds:
            parts = []
            for k in names:
                rows = [r for r in space[k]["scenarios"] if r["params"]["head_dim"] == hd]
                ok = [r for r in rows if r["correct"]]
                parts.append(f"{f3(geo([vs(r, 'fa3') for r in ok])):>6} ({len(ok)}/{len(rows)})")
            out.append(f"  d{hd:<4}" + "  ".join(parts))
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("listed", "coverage", "summary"):
        sys.exit(__doc__)
    verb, args = sys.argv[1], [Path(a) for a in sys.argv[2:]]
    if verb == "listed":
        print(listed(args[0]))
    elif verb == "coverage":
        print(coverage(args[0], args[1] if len(args) > 1 else None))
    else:
        print(summary(args[0]))
