"""A campaign's evaluations: each one numbered, run on the workspace candidate, logged as
eval.start / eval.scenario / eval.end, saved as evals/NNNN.json (and the source under
candidates/), kept in the history, and shown to the triggers. No model in sight: the
campaign loop uses it, and so can anything else that holds a session (stophook.py).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path
from typing import Any

from socratic.contracts import (
    ContractError,
    EvalEnd,
    EvalResult,
    EvalScenario,
    EvalStart,
    EvalSummary,
    EvalWait,
    Problem,
    Retractions,
    ScenarioProgress,
    ScenarioResult,
    TaskModified,
    parse_eval,
    read_eval,
    scenario_fields,
    scenario_vs,
)
from socratic.harness.core.atomicwrite import write_bytes_atomic, write_json_atomic
from socratic.harness.core.evaluator_process import run_evaluator
from socratic.harness.core.history import Evaluation, History, compact_table
from socratic.harness.core.pins import library_problem
from socratic.harness.core.record import Emit
from socratic.harness.core.redaction import Redactor, redacted
from socratic.harness.core.session import Session
from socratic.harness.core.task import changed_files, restore, sha256_text
from socratic.harness.engine.host import ALONE, Holder
from socratic.harness.engine.plan import CampaignPlan
from socratic.harness.engine.triggers import Triggers


def file_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def read_candidate(path: Path) -> tuple[bytes, str | None]:
    """The workspace candidate's bytes (b"" when there is none), or why it cannot be one.
    Read as the agent's own file, never through a link: socratic reads it outside the
    agent's Landlock domain, so a link would let the agent read through socratic what it
    cannot (the session's chain key, kept in candidates/ and shown in build logs); and only
    a regular file (a FIFO would hold the campaign's lock until the agent writes it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b"", None
    except OSError as exc:
        if os.path.islink(path):
            return b"", (f"workspace/{path.name} is a symlink (to {os.readlink(path)}): not "
                         f"read; the candidate is the workspace's own file")
        return b"", f"workspace/{path.name} cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return b"", f"workspace/{path.name} is not a regular file: not read"
        return fh.read(), None


def result_matches(session_dir: Path, ev: Evaluation) -> bool:
    """Whether the evaluation's saved result still has the bytes its eval.end recorded (an
    evaluation logged before the hash was recorded: yes)."""
    return not ev.result_sha or file_sha256(session_dir / ev.path) == ev.result_sha


def load_evaluation(session_dir: Path, end: EvalEnd) -> Evaluation:
    """An evaluation from its `eval.end` event and its saved result (a result that is
    missing, damaged or not `socratic.eval/1` counts as none: the evaluator failed; so does
    one whose bytes are not those eval.end recorded: it was rewritten)."""
    error = end.summary.error
    if end.result_sha256 and file_sha256(session_dir / end.result) != end.result_sha256:
        result: EvalResult | None = None
        error = f"{end.result} differs from the result eval.end recorded (rewritten): no result"
    else:
        try:
            result = read_eval(session_dir / end.result)
        except ContractError:
            result = None
    ev = Evaluation(end.n, end.candidate_sha or "", end.set, result,
                    end.summary.exit_code or 0, end.result, error)
    ev.result_sha = end.result_sha256 or ""
    ev.imported = end.imported is not None
    return ev


class Evaluations:
    def __init__(self, session: Session, plan: CampaignPlan, *, evaluator: list[str],
                 timeout_s: float, env: dict[str, str], redact: Redactor, emit: Emit,
                 triggers: Triggers, holder: Holder = ALONE) -> None:
        self.session = session
        self.evaluator = evaluator
        self.timeout_s = timeout_s
        self.env = env
        self.redact = redact
        self.emit = emit
        self.goal = plan.goal
        self.goal_set = plan.goal_set
        self.task_hashes = plan.task_hashes
        self.task_source = plan.task_source
        self.libraries = plan.libraries   # pinned by campaign.start (pins.py)
        self.triggers = triggers
        self.history = History()
        self.seq = 0  # the highest number given, a run cut short by a kill included
        self.holder = holder   # lets go of the campaign while the evaluator runs (host.py)

    def restore(self, ends: list[EvalEnd], seq: int,
                retractions: Retractions | None = None) -> None:
        """A resumed campaign: the history from the log's eval.end events, each marked with
        what eval.retract took back (and the triggers' state from it); `seq` the highest
        eval.start number logged."""
        for e in ends:
            ev = load_evaluation(self.session.dir, e)
            ev.retracted = retractions.part(e.n) if retractions is not None else None
            self.history.add(ev)
        self.seq = max(self.seq, seq)
        self.triggers.resume(self.history.evals)

    def candidate_sha(self) -> str:
        data, bad = read_candidate(self.session.candidate)
        return sha256_text(data) if not bad and self.session.candidate.exists() else ""

    def check_task_files(self) -> list[str]:
        """Edits to the task's files (workspace copies or the frozen copy) change nothing; the
        frozen copy is put back and the edit reported."""
        notes = []
        ws_changed = changed_files(self.session.workspace_task, self.task_hashes)
        if ws_changed:
            notes.append("note: task/" + ", task/".join(ws_changed) + " in the workspace differ "
                         "from the task; edits to task files change nothing (evaluations use a "
                         "frozen copy).")
        frozen_changed = changed_files(self.session.task_dir, self.task_hashes)
        if frozen_changed:
            failed = restore(self.task_source, self.session.task_dir, self.task_hashes,
                             frozen_changed) if self.task_source else frozen_changed
            notes.append("note: the frozen task copy was modified (" + ", ".join(frozen_changed)
                         + "); " + ("restored" if not failed else "could not be restored: "
                                    + ", ".join(failed)) + ". Edits to task files change nothing.")
        return notes

    def run(self, set_name: str | None, source: str = "agent") -> Evaluation:
        """Evaluate the workspace candidate on `set_name`; `source` says who asked
        (agent|stophook|control)."""
        notes = self.check_task_files()
        if notes:
            self.emit(TaskModified(notes=notes))
        cand = self.session.candidate
        data, bad = read_candidate(cand)
        sha = sha256_text(data)
        n = self._begin(data, sha, set_name, source)
        # the evaluator reads a copy of these very bytes, where the agent cannot write:
        # a candidate swapped during the evaluation changes nothing that is recorded
        judged = self._private_copy(data, sha) if data else cand
        t0 = time.monotonic()

        def on_row(row: ScenarioProgress) -> None:
            with self.holder.inside():
                self._scenario(n, row.index, row.total, row)

        def on_wait(line: dict[str, Any]) -> None:  # another evaluation has this GPU's turn
            with self.holder.inside():
                self.emit(EvalWait(n=n, gpu=str(line.get("gpu") or ""),
                                   holder=str(line.get("holder") or "")))

        error: str | None
        if not data:
            result, code, stderr, error = None, 2, "", bad or "workspace/candidate.cu is missing or empty"
        else:
            with self.holder.outside():
                result, code, stderr, error = run_evaluator(
                    self.evaluator, self.session.task_dir.resolve(), judged, set_name,
                    env=self.env, timeout_s=self.timeout_s, on_scenario=on_row,
                    on_gpu_wait=on_wait)
        stderr = self.redact(stderr)
        if result is not None and result.candidate.sha256 != sha:
            error = (f"the evaluator reports candidate sha256 {result.candidate.sha256[:16]}..., "
                     f"not the {sha[:16]}... it was given: no result")
            result, code = None, 2
        odd = library_problem(self.libraries, result.build.libraries) if result is not None \
            else None
        if odd is not None:   # timed against another baseline: no result (and said so)
            self.emit(Problem(where="build", error=odd))
            error, result, code = odd, None, 2
        doc = result.to_dict() if result is not None else {"error": error, "exit_code": code,
                                                           "stderr": stderr[-20000:]}
        ev = self._end(n, sha, set_name, source, doc, result, code, error,
                       time.monotonic() - t0, stderr)
        ev.notes = notes
        self.triggers.on_eval(ev)
        return ev

    def record_import(self, result: EvalResult, data: bytes, imported: dict[str, str]) -> Evaluation:
        """Record an evaluation made elsewhere (`socratic eval --json` on the GPU node) of the
        source `data`, exactly as a local one is recorded (candidate kept, eval.start, a
        row per scenario, evals/NNNN.json, eval.end with `imported`, history, triggers).
        The caller has checked that `result` is of this task and of `data`."""
        sha = sha256_text(data)
        # the result is saved first: a disk too full for it leaves nothing logged
        n = max(len(self.history), self.seq, self._highest_saved()) + 1
        write_json_atomic(self.session.dir / f"evals/{n:04d}.json",
                          redacted(result.to_dict(), self.redact))
        n = self._begin(data, sha, result.set, "import", n)
        for i, row in enumerate(result.scenarios):
            self._scenario(n, i + 1, len(result.scenarios), row)
        ev = self._end(n, sha, result.set, "import", result.to_dict(), result, result.exit_code,
                       None, None, "", saved=True, imported=imported)
        ev.imported = True
        self.triggers.on_eval(ev)
        return ev

    def _private_copy(self, data: bytes, sha: str) -> Path:
        """`data` as `candidate.cu` in a folder of its own under the session's private
        folder (content-addressed, so the build cache still hits), read-only."""
        folder = self.session.private_dir() / "sources" / sha[:32]
        path = folder / "candidate.cu"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if path.read_bytes() == data:
                return path
        except OSError:
            pass
        write_bytes_atomic(path, data, mode=0o444)
        return path

    def _begin(self, data: bytes, sha: str, set_name: str | None, source: str,
               n: int | None = None) -> int:
        """Number the evaluation (unless `n` was taken already), keep its source, log
        eval.start."""
        # an evaluation cut by a kill keeps its n, and a saved result is never overwritten
        # (a log lost or emptied does not give its numbers out again)
        if n is None:
            n = max(len(self.history), self.seq, self._highest_saved()) + 1
        self.seq = n
        if data:
            dest = self.session.candidates / f"{sha[:16]}.cu"
            if not dest.exists():
                dest.write_bytes(data)
        self.emit(EvalStart(n=n, candidate_sha=sha, set=set_name, source=source))
        return n

    def _scenario(self, n: int, index: int, total: int, row: ScenarioResult) -> None:
        self.emit(EvalScenario(n=n, index=index, total=total, **scenario_fields(row)))

    def _end(self, n: int, sha: str, set_name: str | None, source: str, doc: dict[str, Any],
             result: EvalResult | None, code: int, error: str | None, seconds: float | None,
             stderr: str, saved: bool = False, **extra: Any) -> Evaluation:
        """Save the result as evals/NNNN.json (unless `saved` already), add it to the
        history, log eval.end."""
        # a candidate can smuggle text into its build log (e.g. #include of a /proc file)
        clean = redacted(doc, self.redact)
        if clean is not doc:
            doc = clean
            result = parse_eval(doc) if result is not None else None
        rel = f"evals/{n:04d}.json"
        if not saved:
            write_json_atomic(self.session.dir / rel, doc)  # never left half-written
        ev = Evaluation(n, sha, set_name, result, code, rel, error, seconds or 0.0,
                        stderr[-4000:])
        # the saved bytes' hash: a result file rewritten later is no evaluation of this one
        ev.result_sha = file_sha256(self.session.dir / rel) or ""
        if ev.result_sha:
            extra["result_sha256"] = ev.result_sha
        self.history.add(ev)
        waited = result.gpu_wait_s if result is not None else None
        if seconds is not None:
            extra["seconds"] = round(seconds, 3)
        if isinstance(waited, (int, float)):
            extra["gpu_wait_s"] = waited
        vs = scenario_vs(result.scenarios if result is not None else [])
        if vs:
            extra["scenario_vs"] = vs
        self.emit(EvalEnd(n=n, candidate_sha=sha, set=set_name, source=source,
                          summary=EvalSummary.from_dict(ev.summary()), result=rel, **extra))
        return ev

    def _highest_saved(self) -> int:
        nums = [int(p.stem) for p in (self.session.dir / "evals").glob("[0-9][0-9][0-9][0-9]*.json")
                if p.stem.isdigit()]
        return max(nums, default=0)

    def table(self, ev: Evaluation) -> str:
        """What the agent sees of an evaluation: harness notes, then the compact table."""
        return "\n".join([*ev.notes, compact_table(ev, self.goal)])

    def tool(self, inp: dict[str, Any]) -> str:
        """The agent's `evaluate` tool: the goal set unless it names another."""
        set_name = inp.get("scenarios") if isinstance(inp.get("scenarios"), str) else None
        return self.table(self.run(set_name or self.goal_set))
