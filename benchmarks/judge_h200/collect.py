"""From the folders a device call of round3_final.sh brought back (each with card.txt,
evidence/ and evals/), write the two summary files the issues ask for:

    benchmarks/results/hostile_h200.json  [{"name", "class", "claim", "card", "exit_code", "geomean_speedup", ...}]
    benchmarks/results/control_h200.json  [{"task", "run", "scenario", "speedup", "correct", "hidden", "card"}]

    python3 benchmarks/judge_h200/collect.py DIR [DIR ...]

DIR: a call's files with its evidence_*.tgz unpacked into it; DIR/commit.txt, when there, names
the code the call ran (each record carries it as "code"). A hostile candidate these calls did not
run keeps its earlier record (with the code and card it ran on); in the control file, a task these
calls ran replaces its rows and the other tasks keep theirs.

A hostile candidate's record is the evaluation its GPU test ran (tests/evalcli.py keeps it
when SOCRATIC_EVIDENCE is set), so the file says exactly what the tests asserted on.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"

# test function -> the class its candidates belong to (the prefix of their names)
CLASSES = {
    "test_no_copy_of_a_timed_sample_profits_from_another": "copies",
    "test_no_copy_of_a_timed_sample_does_the_work_of_the_copies_after_it": "copies",
    "test_the_baselines_and_references_results_are_out_of_reach": "tamper",
    "test_the_candidates_process_keeps_nothing_reads_nothing_reaches_nothing": "sandbox",
    "test_a_hanging_candidate_ends_its_evaluation_within_two_minutes": "hang",
    "test_a_module_planted_where_socratic_runs_is_not_imported": "cwd",
    "test_host_code_attacks_are_rejected_in_one_line": "host",
    "test_a_forged_verdict_is_never_accepted": "host",
    "test_work_left_running_in_its_own_process_changes_nothing": "host",
    "test_blind_spot_candidates_are_rejected": "blind",
    "test_hostile_candidate_is_rejected": "device",
    "test_an_output_reused_by_pointer_is_never_served": "device",
    "test_tricks_confined_to_the_candidates_process_change_nothing": "device",
    "test_hang_is_reported_and_the_evaluation_stops_there": "hang",
    "test_fault_is_reported_and_later_scenarios_still_run": "fault",
    "test_the_largest_finite_value_in_timed_runs_is_seen": "timed",
}


def load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def rows(doc: dict) -> list[dict]:
    return doc["scenarios"] + (doc.get("hidden") or [])


def hostile_name(test: str) -> tuple[str, str] | None:
    """('copies', 'copies_poison_gate_rms') from 'tests/x.py::test_y[copies_poison_gate_rms]'."""
    func = test.split("::")[-1]
    base, _, param = func.partition("[")
    cls = CLASSES.get(base)
    if cls is None:
        return None
    param = param.rstrip("]")
    # "timer_patch-never written" / "flash_attn_fwd-no_max-large_logits" / "" -> the candidate's name
    parts = [p for p in param.split("-") if p and " " not in p and p not in ("rmsnorm", "flash_attn_fwd")]
    name = parts[0] if parts else {"test_a_forged_verdict_is_never_accepted": "forge_result",
                                   "test_work_left_running_in_its_own_process_changes_nothing": "left_running",
                                   "test_hang_is_reported_and_the_evaluation_stops_there": "hang_kernel_one_shape",
                                   "test_fault_is_reported_and_later_scenarios_still_run": "fault_one_shape",
                                   "test_an_output_reused_by_pointer_is_never_served": "stale_output",
                                   "test_the_largest_finite_value_in_timed_runs_is_seen": "maxfinite_rms",
                                   }.get(base, base)
    return cls, name if name.startswith(cls + "_") else f"{cls}_{name}"


def hostile_record(ev: dict, card: str) -> dict | None:
    named = hostile_name(ev["test"])
    doc = ev.get("doc")
    if named is None or doc is None or not doc.get("candidate"):
        return None
    cls, name = named
    s = doc["summary"]
    sps = [r["speedup"] for r in rows(doc) if r.get("speedup")]
    claim = ev["test"].split("::")[-1].split("[")[0].removeprefix("test_").replace("_", " ")
    return {"name": name, "class": cls, "claim": claim, "card": card, "test": ev["test"],
            "exit_code": ev["exit_code"], "seconds": ev["seconds"], "task": doc["task"], "set": doc["set"],
            "geomean_speedup": s.get("geomean_speedup"), "max_speedup": max(sps) if sps else None,
            "n_correct": s["n_correct"], "n": s["n"],
            "first_failure": next((f for r in rows(doc) for f in r["failures"]), None)}


def _from_tests(test: str) -> str:
    """'../work/main/tests/x.py::t[a]' -> 'tests/x.py::t[a]': the id as either side spells it."""
    return test[test.find("tests/"):].split(" ")[0]


def outcomes(d: Path) -> dict[str, str]:
    """test id -> PASSED / FAILED, from a call's `pytest -rA` logs: round3_final.sh's
    gpu_tests.log, or the calls/sNcM.sh scripts' logs/tests*.log."""
    found: dict[str, str] = {}
    for log in [d / "gpu_tests.log", *sorted((d / "logs").glob("tests*.log"))]:
        for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
            m = re.match(r"(PASSED|FAILED|ERROR) \S*?(tests/\S+)", line)
            if m:
                found[m.group(2)] = m.group(1)
    return found


def main(dirs: list[Path]) -> None:
    earlier = load(RESULTS / "hostile_h200.json") or []
    hostile: dict[str, dict] = {h["name"]: h for h in earlier}
    fresh: set[str] = set()
    control: list[dict] = []
    side: dict[str, dict] = {}
    for d in dirs:
        card = (d / "card.txt").read_text().strip().splitlines()[0] if (d / "card.txt").exists() else "unknown"
        code = (d / "commit.txt").read_text().strip() if (d / "commit.txt").exists() else None
        tests = outcomes(d)
        seen = set()
        for path in sorted((d / "evidence").glob("*.json")):
            ev = load(path)
            rec = ev and hostile_record(ev, card)
            if rec:
                seen.add(ev["test"])
                rec["test_outcome"] = tests.get(_from_tests(ev["test"]))
                rec["code"] = code
                hostile[rec["name"]] = rec   # a later call's run of the same candidate replaces it
                fresh.add(rec["name"])
        for test, outcome in tests.items():   # a test whose evaluation did not come back: its outcome
            named = hostile_name(test)
            if named and test not in {_from_tests(t) for t in seen} and named[1] not in fresh:
                fresh.add(named[1])
                hostile[named[1]] = {"name": named[1], "class": named[0], "card": card, "code": code, "test": test,
                                     "test_outcome": outcome, "exit_code": None, "seconds": None,
                                     "geomean_speedup": None, "n_correct": None, "n": None,
                                     "first_failure": None, "note": "its evaluation's JSON did not come back "
                                     "from the device (the call returned 8 files); the test's outcome is its record"}
        for path in sorted((d / "evals").glob("*.json")):
            doc = load(path)
            if doc is None:
                continue
            m = re.fullmatch(r"(rms|fa)_ctl(\d)", path.stem)
            if m:
                control += [{"task": doc["task"], "run": int(m.group(2)), "card": card, "code": code, "scenario": r["id"],
                             "speedup": r.get("speedup"), "correct": r["correct"],
                             "hidden": r["id"].startswith("hidden-")} for r in rows(doc)]
            elif path.stem.startswith("fa_best_"):
                side[path.stem] = {"card": card, "code": code, **doc["summary"]}
    if hostile:
        (RESULTS / "hostile_h200.json").write_text(json.dumps(sorted(hostile.values(), key=lambda h: h["name"]),
                                                              indent=1) + "\n")
    if control:   # a task these calls ran replaces its rows; the others keep theirs (card and code said)
        ran = {c["task"] for c in control}
        control = control + [c for c in load(RESULTS / "control_h200.json") or [] if c["task"] not in ran]
        (RESULTS / "control_h200.json").write_text(json.dumps(control, indent=1) + "\n")
    for task in sorted({c["task"] for c in control}):
        got = [c for c in control if c["task"] == task]
        sps = [c["speedup"] for c in got if c["speedup"]]
        print(f"control {task}: {len({c['run'] for c in got})} runs, {sum(c['correct'] for c in got)}/{len(got)} "
              f"correct (hidden included), speedups {min(sps):.4f}-{max(sps):.4f}")
    for h in sorted(hostile.values(), key=lambda h: h["name"]):
        gm, secs = h["geomean_speedup"], h["seconds"]
        print(f"{h['name']:<30} {h.get('test_outcome') or '?':<6} {'new' if h['name'] in fresh else 'old'} "
              f"{h.get('code') or '?':<8} exit {h['exit_code']} {h['n_correct']}/{h['n']} "
              f"gm {'-' if gm is None else f'{gm:.3f}'} {'-' if secs is None else f'{secs:.1f}s'} "
              f"| {(h['first_failure'] or '')[:80]}")
    for k, v in sorted(side.items()):
        vs = v.get("geomean_vs") or {}
        print(f"{k}: {v['n_correct']}/{v['n']} gm {v['geomean_speedup']:.4f} fa3 {vs.get('fa3')} ({v['card']})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: collect.py DIR [DIR ...] (folders a round3_final.sh call brought back)")
    main([Path(a) for a in sys.argv[1:]])
