"""A campaign whose agent is an outside coding agent (Claude Code, Codex CLI, Gemini CLI),
driven by that agent's hooks: every hook call and every `./evaluate` is a short-lived
process that opens the session, rebuilds what it needs from the event log and
state.json, acts, and saves the state back, all under the session's writer lock
(harness/sessionlog.py).

The pieces are the campaign's: evaluations run, numbered and saved as `socratic run`
does them (harness/evaluation.py), the same five detectors (harness/triggers.py) and
bank suggestions, the same goal predicate and prompt texts (harness/prompt.py).
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterator

from socratic.errors import InputError
from socratic.eventlog import read_jsonl

from socratic.harness import prompt
from socratic.harness.config import Config, cost_usd
from socratic.harness.evaluation import Evaluation, History, compact_table, run_evaluator
from socratic.harness.session import Session
from socratic.harness.sessionlog import SessionLog
from socratic.harness.task import Task, changed_files, restore, sha256_text
from socratic.harness.tools import SECRET_NAME, Redactor, scrubbed_env
from socratic.harness.triggers import Detectors, Fired

ATTACH_KEY = "attach"  # config.json section of an attached session


@dataclass
class AttachSettings:
    """What `socratic attach` decided, kept in config.json under "attach"."""

    agent: str
    start_epoch: float                      # wall time of campaign.start (the clock's zero)
    scenario_ids: list[str]
    launch_prompt: str                      # the first message; not logged as a question
    timeouts_s: dict[str, float]            # hook timeouts written into the agent's config
    wait_s: float = 3000.0                  # longest a hook waits (pause, human question)
    cc: str | None = None                   # GPU compute capability (bank suggestions)
    has_comparison: bool = False


@dataclass
class AttachState:
    """What one hook call leaves for the next (state.json)."""

    inbox_offset: int = 0
    questions: list[dict[str, Any]] = field(default_factory=list)   # not yet delivered
    notes: list[str] = field(default_factory=list)                  # harness notes, likewise
    paused: bool = False
    auto_questions: bool = False
    stop_requested: bool = False
    eval_requested: bool = False
    transcripts: dict[str, int] = field(default_factory=dict)       # path -> offset read
    echo: list[str] = field(default_factory=list)   # texts logged before the transcript had them
    usage_ids: list[str] = field(default_factory=list)
    text_keys: list[str] = field(default_factory=list)  # transcript texts that may repeat
    tool_calls: int = 0
    calls_since_stop: int = 0
    empty_stops: int = 0       # stop attempts in a row with no tool call between them
    blocks: int = 0            # refused stops in a row with no tool call between them
    asked_ids: list[str] = field(default_factory=list)
    recent_text: str = ""
    start_fired: bool = False
    declared_last_at: int | None = None
    explained_n: int = 0       # correctness_failure settled for evaluations up to this n
    ended: str | None = None   # the campaign.end reason, while ended
    last_refusal: str = ""     # an agent may hand a refused stop's reason back as a prompt

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "AttachState":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the environment's key-like variables (the agent's API key among them),
    kept out of the event log."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items()
            if (k.startswith("ANTHROPIC_") or SECRET_NAME.search(k)) and len(v) >= 8
            and not k.endswith("_URL") and not k.endswith("_MODEL")]


class Attached:
    def __init__(self, session_dir: Path, secrets: list[str] | None = None) -> None:
        self.session = Session(Path(session_dir))
        saved = self.session.load_config()
        if not isinstance(saved.get(ATTACH_KEY), dict):
            raise InputError(f"{self.session.config_file}: not an attached session "
                             f"(made by `socratic run`, not `socratic attach`)")
        self.settings = AttachSettings(**saved[ATTACH_KEY])
        self.config = Config.from_dict(saved.get("config") or {})
        self.task = Task.load(self.session.task_dir)
        self.goal = self.task.goal(self.config.goal_min_speedup)
        self.goal_set = self.config.scenarios or self.task.default_set
        self.task_hashes: dict[str, str] = dict(saved.get("task_hashes") or {})
        src = saved.get("task_source")
        self.task_source = Path(src) if src else None
        self.log = SessionLog(self.session.dir, self.settings.start_epoch)
        secrets = env_secrets() if secrets is None else secrets
        self.redact = Redactor(secrets)
        self.env = scrubbed_env(secrets)
        self.state = AttachState()
        self._history: History | None = None
        self._eval_seq = 0
        self._detectors: Detectors | None = None
        self._suggester: Any = False  # False: not built yet

    # ------------------------------------------------------------------ opening
    @classmethod
    @contextmanager
    def open(cls, session_dir: Path, secrets: list[str] | None = None) -> Iterator["Attached"]:
        """The session, its state loaded, under the writer lock; the state is saved back
        on the way out (also when the body raised: what it logged stays consistent)."""
        camp = cls(session_dir, secrets)
        with camp.log.locked():
            camp.state = AttachState.from_dict(camp.session.load_state())
            try:
                yield camp
            finally:
                camp.save_state()

    def save_state(self) -> None:
        self.session.save_state(asdict(self.state))

    # ------------------------------------------------------------------ logging
    def emit(self, type_: str, **fields_: Any) -> dict[str, Any]:
        if self.redact.secrets:
            raw = json.dumps(fields_, ensure_ascii=False)
            if any(s in raw for s in self.redact.secrets):
                fields_ = json.loads(self.redact(raw))
        return self.log.append(type_, **fields_)

    def resume(self, why: str) -> None:
        """A hook call after campaign.end (the engineer typed into the agent): go on."""
        if self.state.ended is None:
            return
        self.emit("campaign.resume", reason=why, ended=self.state.ended)
        self.state.ended = None
        self.state.stop_requested = False
        self.state.empty_stops = self.state.blocks = 0

    def end(self, reason: str, **extra: Any) -> None:
        if self.state.ended is not None:
            return
        best = self.history.best()
        self.emit("campaign.end", reason=reason, evaluations=len(self.history),
                  tool_calls=self.state.tool_calls, best=best.to_record() if best else None,
                  **extra)
        self.log_sync()
        self.state.ended = reason

    def log_sync(self) -> None:
        try:
            fd = os.open(self.log.path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ history, detectors
    @property
    def history(self) -> History:
        if self._history is None:
            self._history = History()
            events, _ = read_jsonl(self.session.events) if self.session.events.exists() \
                else ([], 0)
            for e in events:
                if e.get("type") == "eval.start" and isinstance(e.get("n"), int):
                    self._eval_seq = max(self._eval_seq, e["n"])
                elif e.get("type") == "eval.end":
                    self._history.add(self._load_eval(e))
        return self._history

    def _load_eval(self, e: dict[str, Any]) -> Evaluation:
        result = None
        if e.get("result"):
            try:
                result = json.loads((self.session.dir / e["result"]).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                result = None
        if not isinstance(result, dict) or result.get("schema") is None:
            result = None
        summ = e.get("summary") if isinstance(e.get("summary"), dict) else {}
        return Evaluation(int(e.get("n") or 0), str(e.get("candidate_sha", "")), e.get("set"),
                          result, int(summ.get("exit_code", 0) or 0), e.get("result") or "",
                          summ.get("error"))

    @property
    def detectors(self) -> Detectors:
        """The five detectors as the campaign's would be now: rebuilt by replaying the
        evaluations (as --resume does), with what replay cannot know from state.json."""
        if self._detectors is None:
            d = Detectors(self.config.triggers)
            for ev in self.history.evals:
                d.on_eval(ev, ev.set == self.goal_set, replay=True)
            d.start.done = self.state.start_fired
            d.declared.last_at = self.state.declared_last_at
            pending = d.correctness.pending
            if pending is not None and pending.n <= self.state.explained_n:
                d.correctness.pending = None
            self._detectors = d
        return self._detectors

    def _settle_detectors(self) -> None:
        d = self.detectors
        self.state.start_fired = d.start.done
        self.state.declared_last_at = d.declared.last_at
        if d.correctness.pending is None:
            self.state.explained_n = max([self.state.explained_n]
                                         + [e.n for e in self.history.evals])

    def suggester(self) -> Callable[[str, list[str], str], list[tuple[str, str]]] | None:
        if self._suggester is False:
            from socratic.harness.campaign import bank_suggester

            try:
                self._suggester = bank_suggester(self.settings.has_comparison, self.settings.cc)
            except InputError:
                self._suggester = None  # a user bank file broken since attach: no suggestions
        return self._suggester

    def fire(self, fired: Fired) -> None:
        """As the campaign: log the trigger with the bank's suggestions; with
        auto-questions on, queue the top one not asked yet."""
        st = self.state
        suggestions: list[tuple[str, str]] = []
        fn = self.suggester()
        queued = [q["bank_id"] for q in st.questions if q.get("bank_id")]
        if fn is not None:
            try:
                suggestions = fn(fired.kind, st.asked_ids + queued, st.recent_text[-2000:])
            except Exception:  # noqa: BLE001 - a bank bug never stops the campaign
                suggestions = []
        self.emit("trigger", kind=fired.kind, reason=fired.reason,
                  suggestions=[s[0] for s in suggestions])
        asked = set(st.asked_ids) | set(queued)
        fresh = [s for s in suggestions if s[0] not in asked]
        if st.auto_questions and fresh:
            bid, text = fresh[0]
            st.questions.append({"text": text, "bank_id": bid, "trigger": fired.kind,
                                 "source": "auto"})
        self._settle_detectors()

    def fire_start(self) -> None:
        f = self.detectors.start.fire(self.task.name, self.goal.describe())
        if f:
            self.fire(f)

    # ------------------------------------------------------------------ the agent's words
    def agent_text(self, text: str) -> None:
        if not text.strip():
            return
        self.emit("agent.text", text=text)
        self.state.recent_text = (self.state.recent_text + "\n" + text)[-4000:]
        for f in self.detectors.on_text(text, len(self.history)):
            self.fire(f)
        self._settle_detectors()

    def read_transcript(self, fmt: str, path: str | None) -> None:
        """Log what the agent wrote since the last call (text, and token usage)."""
        from socratic.harness.transcripts import read_new

        if not path:
            return
        st = self.state
        chunk, offset = read_new(fmt, path, st.transcripts.get(path, 0))
        st.transcripts[path] = offset
        for text, key in zip(chunk.texts, chunk.keys):
            if key is not None:
                if key in st.text_keys:
                    continue  # the same message written again
                st.text_keys = (st.text_keys + [key])[-500:]
            if text in st.echo:  # logged from a Stop payload already
                st.echo.remove(text)
                continue
            self.agent_text(text)
        for u in chunk.usage:
            if u["id"] in st.usage_ids:
                continue
            st.usage_ids = (st.usage_ids + [u["id"]])[-500:]
            model = u.pop("model") or self.config.model
            u.pop("id")
            self.emit("usage", **u, model=model, cost_usd=round(cost_usd(
                model, u["input_tokens"], u["output_tokens"], u["cache_read"],
                u["cache_write"]), 6))

    def last_message(self, text: str | None) -> None:
        """The agent's final words as the Stop payload has them: a transcript written
        asynchronously may not hold them yet; logged now, skipped when it does."""
        if not isinstance(text, str) or not text.strip():
            return
        recent = self.state.recent_text
        if recent.rstrip().endswith(text.strip()):
            return
        self.agent_text(text)
        self.state.echo = (self.state.echo + [text])[-5:]

    # ------------------------------------------------------------------ inbox and questions
    def poll_inbox(self) -> None:
        """Questions and controls from the TUI and `socratic inject`."""
        st = self.state
        if not self.session.inbox.exists():
            return
        cmds, offset = read_jsonl(self.session.inbox, st.inbox_offset)
        st.inbox_offset = offset
        for c in cmds:
            if c.get("type") == "question" and str(c.get("text", "")).strip():
                st.questions.append({"text": str(c["text"]), "bank_id": c.get("bank_id"),
                                     "trigger": c.get("trigger"), "source": "human"})
            elif c.get("type") == "control":
                action = c.get("action")
                if action not in ("pause", "resume", "stop", "evaluate", "auto_on", "auto_off"):
                    continue
                self.emit("control", action=action)
                if action in ("auto_on", "auto_off"):
                    st.auto_questions = action == "auto_on"
                elif action == "pause":
                    st.paused = True
                elif action == "resume":
                    st.paused = False
                elif action == "stop":
                    st.stop_requested = True
                elif action == "evaluate":
                    st.eval_requested = True

    def wait(self, until: Callable[[], bool], deadline: float) -> bool:
        """Poll the inbox until `until()` holds or the deadline passes; returns until().
        Gives up early when the agent that ran this hook is gone (orphaned)."""
        parent = os.getppid()
        while not until() and time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(max(self.config.poll_s, 0.01))
            self.poll_inbox()
        return until()

    def wait_while_paused(self, deadline: float) -> None:
        st = self.state
        if st.paused and not st.stop_requested:
            self.wait(lambda: not st.paused or st.stop_requested, deadline)

    def run_requested_evaluation(self) -> None:
        if self.state.eval_requested and not self.state.stop_requested:
            self.state.eval_requested = False
            ev = self.evaluate(self.goal_set, source="control")
            self.state.notes.append("The engineer ran an evaluation of the current "
                                    "candidate:\n" + compact_table(ev, self.goal))

    def deliver(self) -> list[str]:
        """Harness notes and questions due, as texts for the agent; the questions are
        logged as delivered."""
        st = self.state
        out = list(st.notes)
        st.notes = []
        for q in st.questions:
            self.emit("question", text=q["text"], bank_id=q.get("bank_id"),
                      trigger=q.get("trigger"), source=q.get("source", "human"))
            if q.get("bank_id"):
                st.asked_ids.append(str(q["bank_id"]))
            out.append(prompt.question_message(q["text"], q.get("source", "human"),
                                               q.get("trigger")))
        st.questions = []
        return out

    def human_question(self, text: str) -> None:
        """Words the engineer typed into the agent directly: a human question."""
        self.emit("question", text=text, bank_id=None, trigger=None, source="human")

    # ------------------------------------------------------------------ evaluation
    def check_task_files(self) -> list[str]:
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

    def current_sha(self) -> str:
        cand = self.session.candidate
        return sha256_text(cand.read_bytes()) if cand.exists() else ""

    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        """One evaluation of the workspace candidate, numbered, saved and logged as the
        campaign does it; the detectors see it."""
        history = self.history
        notes = self.check_task_files()
        if notes:
            self.emit("task.modified", notes=notes)
        cand = self.session.candidate
        data = cand.read_bytes() if cand.exists() else b""
        sha = sha256_text(data)
        n = max(len(history), self._eval_seq) + 1
        self._eval_seq = n
        if data:
            dest = self.session.candidates / f"{sha[:16]}.cu"
            if not dest.exists():
                dest.write_bytes(data)
        self.emit("eval.start", n=n, candidate_sha=sha, set=set_name, source=source)
        t0 = time.monotonic()

        def on_row(row: dict[str, Any]) -> None:
            self.emit("eval.scenario", n=n, index=row.get("index"), total=row.get("total"),
                      scenario=row.get("id"), correct=row.get("correct"), err=row.get("err"),
                      err_baseline=row.get("err_baseline"), baseline_ms=row.get("baseline_ms"),
                      candidate_ms=row.get("candidate_ms"), speedup=row.get("speedup"),
                      tflops=row.get("tflops"), bound_fraction=row.get("bound_fraction"))

        if not data:
            result, code, stderr, error = None, 2, "", "workspace/candidate.cu is missing or empty"
        else:
            result, code, stderr, error = run_evaluator(
                self.config.evaluator, self.session.task_dir.resolve(), cand.resolve(), set_name,
                env=self.env, timeout_s=self.config.eval_timeout_s, on_scenario=on_row)
        stderr = self.redact(stderr)
        if result is not None and self.redact.secrets:
            raw = json.dumps(result)
            if any(s in raw for s in self.redact.secrets):
                result = json.loads(self.redact(raw))
        rel = f"evals/{n:04d}.json"
        doc = result if result is not None else {"error": error, "exit_code": code,
                                                 "stderr": stderr[-20000:]}
        (self.session.dir / rel).write_text(json.dumps(doc, indent=1), encoding="utf-8")
        ev = Evaluation(n, sha, set_name, result, code, rel, error, time.monotonic() - t0,
                        stderr[-4000:])
        detectors = self.detectors  # built from the history before this evaluation
        history.add(ev)
        self.emit("eval.end", n=n, candidate_sha=sha, set=set_name, source=source,
                  summary=ev.summary(), result=rel, seconds=round(ev.seconds, 3))
        ev.notes = notes
        for f in detectors.on_eval(ev, set_name == self.goal_set):
            self.fire(f)
        self._settle_detectors()
        return ev

    def goal_evaluation(self) -> tuple[Evaluation, bool]:
        """The current candidate's evaluation on the goal set: reused by source hash, or
        run now. Returns it and whether it was reused."""
        ev = self.history.find(self.current_sha(), self.goal_set)
        if ev is not None:
            return ev, True
        return self.evaluate(self.goal_set, source="stophook"), False

    def limit_reached(self) -> str | None:
        c = self.config
        if c.max_tool_calls is not None and self.state.tool_calls >= c.max_tool_calls:
            return "max_tool_calls"
        if c.max_minutes is not None and \
                (time.time() - self.settings.start_epoch) / 60 >= c.max_minutes:
            return "max_minutes"
        return None
