"""The campaign: one loop around a general coding agent.

    user message (tool results, stop-hook verdict, questions) ──▶ model (streamed)
      ▲                                                             │
      └── safe point: inbox (questions, pause/resume/stop/evaluate) ◀── tools / stop hook

Everything that happens is appended to events.jsonl first; the conversation is kept in
messages.jsonl, so `--resume` rebuilds the campaign from the log and the workspace.

This module wires the pieces and runs the loop; each piece reads and tests alone:
record.py (the event log, redacted), inbox.py (questions, notes, controls), evaluations.py
(evaluations and their history), triggers.py, stophook.py, conversation.py (messages and
the context handoff), resume.py (state rebuilt from the log).
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from socratic import chain
from socratic.contracts import ApiRetry, ContextHandoff, EndReason, Problem, ToolResult, Usage
from socratic.errors import InputError
from socratic.eventlog import EventLog
from socratic.gpuinfo import gpu_info
from socratic.harness.api.agent import Agent, ContextTooLong, FatalAPIError, Response
from socratic.harness.api.conversation import Conversation, handoff_seed
from socratic.harness.api.tools import Tools, tool_specs
from socratic.harness.core.config import Config
from socratic.harness.core.evaluator_process import list_sets
from socratic.harness.core.pins import (
    CONFIG_FILE,
    already_said,
    enforce,
    pins_of,
    problem_line,
    record_problem,
    resume_changes,
)
from socratic.harness.core.pins import hashes as pinned_hashes
from socratic.harness.core.record import Recorder, TextStream
from socratic.harness.core.redaction import Redactor, scrubbed_env
from socratic.harness.core.resume import ResumeState, restart_messages, resume_state
from socratic.harness.core.session import Session, repair_tail
from socratic.harness.core.task import CampaignTask, changed_files, restore
from socratic.harness.engine import prompt
from socratic.harness.engine.engine import Engine, Marks
from socratic.harness.engine.plan import CampaignPlan, resolve_plan, start_event
from socratic.harness.engine.startup import bank_suggester, has_comparison, versions
from socratic.harness.engine.triggers import Suggester
from socratic.logread import read_log


def logged_output(session: Session, result: ToolResult) -> str:
    """A logged tool result's full text (from its blob file when it was too long)."""
    if result.blob:
        try:
            return (session.dir / result.blob).read_text(encoding="utf-8")
        except OSError:
            pass
    return result.output


class EndCampaign(Exception):
    """Raised where the loop cannot return directly (inside API retries)."""

    def __init__(self, reason: EndReason) -> None:
        super().__init__(reason)
        self.reason = reason


class Campaign:
    """socratic's own API loop; it is the engine's host (engine/host.py): one process
    holds the campaign throughout, and its clock is the log's."""

    def __init__(self, session: Session, plan: CampaignPlan, config: Config, *,
                 api_key: str | None, base_url: str | None = None,
                 suggester: Suggester | None = None, agent: Agent | None = None,
                 resumed: ResumeState | None = None, marks: Marks | None = None,
                 record_note: str | None = None) -> None:
        resumed = resumed or ResumeState()
        secrets = [api_key] if api_key else []
        env = scrubbed_env(secrets)  # tools' and the evaluator's: no keys
        self.session = session
        self.plan = plan
        self.task = plan.task
        self.config = config
        self.log = EventLog.open(session.dir, fsync_every_s=config.fsync_every_s)
        self.redact = Redactor(secrets)
        self.emit = Recorder(self.log, self.redact)
        self.engine = Engine(session, plan, config, sink=self.emit, host=self, env=env,
                             redact=self.redact, suggester=suggester, resumed=resumed,
                             marks=marks or Marks(), record_note=record_note)
        self.goal, self.goal_set = plan.goal, plan.goal_set
        # the engine's pieces, by their names
        self.inbox, self.evals = self.engine.inbox, self.engine.evals
        self.triggers, self.counters = self.engine.triggers, self.engine.counters
        self.tools = Tools(session.workspace, env=env, output_cap=config.output_cap,
                           bash_timeout_s=config.bash_timeout_s, redact=self.redact,
                           evaluate=self.evals.tool)
        self.tool_specs = tool_specs(config.output_cap, config.bash_timeout_s)
        self.scenario_ids = plan.scenario_ids
        self.system = prompt.system_prompt(plan.task, self.goal, self.goal_set, self.scenario_ids,
                                           config.output_cap, config.bash_timeout_s)
        self.agent = agent or Agent(config, api_key, base_url=base_url, on_retry=self._on_retry,
                                    sleep=self._retry_sleep)
        self.convo = Conversation(session, self.redact)
        self.text = TextStream(self.emit, config.text_flush_s)
        self.pending: list[dict[str, Any]] = []       # content of the next user message
        self.context_tokens = 0                        # the last request's size
        # harness overhead per loop iteration (the overhead benchmark reads them)
        self.stats = {"model_s": 0.0, "tool_s": 0.0, "wait_s": 0.0}
        self.overheads: list[float] = []
        self._mark: tuple[float, float] | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, task_dir: Path, config: Config, *, session_dir: Path | None = None,
               api_key: str | None = None, base_url: str | None = None,
               suggester: Suggester | None = None) -> Campaign:
        src = CampaignTask.load(task_dir)
        sets = list_sets(config.evaluator, src.dir.resolve(),
                         env=scrubbed_env([api_key] if api_key else []))
        # the plan, once; an unknown --scenarios is bad input: reported before the session exists
        plan = resolve_plan(src, config, sets=sets)
        gpu = gpu_info()
        if suggester is None:  # a bad user bank file, too, before the session
            suggester = bank_suggester(has_comparison(src, plan.goal), (gpu or {}).get("cc"))
        session, hashes = Session.create(src, config, session_dir)
        # the frozen copy it now runs on, and the hashes that hold it
        plan = replace(plan, task=CampaignTask.load(session.task_dir), task_hashes=hashes,
                       task_source=src.dir.resolve())
        c = cls(session, plan, config, api_key=api_key, base_url=base_url, suggester=suggester)
        c.emit(start_event(plan, config, model=config.model, session=session.dir.name,
                           versions=versions(), gpu=gpu, session_id=session.session_id))
        c.pending = [{"type": "text", "text": (
            "Begin. The workspace holds candidate.cu (a copy of the baseline), NOTES.md and "
            "task/. The goal predicate is checked each time you end your turn.")}]
        c.inbox.save()
        return c

    @classmethod
    def resume(cls, session_dir: Path, *, overrides: dict[str, Any] | None = None,
               api_key: str | None = None, base_url: str | None = None,
               suggester: Suggester | None = None) -> Campaign:
        """The campaign of `session_dir` where its files say it was: settings from
        config.json (with `overrides`), state from the log and state.json, the conversation
        from messages.jsonl, the frozen task put back if it was edited."""
        session = Session(Path(session_dir))
        if not session.events.exists() or not session.config_file.exists():
            raise InputError(f"{session_dir}: not a campaign session (no events.jsonl/config.json)")
        session.claim()  # a second campaign on a live session is refused here, naming it
        for path in (session.events, session.messages):
            repair_tail(path)  # a line torn by the crash must not swallow the next one
        saved = session.load_config()
        # what the verdict depends on comes from the log's verified start, not config.json
        parsed, record = chain.read_trusted(session.dir)
        log = read_log(parsed.events)   # the one reading (socratic.logread)
        pins = pins_of(log)
        hashes, said = pinned_hashes(saved.task_hashes, pins)
        source = Path(saved.task_source) if saved.task_source else None
        if pins is not None and pins.task_source is not None:
            source = Path(pins.task_source)
        bad = changed_files(session.task_dir, hashes)
        if bad and source is not None:
            restore(source, session.task_dir, hashes, bad)
        task = CampaignTask.load(session.task_dir)
        config = Config.from_dict(dict(saved.config))
        if pins is not None:
            said += enforce(config, pins, task.default_set)
        ov = {k: v for k, v in (overrides or {}).items() if v is not None}
        config = Config.from_dict({**config.to_dict(), **ov})
        changes = resume_changes(config, pins) if pins is not None else {}
        sets = list_sets(config.evaluator, session.task_dir.resolve(),
                         env=scrubbed_env([api_key] if api_key else []))
        plan = resolve_plan(task, config, sets=sets, task_hashes=hashes, task_source=source)
        if suggester is None:  # this node's GPU: a resume may move
            suggester = bank_suggester(has_comparison(task, plan.goal),
                                       (gpu_info() or {}).get("cc"))
        # events that do not match their declaration are skipped, and counted below
        r = resume_state(parsed.events, session.load_state(), session.inbox, log=log)
        if r.saved.auto_questions is not None and not (overrides or {}).get("auto_questions"):
            config.auto_questions = r.saved.auto_questions  # as last toggled
        c = cls(session, plan, config, api_key=api_key, base_url=base_url, suggester=suggester,
                resumed=r, marks=Marks.of(r.marks),
                record_note=record.describe() if record.status == chain.BROKEN else None)
        ctx, messages = session.load_messages()
        kept, c.pending = restart_messages(messages, r.results,
                                           lambda res: logged_output(session, res))
        c.convo = Conversation(session, c.redact, ctx, kept)
        if len(kept) != len(messages):
            c.convo.rewrite()  # the unanswered user message goes out again, as pending
        c.engine.resumed(ctx=ctx, messages=len(kept), skipped=parsed.skipped or None,
                         **changes)
        for where, error in ([("events.jsonl", record_problem(record))]
                             if record.status == chain.BROKEN else []) + \
                ([(CONFIG_FILE, problem_line(said))] if said else []):
            if not already_said(parsed.events, where, error):
                c.emit(Problem(where=where, error=error))
        return c

    # ------------------------------------------------------------------ the loop
    def run(self) -> EndReason:
        """Run until the goal is met, a limit, a stop, or a stall; returns the end reason."""
        main = threading.current_thread() is threading.main_thread()
        prev = signal.getsignal(signal.SIGTERM)
        if main:
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            return self._run()
        except KeyboardInterrupt:
            return self.end("interrupted")
        except EndCampaign as exc:
            return self.end(exc.reason)
        except FatalAPIError as exc:
            return self.end("api_error", error=self.redact(str(exc))[:500])
        except OSError as exc:  # a full disk: the end is logged if the log can take it
            where = f": {exc.filename}" if exc.filename else ""
            line = f"{exc.strerror or exc}{where}"
            try:
                self.end("error", error=line)
            except OSError:
                pass
            raise OSError(exc.errno, f"the campaign stopped ({exc.strerror or exc})",
                          exc.filename) from None
        finally:
            self.session.release()
            if main:
                signal.signal(signal.SIGTERM, prev)

    def _run(self) -> EndReason:
        self.engine.fire_start()
        while True:
            self._iteration_stats()
            self.engine.safe_point()
            reason = self.engine.due_end()
            if reason:
                return self.end(reason)
            self.deliver()
            if self.context_tokens > self.config.context_limit_tokens:
                self.handoff(f"context at {self.context_tokens} tokens")
            self.convo.append("user", self.pending)
            self.pending = []
            try:
                resp = self._respond()
            except ContextTooLong as exc:
                self.pending = self.convo.take_last()
                self.handoff(f"the API refused the context: {str(exc)[:200]}")
                continue
            self.convo.append("assistant", resp.content)
            self.engine.saw_text(resp.text)  # logged as it streamed (TextStream)
            if resp.tool_uses:
                ended = self._run_tools(resp)
            elif resp.stop_reason == "max_tokens":
                ended, self.pending = None, [{"type": "text", "text": (
                    "(Your response was cut at the max_tokens limit. Continue.)")}]
            elif resp.stop_reason == "refusal":
                ended, self.pending = None, [{"type": "text", "text": "Continue with the task."}]
            else:
                ended = self._stop_attempt()
            if ended:
                return ended

    def _respond(self) -> Response:
        t = time.monotonic()
        self.text.restart_clock()
        try:
            resp = self.agent.respond(self.system, self.tool_specs, self.convo.messages,
                                      self.text)
        finally:
            self.stats["model_s"] += time.monotonic() - t
        self.text.flush()
        u = resp.usage
        self.engine.model_turn(u.get("cost_usd", 0.0))
        self.context_tokens = (u.get("input_tokens", 0) + u.get("cache_read", 0)
                               + u.get("cache_write", 0) + u.get("output_tokens", 0))
        self.emit(Usage(**u, model=self.config.model, context_tokens=self.context_tokens))
        return resp

    def _run_tools(self, resp: Response) -> EndReason | None:
        results: list[dict[str, Any]] = []
        for i, use in enumerate(resp.tool_uses):
            reason = self.engine.due_end()
            if reason in ("max_tool_calls", "stopped"):
                self.pending = results
                return self.end(reason)
            tid = str(use["id"])
            self.engine.tool_call(tid, use["name"], use.get("input"))
            t = time.monotonic()
            ok, out = self.tools.run(use["name"], use.get("input") or {})
            dt = time.monotonic() - t
            self.stats["tool_s"] += dt
            self.engine.tool_result(tid, use["name"], ok, out, dt)
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": out,
                            **({} if ok else {"is_error": True})})
            if i < len(resp.tool_uses) - 1:
                self.engine.safe_point()  # pause takes effect after the current tool call
        self.pending = results
        return None

    def _stop_attempt(self) -> EndReason | None:
        """The model ended its turn: the stop hook judges the goal (engine.stop_attempt)."""
        out = self.engine.stop_attempt()
        if out.ended:
            return self.end(out.ended)
        self.pending = [{"type": "text", "text": out.refusal}]
        return None

    def end(self, reason: EndReason, **extra: Any) -> EndReason:
        """The campaign ends (logged once: the engine may have logged it already)."""
        self.text.flush()
        self.engine.end(reason, **extra)
        return self.engine.ended or reason

    @property
    def end_event(self) -> dict[str, Any] | None:
        """The campaign.end event, once logged."""
        return self.engine.end_event

    def _iteration_stats(self) -> None:
        """Harness overhead of the last loop iteration: wall time less model, tool and
        paused time."""
        now = time.monotonic()
        busy = self.stats["model_s"] + self.stats["tool_s"] + self.stats["wait_s"]
        if self._mark is not None:
            self.overheads.append((now - self._mark[0]) - (busy - self._mark[1]))
        self._mark = (now, busy)

    # ------------------------------------------------------------------ the engine's host
    def minutes(self) -> float:
        return (time.monotonic() - self.log.t0) / 60

    def sync(self) -> None:
        self.log.sync()

    def sleep(self, seconds: float) -> None:
        """The engine's sleep while it waits (paused, a stall): counted as waiting."""
        t = time.monotonic()
        time.sleep(seconds)
        self.stats["wait_s"] += time.monotonic() - t

    def caller_alive(self) -> bool:
        return True   # the loop is its own caller

    def outside(self) -> AbstractContextManager[object]:
        return nullcontext()   # no one else to let in

    def inside(self) -> AbstractContextManager[object]:
        return nullcontext()

    def deliver(self) -> None:
        """Questions and harness notes go into the next user message (the safe point)."""
        for text in self.engine.deliver_now():
            self.pending.append({"type": "text", "text": text})

    def handoff(self, why: str) -> None:
        """Start a fresh context seeded from the campaign state."""
        seed = handoff_seed(self.session, self.task, self.goal, self.goal_set,
                            self.evals.history, self.inbox.asked_texts, self.pending)
        self.convo.new_context()
        self.pending = [{"type": "text", "text": seed}]
        self.emit(ContextHandoff(ctx=self.convo.ctx, reason=why, tokens=self.context_tokens))
        self.context_tokens = 0

    # ------------------------------------------------------------------ API retries
    def _on_retry(self, attempt: int, error: str, wait: float) -> None:
        self.emit(ApiRetry(attempt=attempt, error=self.redact(error), wait_s=round(wait, 3)))

    def _retry_sleep(self, seconds: float) -> None:
        """Back off between API attempts while still obeying stop and the time limit."""
        end = time.monotonic() + seconds
        while True:
            self.engine.poll_inbox()
            if self.inbox.stop_requested:
                raise EndCampaign("stopped")
            if self.engine.limit_reached() == "max_minutes":
                raise EndCampaign("max_minutes")
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, max(self.config.poll_s, 0.01)))


def _raise_interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


__all__ = ["Campaign", "bank_suggester"]
