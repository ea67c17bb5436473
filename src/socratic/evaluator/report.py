"""Human-readable text for an evaluation: a progress line per scenario and the final table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socratic.contracts import EvalResult, ScenarioResult

if TYPE_CHECKING:
    from socratic.taskfile import Task


def _num(value: Any, fmt: str, width: int) -> str:
    return (format(value, fmt) if isinstance(value, (int, float)) else "-").rjust(width)


def _pct(fraction: Any) -> str:
    return f"{100 * fraction:5.0f}%" if isinstance(fraction, (int, float)) else "     -"


def progress_line(row: ScenarioResult, index: int, total: int) -> str:
    verdict = "ok  " if row.correct else "FAIL"
    speed = f"{row.speedup:.3f}x" if row.speedup else ""
    why = "" if row.correct else "  " + "; ".join(row.failures)[:120]
    return f"[{index:>3}/{total}] {verdict} {row.id:<34} {speed}{why}"


def table(doc: EvalResult) -> str:
    lines = []
    b = doc.build
    lines.append(f"task {doc.task}  set {doc.set}  candidate {doc.candidate.path} "
                 f"({doc.candidate.sha256[:12]})")
    if doc.gpu:
        g = doc.gpu
        lines.append(f"gpu  {g.name} (cc {g.cc}, {g.sms} SMs)")
        from socratic.evaluator.limits import no_bound_note
        if note := no_bound_note(g.name):
            lines.append(f"  {note}")
    took = " (cached)" if b.cached else f" in {b.seconds:.1f} s"
    if b.libraries:   # built before the candidate, --check-only too: a broken one stops there
        lines.append(f"task  {' and '.join(sorted(b.libraries))} built")
    lines.append(f"build {'ok' if b.ok else 'FAILED'}{took}")
    if b.error:  # it compiled, but the library cannot be used
        lines.append(f"  {b.error}")
    elif not b.ok:
        lines += ["  " + line for line in b.log.strip().splitlines()[-25:]]
    for k in b.resources[:12]:
        lines.append(f"  {k.registers:>4} regs {k.shared_bytes:>7} B static smem {k.stack_bytes:>5} B stack "
                     f"{k.spill_stores:>4}/{k.spill_loads:<4} B spill  {k.kernel[:70]}")
    hits = doc.bans.hits
    lines.append("bans  none found" if not hits else f"bans  {len(hits)} hit(s):")
    for h in hits[:20]:
        lines.append(f"  {h.library:<14} {h.layer:<15} {h.where}: {h.detail[:80]}")
    rows = doc.scenarios + (doc.hidden or [])
    if rows:
        comps = sorted({n for r in rows for n in (r.comparisons or {})})
        head = (f"{'scenario':<34} {'ok':<4} {'err':>8} {'base err':>8} {'base ms':>9} {'cand ms':>9} "
                f"{'speedup':>8} {'±':>6} {'TFLOP/s':>8} {'bound':>6}")
        head += "".join(f" {'vs ' + n:>9}" for n in comps)
        lines += ["", head, "-" * len(head)]
        for r in rows:
            line = (f"{r.id[:34]:<34} {'ok' if r.correct else 'FAIL':<4} "
                    f"{_num(r.err, '.2e', 8)} {_num(r.err_baseline, '.2e', 8)} "
                    f"{_num(r.baseline_ms, '.4f', 9)} {_num(r.candidate_ms, '.4f', 9)} "
                    f"{_num(r.speedup, '.3f', 8)} {_num(r.spread, '.3f', 6)} "
                    f"{_num(r.tflops, '.1f', 8)} "
                    f"{_pct(r.bound_fraction)}")
            for n in comps:
                line += f" {_num(r.speedup_against(n), '.3f', 9)}"
            lines.append(line)
            if not r.correct:
                for f in r.failures[:4]:
                    lines.append(f"    ! {f}")
        s = doc.summary
        lines.append("")
        vs = "".join(f"  vs {n} {v:.3f}x" for n, v in s.geomean_vs.items())
        gm = f"{s.geomean_speedup:.3f}x" if s.geomean_speedup else "-"
        mn = f"{s.min_speedup:.3f}x" if s.min_speedup else "-"
        lines.append(f"{s.n_correct}/{s.n} correct  geomean {gm}  min {mn}  worst {s.worst_scenario}{vs}")
        if doc.hidden_summary:
            hs = doc.hidden_summary
            hvs = "".join(f"  vs {n} {v:.3f}x" for n, v in (hs.geomean_vs or {}).items())
            hgm = f"  geomean {hs.geomean_speedup:.3f}x" if hs.geomean_speedup else ""
            lines.append(f"hidden: {hs.n_correct}/{hs.n} correct{hgm}{hvs}"
                         + (f"  failing {', '.join(hs.failing)}" if hs.failing else ""))
        if doc.gpu_wait_s:
            lines.append(f"waited {doc.gpu_wait_s:.1f} s for the GPU's turn (not part of any time)")
        if (sec := doc.seconds) is not None:
            lines.append(f"took {sec.total:.1f} s: build {sec.build:.1f}, judge {sec.judge:.1f}"
                         + (f", comparisons {sec.comparisons:.1f}" if sec.comparisons else ""))
    if doc.coverage is not None:
        from socratic.coverage import lines as coverage_lines

        lines += ["", *coverage_lines(doc.coverage)]
    for name, why in (doc.comparisons_unavailable or {}).items():
        lines.append(f"{name} not timed: {why.strip().splitlines()[0][:160] if why.strip() else '?'}")
    verdict = {0: "PASS", 1: "FAIL"}.get(doc.exit_code, "ERROR")
    lines.append(verdict)
    return "\n".join(lines)


def hidden_space(task: Task) -> dict[str, Any] | None:
    """The task's [hidden] space as shown by --list: how many per evaluation, from where."""
    space = task.hidden
    if space is None:
        return None
    fields: dict[str, str] = {}
    for f in space.fields:
        if f.expr is not None:
            fields[f.name] = str(f.expr)
        elif f.choices:
            fields[f.name] = "one of " + ", ".join(str(c) for c in dict.fromkeys(f.choices))
        else:
            fields[f.name] = f"{f.low}..{f.high}" + (" (log)" if f.log else "")
        if f.equal_to:
            fields[f.name] += f", or {f.equal_to} ({f.p_equal:.0%})"
    cap = space.max_flops if space.max_flops < 1e30 else None
    return {"count": space.count, "where": space.where, "max_flops": cap, "fields": fields}


def list_sets(task: Task) -> str:
    lines = [f"task {task.name} ({task.dir})  entry {task.entry}  default set {task.default_set}"]
    for name, scenarios in task.sets.items():
        lines.append(f"\n{name} ({len(scenarios)} scenarios)")
        lines += [f"  {sc.id}" for sc in scenarios]
    lines.append("\ninput distributions (every correctness check covers each)")
    lines += [f"  {d.name:<18} {d.note}" for d in task.distributions]
    space = hidden_space(task)
    if space:
        cap = f", at most {space['max_flops']:.3g} FLOP" if space["max_flops"] else ""
        where = f", where {space['where']}" if space["where"] else ""
        lines.append(f"\nhidden: {space['count']} scenarios drawn per evaluation{cap}{where}")
        lines += [f"  {name:<10} {text}" for name, text in space["fields"].items()]
        lines.append(f"  `socratic eval {task.name} --space N [--seed S]` evaluates N of them, "
                     "with a coverage table per field")
    return "\n".join(lines)
