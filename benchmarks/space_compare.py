"""Two space evaluations of one kernel with one seed (`socratic eval TASK --space N --seed S
--json`, benchmarks/space_check.sh): the same draws? the figures within noise? and the
coverage table of both, side by side (the table last).

    python3 benchmarks/space_compare.py RUN1.json RUN2.json [--noise 0.03]

Exit 0: both ran the same scenarios (ids and shapes) and every cell's geomean against the
baseline and each comparison agrees within --noise (relative); 1 otherwise; 2 bad input.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from socratic.contracts import ContractError, Coverage, EvalResult, read_eval
from socratic.coverage import ratios


def load(path: Path) -> tuple[EvalResult, Coverage]:
    try:
        doc = read_eval(path)
    except ContractError as exc:
        raise SystemExit(f"space_compare: {exc}") from None
    if doc.coverage is None:
        raise SystemExit(f"space_compare: {path}: no coverage (not a `--space N` evaluation, or "
                         f"nothing ran: exit code {doc.exit_code})")
    return doc, doc.coverage


def _rel(a: float | None, b: float | None) -> float | None:
    return abs(b / a - 1.0) if a and b else None


def compare(one: Path, two: Path, noise: float) -> tuple[list[str], bool]:
    (d1, c1), (d2, c2) = load(one), load(two)
    out = []
    gpus = {(d.gpu.name if d.gpu else "?") for d in (d1, d2)}
    out.append(f"gpu: {' / '.join(sorted(gpus))}; sets {d1.set} and {d2.set}")
    same_ids = [r.id for r in d1.scenarios] == [r.id for r in d2.scenarios]
    same_shapes = [r.params for r in d1.scenarios] == [r.params for r in d2.scenarios]
    out.append(f"draws: {c1.n} and {c2.n}, same ids: {'yes' if same_ids else 'NO'}, same shapes: "
               f"{'yes' if same_shapes else 'NO'}; correct {c1.n_correct}/{c1.n} and "
               f"{c2.n_correct}/{c2.n}")
    rows2 = {r.id: r for r in d2.scenarios}
    against = [a for a in c1.against if a in c2.against]
    for a in against:
        diffs = [d for r in d1.scenarios if r.id in rows2
                 and (d := _rel(ratios(r).get(a), ratios(rows2[r.id]).get(a))) is not None]
        if diffs:
            out.append(f"per draw vs {a}: |run2/run1 - 1| median {statistics.median(diffs):.2%}, "
                       f"max {max(diffs):.2%} over {len(diffs)} draws")
    cells2 = {(c.field, c.label): c for c in c2.cells}
    worst = 0.0
    table = [f"{'field':<10} {'value':<9} {'n':>3}" + "".join(f" {'vs ' + a + ' (1 | 2)':>19}" for a in against)]
    for c in c1.cells:
        other = cells2.get((c.field, c.label))
        line = f"{c.field[:10]:<10} {c.label[:9]:<9} {c.n:>3}"
        for a in against:
            g1, g2 = c.geomean.get(a), other.geomean.get(a) if other else None
            rel = _rel(g1, g2)
            worst = max(worst, rel if rel is not None else 0.0)
            text = f"{g1:.3f} | {g2:.3f}" if g1 is not None and g2 is not None else "-"
            line += f" {text:>19}"
        table.append(line)
    out.append(f"cells: largest geomean difference between the runs {worst:.2%} "
               f"(noise allowed {noise:.0%})")
    out.append(f"worst draws (vs {c1.goal}), run 1: " + ", ".join(c1.worst[:4]))
    ok = same_ids and same_shapes and worst <= noise
    out += ["", f"coverage by hidden field, geomean run 1 | run 2 (seed {c1.seed})", *table,
            "", "SAME DRAWS, WITHIN NOISE" if ok else "DIFFERENT (see above)"]
    return out, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("one", type=Path)
    ap.add_argument("two", type=Path)
    ap.add_argument("--noise", type=float, default=0.03, help="relative cell difference allowed")
    args = ap.parse_args(argv)
    try:
        lines, ok = compare(args.one, args.two, args.noise)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
