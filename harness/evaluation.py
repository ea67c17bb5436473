"""Running the evaluator as a child process and reading its `socratic.eval/1` result: the
per-scenario stderr lines as they arrive, the goal predicate, and the compact table the
agent sees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from socratic.harness.task import Goal


@dataclass
class Evaluation:
    n: int
    sha: str
    set: str | None
    result: dict[str, Any] | None
    exit_code: int
    path: str = ""                       # saved result, relative to the session
    error: str | None = None             # the evaluator did not produce a result
    seconds: float = 0.0
    stderr_tail: str = ""
    notes: list[str] = field(default_factory=list)  # harness notes shown with the table

    @property
    def scenarios(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("scenarios") or [])

    @property
    def build_ok(self) -> bool:
        return bool(((self.result or {}).get("build") or {}).get("ok", self.result is not None))

    @property
    def bans_ok(self) -> bool:
        return bool(((self.result or {}).get("bans") or {}).get("ok", True))

    @property
    def all_correct(self) -> bool:
        if self.result is None or not self.build_ok or not self.bans_ok:
            return False
        s = self.result.get("summary") or {}
        return bool(s.get("all_correct", False)) and bool(self.scenarios)

    @property
    def failed_check(self) -> bool:
        """The candidate failed a check (build, ban, or a scenario's correctness)."""
        return not self.all_correct

    def metric(self, key: str) -> float | None:
        v = ((self.result or {}).get("summary") or {}).get(key)
        return float(v) if isinstance(v, (int, float)) else None

    def summary(self) -> dict[str, Any]:
        s = dict((self.result or {}).get("summary") or {})
        s.setdefault("all_correct", False)
        s["all_correct"] = self.all_correct
        s["build_ok"] = self.build_ok
        s["bans_ok"] = self.bans_ok
        s["exit_code"] = self.exit_code
        if self.error:
            s["error"] = self.error
        return s

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n, "sha": self.sha, "set": self.set, "path": self.path,
                "exit_code": self.exit_code, "summary": self.summary()}


def scenario_speedup(row: dict[str, Any], against: str) -> float | None:
    if against == "baseline":
        v = row.get("speedup")
    else:
        v = ((row.get("comparisons") or {}).get(against) or {}).get("speedup")
    return float(v) if isinstance(v, (int, float)) else None


def judge(ev: Evaluation, goal: Goal) -> tuple[bool, list[dict[str, Any]]]:
    """The goal predicate over every scenario: (met, failing rows)."""
    failing: list[dict[str, Any]] = []
    if ev.result is None:
        failing.append({"scenario": "(evaluator)", "correct": False, "speedup": None,
                        "goal": goal.min_speedup, "detail": ev.error or "no result"})
        return False, failing
    if not ev.build_ok:
        failing.append({"scenario": "(build)", "correct": False, "speedup": None,
                        "goal": goal.min_speedup,
                        "detail": (ev.result.get("build") or {}).get("error") or "build failed"})
    if not ev.bans_ok:
        hits = (ev.result.get("bans") or {}).get("hits") or []
        failing.append({"scenario": "(bans)", "correct": False, "speedup": None,
                        "goal": goal.min_speedup,
                        "detail": "; ".join(f"{h.get('library')} at {h.get('where')}"
                                            for h in hits[:3]) or "banned library"})
    if not ev.scenarios and not failing:
        failing.append({"scenario": "(none)", "correct": False, "speedup": None,
                        "goal": goal.min_speedup, "detail": "no scenarios were measured"})
    gone = comparison_unavailable(ev, goal)
    if gone:
        failing.append({"scenario": f"({goal.against})", "correct": False, "speedup": None,
                        "goal": goal.min_speedup, "detail": gone})
    for row in ev.scenarios:
        sp = scenario_speedup(row, goal.against)
        correct = bool(row.get("correct"))
        if gone and correct:
            continue  # one line above says why no scenario has the comparison's number
        if not correct or sp is None or sp < goal.min_speedup:
            f = {"scenario": row.get("id"), "correct": correct, "speedup": sp,
                 "goal": goal.min_speedup}
            if correct and sp is None and goal.against != "baseline":
                f["detail"] = (f"correct, but {goal.against} was not timed on this scenario "
                               f"(the goal needs its time)")
            failing.append(f)
    return not failing, failing


def comparison_unavailable(ev: Evaluation, goal: Goal) -> str | None:
    """Why the goal's comparison could not run in this evaluation (one line), or None."""
    if goal.against == "baseline" or ev.result is None:
        return None
    reason = (ev.result.get("comparisons_unavailable") or {}).get(goal.against)
    if reason is None:
        return None
    return (f"the goal is judged against {goal.against}, which could not run on this machine "
            f"({str(reason).splitlines()[0][:200] if str(reason).strip() else 'no reason given'}): "
            f"no scenario can meet it here; install it, or continue with `socratic run "
            f"--resume SESSION --goal-against baseline --goal-min-speedup X`")


def describe_failing(failing: list[dict[str, Any]], goal: Goal) -> str:
    vs = "baseline" if goal.against == "baseline" else goal.against
    lines = []
    for f in failing:
        if f.get("detail"):
            lines.append(f"- {f['scenario']}: {f['detail']}")
            continue
        sp = f.get("speedup")
        sp_s = f"{sp:.3f}x" if isinstance(sp, (int, float)) else "n/a"
        state = "correct" if f.get("correct") else "INCORRECT"
        lines.append(f"- {f['scenario']}: {state}, speedup {sp_s} vs {vs} "
                     f"(goal >= {goal.min_speedup:g}x)")
    return "\n".join(lines)


def _fmt(v: Any, spec: str, none: str = "-") -> str:
    return format(v, spec) if isinstance(v, (int, float)) else none


def compact_table(ev: Evaluation, goal: Goal, max_rows: int = 60) -> str:
    """What the agent sees: one line per scenario, then the summary and the goal verdict."""
    head = f"evaluation #{ev.n}  set={ev.set or 'default'}  candidate sha256={ev.sha[:12]}"
    if ev.result is None:
        tail = ev.stderr_tail.strip()
        extra = f"\n{tail[-2000:]}" if tail and tail not in (ev.error or "") else ""
        return f"{head}\nthe evaluator produced no result (exit {ev.exit_code}): {ev.error}{extra}"
    r = ev.result
    build = r.get("build") or {}
    lines = [head]
    lines.append(f"build: {'ok' if build.get('ok', True) else 'FAILED'}"
                 + (" (cached)" if build.get("cached") else "")
                 + f"   bans: {'ok' if ev.bans_ok else 'HIT'}")
    for res in (build.get("resources") or [])[:4]:
        lines.append(f"  kernel {res.get('kernel')}: {res.get('registers')} regs, "
                     f"{res.get('spill_stores', 0)}/{res.get('spill_loads', 0)} spill st/ld, "
                     f"{res.get('shared_bytes', 0)} B smem")
    if build.get("error"):
        lines.append(f"build error: {build['error']}")
    elif not build.get("ok", True):
        log = str(build.get("log") or "")
        lines.append("build log (tail):\n" + log[-3000:])
    if not ev.bans_ok:
        for h in ((r.get("bans") or {}).get("hits") or [])[:5]:
            lines.append(f"  ban: {h.get('library')} ({h.get('layer')}) at {h.get('where')}: "
                         f"{h.get('detail')}")
    rows = ev.scenarios
    if rows:
        w = max(8, min(28, max(len(str(x.get("id"))) for x in rows)))
        lines.append(f"{'scenario':<{w}}  ok   max_err   err/base  base_ms    cand_ms    "
                     f"speedup  +-      bound%")
        for row in rows[:max_rows]:
            sp = scenario_speedup(row, goal.against)
            bf = row.get("bound_fraction")
            lines.append(
                f"{str(row.get('id')):<{w}}  {'yes' if row.get('correct') else 'NO ':<3}  "
                f"{_fmt(row.get('err'), '.2e'):<8}  {_fmt(row.get('err_ratio'), '.2f'):<8}  "
                f"{_fmt(row.get('baseline_ms'), '.4f'):<9}  {_fmt(row.get('candidate_ms'), '.4f'):<9}  "
                f"{_fmt(sp, '.3f'):<7}  {_fmt(row.get('spread'), '.3f'):<6}  "
                f"{_fmt(bf * 100 if isinstance(bf, (int, float)) else None, '.0f'):<4}"
                + ("  BELOW BOUND" if row.get("below_bound") else ""))
            for f in (row.get("failures") or [])[:3]:
                lines.append(f"    failure: {f if isinstance(f, str) else json.dumps(f)}"[:300])
            if row.get("error"):
                lines.append(f"    error: {row['error']}"[:300])
        if len(rows) > max_rows:
            lines.append(f"... {len(rows) - max_rows} more scenarios (full result saved)")
    s = r.get("summary") or {}
    lines.append(
        f"summary: {s.get('n_correct', '?')}/{s.get('n', len(rows))} correct, geomean "
        f"{_fmt(s.get('geomean_speedup'), '.3f')}x, min {_fmt(s.get('min_speedup'), '.3f')}x "
        f"(worst {s.get('worst_scenario')})"
        + (f", vs {json.dumps(s['geomean_vs'])}" if s.get("geomean_vs") else ""))
    met, failing = judge(ev, goal)
    lines.append(f"goal ({goal.describe()}): " + ("MET" if met else f"not met, {len(failing)} "
                                                   "scenario(s) short"))
    if ev.path:
        lines.append(f"full result: {ev.path}")
    return "\n".join(lines)


def run_evaluator(argv_prefix: list[str], task_dir: Path, candidate: Path, set_name: str | None,
                  *, env: dict[str, str], timeout_s: float, cwd: Path | None = None,
                  on_scenario: Callable[[dict[str, Any]], None] | None = None,
                  ) -> tuple[dict[str, Any] | None, int, str, str | None]:
    """Run `<prefix> TASK_DIR --candidate FILE --json [--scenarios SET]`.

    Calls on_scenario(row) for each `{"event": "scenario"}` stderr line as it arrives.
    Returns (result or None, exit code, other stderr text, error message or None).
    """
    argv = [*argv_prefix, str(task_dir), "--candidate", str(candidate), "--json"]
    if set_name:
        argv += ["--scenarios", set_name]
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True)
    except OSError as exc:
        return None, 2, "", f"could not start the evaluator {argv_prefix!r}: {exc}"
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass

    timer = threading.Timer(timeout_s, kill)
    timer.daemon = True
    timer.start()
    other: list[str] = []
    try:
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    obj = None
                if isinstance(obj, dict) and obj.get("event") == "scenario":
                    if on_scenario:
                        on_scenario(obj)
                    continue
            other.append(line)
            if len(other) > 400:
                del other[:200]
        proc.wait()
        reader.join()
    finally:
        timer.cancel()
    stderr_text = "\n".join(other)
    if timed_out.is_set():
        return None, -9, stderr_text, f"the evaluator ran past {timeout_s:g} s and was killed"
    raw_out = b"".join(out_chunks).decode("utf-8", "replace").strip()
    try:
        result = json.loads(raw_out) if raw_out else None
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict):
        tail = (stderr_text or raw_out)[-500:].strip().splitlines()
        return None, proc.returncode, stderr_text, (
            f"exit {proc.returncode}, no JSON result" + (f": {tail[-1]}" if tail else ""))
    return result, proc.returncode, stderr_text, None


def list_sets(argv_prefix: list[str], task_dir: Path, *, env: dict[str, str],
              timeout_s: float = 120.0) -> dict[str, list[str]] | None:
    """`<prefix> TASK_DIR --list --json` -> {set: [scenario ids]}, or None if it fails."""
    try:
        r = subprocess.run([*argv_prefix, str(task_dir), "--list", "--json"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)
        doc = json.loads(r.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return None
    sets = doc.get("sets") if isinstance(doc, dict) else None
    if not isinstance(sets, dict):
        return None
    return {str(k): [str(i) for i in v] for k, v in sets.items() if isinstance(v, list)}


@dataclass
class History:
    """Every evaluation of the campaign, in order, and the cache by (sha, set)."""

    evals: list[Evaluation] = field(default_factory=list)

    def add(self, ev: Evaluation) -> None:
        self.evals.append(ev)

    def find(self, sha: str, set_name: str | None) -> Evaluation | None:
        for ev in reversed(self.evals):
            if ev.sha == sha and ev.set == set_name and ev.result is not None:
                return ev
        return None

    def best(self) -> Evaluation | None:
        """The best correct evaluation: highest min speedup, then geomean."""
        good = [e for e in self.evals if e.all_correct]
        if not good:
            return None
        return max(good, key=lambda e: (e.metric("min_speedup") or 0.0,
                                        e.metric("geomean_speedup") or 0.0))

    def __len__(self) -> int:
        return len(self.evals)

    def table(self, last: int = 25) -> str:
        lines = ["#    sha           set        correct  geomean  min"]
        for e in self.evals[-last:]:
            lines.append(f"{e.n:<4} {e.sha[:12]}  {str(e.set or 'default'):<9}  "
                         f"{'yes' if e.all_correct else 'no ':<7}  "
                         f"{_fmt(e.metric('geomean_speedup'), '.3f'):<7}  "
                         f"{_fmt(e.metric('min_speedup'), '.3f')}")
        return "\n".join(lines)

