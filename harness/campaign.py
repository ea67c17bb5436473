"""The campaign: one loop around a general coding agent.

    user message (tool results, stop-hook verdict, questions) ──▶ model (streamed)
      ▲                                                             │
      └── safe point: inbox (questions, pause/resume/stop/evaluate) ◀── tools / stop hook

Everything that happens is appended to events.jsonl first; the conversation is kept in
messages.jsonl, so `--resume` rebuilds the campaign from the log and the workspace.
"""

from __future__ import annotations

import json
import os
import re
import platform
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from socratic.eventlog import EventLog, read_jsonl

from socratic.harness import prompt
from socratic.harness.agent import Agent, ContextTooLong, FatalAPIError, Response
from socratic.harness.config import Config
from socratic.harness.evaluation import (Evaluation, History, compact_table, describe_failing, judge,
                                list_sets, run_evaluator)
from socratic.harness.session import Session, repair_tail
from socratic.harness.task import Task, changed_files, restore, sha256_text
from socratic.harness.tools import Redactor, Tools, scrubbed_env, tool_specs
from socratic.harness.triggers import Detectors, Fired

# suggester(kind, asked_ids, recent_text) -> [(bank_id, text), ...], best first
Suggester = Callable[[str, list[str], str], list[tuple[str, str]]]


def bank_suggester(has_comparison: bool, cc: str | None = None) -> Suggester | None:
    """bank.suggest over the bank (shipped and user files), or None when the bank package is
    not available. A malformed user bank file is bad input (InputError naming file:line),
    not a campaign that silently suggests nothing. `cc`: the GPU's compute capability
    (nvidia-smi's, e.g. "10.0"), which picks the arch-specific questions; unknown: hopper,
    the arch the shipped tasks build for."""
    try:
        from socratic.bank import (SuggestContext, arch_from_cc, load_bank,  # type: ignore[attr-defined]
                          suggest)
    except Exception:  # noqa: BLE001 - the campaign runs without a bank
        return None
    bank = load_bank()
    arch = arch_from_cc(cc) or "hopper"

    def fn(kind: str, asked: list[str], recent_text: str) -> list[tuple[str, str]]:
        ctx = SuggestContext(arch=arch, has_comparison=has_comparison, asked=list(asked),
                             recent_text=recent_text)
        return [(e.id, e.text) for e in suggest(bank, kind, ctx, limit=5)]

    return fn


def goal_scenarios(sets: dict[str, list[str]] | None, task: Task,
                   name: str | None) -> list[str]:
    """The ids of the goal set `name`: a set of the evaluator's `--list`, or scenario ids
    joined by commas (as `socratic eval --scenarios` takes them). InputError when the list
    knows neither; when the evaluator could not list, task.toml's explicit ids."""
    if sets is None or not name:
        return (sets or {}).get(name or "") or task.scenario_ids(name)
    if name in sets:
        return sets[name]
    known = {i for ids in sets.values() for i in ids}
    ids = [i.strip() for i in name.split(",") if i.strip()]
    if ids and all(i in known for i in ids):
        return ids
    from socratic.errors import InputError

    raise InputError(f"--scenarios {name}: not a scenario set or id of task {task.name} "
                     f"(sets: {', '.join(sets)})")


def gpu_info() -> dict[str, Any] | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=name,driver_version,compute_cap",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=10).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    if not out:
        return None
    parts = [p.strip() for p in out[0].split(",")]
    return {"name": parts[0], "driver": parts[1] if len(parts) > 1 else None,
            "cc": parts[2] if len(parts) > 2 else None, "count": len(out)}


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("socratic", "anthropic"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


class Campaign:
    def __init__(self, session: Session, task: Task, config: Config, *, api_key: str | None,
                 base_url: str | None = None, suggester: Suggester | None = None,
                 task_hashes: dict[str, str], task_source: Path | None = None,
                 agent: Agent | None = None,
                 sets: dict[str, list[str]] | None = None) -> None:
        self.session = session
        self.task = task
        self.config = config
        self.task_hashes = task_hashes
        self.task_source = task_source
        self.goal = task.goal(config.goal_min_speedup)
        self.goal_set = config.scenarios or task.default_set
        self.log = EventLog.open(session.dir, fsync_every_s=config.fsync_every_s)
        self.redact = Redactor([api_key] if api_key else [])
        self.env = scrubbed_env([api_key] if api_key else [])
        self.eval_env = self.env  # the evaluator child needs nothing more
        self.suggester = suggester
        self.history = History()
        self.detectors = Detectors(config.triggers)
        self.tools = Tools(session.workspace, env=self.env, output_cap=config.output_cap,
                           bash_timeout_s=config.bash_timeout_s, redact=self.redact,
                           evaluate=self._tool_evaluate)
        self.tool_specs = tool_specs(config.output_cap, config.bash_timeout_s)
        if sets is None:
            sets = list_sets(config.evaluator, session.task_dir.resolve(), env=self.eval_env)
        self.scenario_ids = goal_scenarios(sets, task, self.goal_set)
        self.system = prompt.system_prompt(task, self.goal, self.goal_set, self.scenario_ids,
                                           config.output_cap, config.bash_timeout_s)
        self.agent = agent or Agent(config, api_key, base_url=base_url, on_retry=self._on_retry,
                                    sleep=self._retry_sleep)
        self.messages: list[dict[str, Any]] = []
        self.end_event: dict[str, Any] | None = None  # the campaign.end event, once logged
        self.ctx = 0
        self.pending: list[dict[str, Any]] = []      # content of the next user message
        self.questions: list[dict[str, Any]] = []    # queued, delivered at the safe point
        self.notes: list[str] = []                   # harness notes for the next user message
        self.asked_ids: list[str] = []
        self.asked_texts: list[str] = []
        self.recent_text = ""
        self.inbox_offset = 0
        self.paused = False
        self.stop_requested = False
        self.eval_requested = False
        self.tool_calls = 0
        self.eval_seq = 0
        self.turns = 0
        self.cost = 0.0
        self.empty_stops = 0
        self.calls_since_stop = 0
        self.context_tokens = 0
        self.stats = {"model_s": 0.0, "tool_s": 0.0, "wait_s": 0.0}
        self.overheads: list[float] = []
        self._text_buf: list[str] = []
        self._text_t = 0.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, task_dir: Path, config: Config, *, session_dir: Path | None = None,
               api_key: str | None = None, base_url: str | None = None,
               suggester: Suggester | None = None, use_bank: bool = True) -> "Campaign":
        src = Task.load(task_dir)
        # an unknown --scenarios is bad input: reported before the session exists
        sets = list_sets(config.evaluator, src.dir.resolve(),
                         env=scrubbed_env([api_key] if api_key else []))
        goal_scenarios(sets, src, config.scenarios or src.default_set)
        gpu = gpu_info()
        if suggester is None and use_bank:  # a bad user bank file, too, before the session
            suggester = bank_suggester(cls._has_comparison(src, config), (gpu or {}).get("cc"))
        session, hashes = Session.create(src, config, session_dir)
        task = Task.load(session.task_dir)
        c = cls(session, task, config, api_key=api_key, base_url=base_url, suggester=suggester,
                task_hashes=hashes, task_source=src.dir.resolve(), sets=sets)
        c.emit("campaign.start", task=task.name, goal=c.goal.to_dict(), model=config.model,
               scenarios={"set": c.goal_set, "ids": c.scenario_ids},
               gpu=gpu, host=socket.gethostname(), versions=versions(),
               session=session.dir.name, task_source=str(src.dir.resolve()),
               task_hashes=hashes, auto_questions=config.auto_questions,
               limits={"max_tool_calls": config.max_tool_calls, "max_turns": config.max_turns,
                       "max_minutes": config.max_minutes})
        c.pending = [{"type": "text", "text": (
            "Begin. The workspace holds candidate.cu (a copy of the baseline), NOTES.md and "
            "task/. The goal predicate is checked each time you end your turn.")}]
        c.save_state()
        return c

    @classmethod
    def resume(cls, session_dir: Path, *, overrides: dict[str, Any] | None = None,
               api_key: str | None = None, base_url: str | None = None,
               suggester: Suggester | None = None, use_bank: bool = True) -> "Campaign":
        from socratic.errors import InputError

        session = Session(Path(session_dir))
        if not session.events.exists() or not session.config_file.exists():
            raise InputError(f"{session_dir}: not a campaign session (no events.jsonl/config.json)")
        for path in (session.events, session.messages):
            repair_tail(path)  # a line torn by the crash must not swallow the next one
        saved = session.load_config()
        data = dict(saved.get("config") or {})
        data.update({k: v for k, v in (overrides or {}).items() if v is not None})
        config = Config.from_dict(data)
        hashes = dict(saved.get("task_hashes") or {})
        source = Path(saved["task_source"]) if saved.get("task_source") else None
        bad = changed_files(session.task_dir, hashes)
        if bad and source is not None:
            restore(source, session.task_dir, hashes, bad)
        task = Task.load(session.task_dir)
        if suggester is None and use_bank:  # this node's GPU: a resume may move
            suggester = bank_suggester(cls._has_comparison(task, config),
                                       (gpu_info() or {}).get("cc"))
        c = cls(session, task, config, api_key=api_key, base_url=base_url, suggester=suggester,
                task_hashes=hashes, task_source=source)
        c._rebuild(overrides)
        return c

    @staticmethod
    def _has_comparison(task: Task, config: Config) -> bool:
        goal = task.goal(config.goal_min_speedup)
        return goal.against != "baseline" or bool(task.data.get("comparisons"))

    def _rebuild(self, overrides: dict[str, Any] | None = None) -> None:
        """State from the event log, state.json, messages.jsonl and the workspace."""
        events, _ = read_jsonl(self.session.events)
        results: dict[str, dict[str, Any]] = {}
        self.detectors.start.done = True
        for e in events:
            t = e.get("type")
            if t == "tool.call":
                self.tool_calls += 1
            elif t == "usage":
                self.turns += 1
                self.cost += float(e.get("cost_usd") or 0.0)
            elif t == "tool.result":
                results[str(e.get("id"))] = e
            elif t == "question":
                if e.get("bank_id"):
                    self.asked_ids.append(str(e["bank_id"]))
                self.asked_texts.append(str(e.get("text", "")))
            elif t == "eval.start":
                self.eval_seq = max(self.eval_seq, int(e.get("n") or 0))
            elif t == "eval.end":
                ev = self._load_eval(e)
                self.history.add(ev)
                self.detectors.on_eval(ev, ev.set == self.goal_set, replay=True)
        state = self.session.load_state()
        self.inbox_offset = int(state.get("inbox_offset", 0))
        self.questions = list(state.get("questions") or [])
        self.notes = list(state.get("notes") or [])
        self.paused = bool(state.get("paused", False))
        if "auto_questions" in state and not (overrides or {}).get("auto_questions"):
            self.config.auto_questions = bool(state["auto_questions"])
        self.ctx, self.messages = self.session.load_messages()
        pending: list[dict[str, Any]] = []
        if self.messages and self.messages[-1].get("role") == "user":
            # written, but the model's answer never came: send it again
            pending = list(self.messages.pop()["content"])
            self._rewrite_messages()
        elif self.messages and self.messages[-1].get("role") == "assistant":
            uses = [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]
            for b in uses:
                r = results.get(b["id"])
                if r is not None:
                    out = self._full_output(r)
                    pending.append({"type": "tool_result", "tool_use_id": b["id"],
                                    "content": out, "is_error": not r.get("ok", True)})
                else:
                    pending.append({"type": "tool_result", "tool_use_id": b["id"],
                                    "is_error": True, "content": (
                                        "not run: the campaign process ended before this "
                                        "tool call finished; run it again if needed")})
        if not pending or not any(b.get("type") == "text" for b in pending):
            pending.append({"type": "text", "text": (
                "(The campaign process was restarted; the workspace and your notes are as "
                "you left them. Continue.)")})
        self.pending = pending
        self.emit("campaign.resume", evaluations=len(self.history), tool_calls=self.tool_calls,
                  turns=self.turns, ctx=self.ctx, messages=len(self.messages))

    def _rewrite_messages(self) -> None:
        """messages.jsonl with the current context's lines replaced by self.messages."""
        old, _ = read_jsonl(self.session.messages) if self.session.messages.exists() else ([], 0)
        tmp = self.session.messages.with_name("messages.jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for r in old:
                if int(r.get("ctx", 0)) != self.ctx:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            for m in self.messages:
                fh.write(json.dumps({"ctx": self.ctx, "message": m}, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.session.messages)

    def _full_output(self, r: dict[str, Any]) -> str:
        if r.get("blob"):
            try:
                return (self.session.dir / r["blob"]).read_text(encoding="utf-8")
            except OSError:
                pass
        return str(r.get("output", ""))

    def _load_eval(self, e: dict[str, Any]) -> Evaluation:
        result = None
        if e.get("result"):
            try:
                result = json.loads((self.session.dir / e["result"]).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                result = None
        if not isinstance(result, dict) or result.get("schema") is None:
            result = None
        summ = e.get("summary") or {}
        return Evaluation(int(e.get("n", 0)), str(e.get("candidate_sha", "")), e.get("set"),
                          result, int(summ.get("exit_code", 0) or 0), e.get("result") or "",
                          summ.get("error"))

    # ------------------------------------------------------------------ logging
    def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        if self.redact.secrets:
            raw = json.dumps(fields, ensure_ascii=False)
            if any(s in raw for s in self.redact.secrets):
                fields = json.loads(self.redact(raw))
        return self.log.append(type_, **fields)

    def save_state(self) -> None:
        self.session.save_state({"inbox_offset": self.inbox_offset, "questions": self.questions,
                                 "notes": self.notes, "paused": self.paused,
                                 "auto_questions": self.config.auto_questions})

    def _on_retry(self, attempt: int, error: str, wait: float) -> None:
        self.emit("api.retry", attempt=attempt, error=self.redact(error), wait_s=round(wait, 3))

    def _retry_sleep(self, seconds: float) -> None:
        """Back off between API attempts while still obeying stop and the time limit."""
        end = time.monotonic() + seconds
        while True:
            self.poll_inbox()
            if self.stop_requested:
                raise EndCampaign("stopped")
            if self.limit_reached() == "max_minutes":
                raise EndCampaign("max_minutes")
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, max(self.config.poll_s, 0.01)))

    def _on_text(self, piece: str) -> None:
        self._text_buf.append(piece)
        now = time.monotonic()
        if now - self._text_t >= self.config.text_flush_s:
            self._flush_text()

    def _flush_text(self) -> None:
        if self._text_buf:
            self.emit("agent.text", text="".join(self._text_buf))
            self._text_buf = []
        self._text_t = time.monotonic()

    def append_message(self, role: str, content: list[dict[str, Any]]) -> None:
        msg = {"role": role, "content": content}
        self.messages.append(msg)
        stored = msg
        if self.redact.secrets:
            raw = json.dumps(msg, ensure_ascii=False)
            if any(sec in raw for sec in self.redact.secrets):
                stored = json.loads(self.redact(raw))
        self.session.append_message(self.ctx, stored)

    # ------------------------------------------------------------------ inbox and control
    def poll_inbox(self) -> None:
        if not self.session.inbox.exists():
            return
        cmds, offset = read_jsonl(self.session.inbox, self.inbox_offset)
        if offset == self.inbox_offset:
            return
        self.inbox_offset = offset
        for c in cmds:
            if c.get("type") == "question" and str(c.get("text", "")).strip():
                self.questions.append({"text": str(c["text"]), "bank_id": c.get("bank_id"),
                                       "trigger": c.get("trigger"), "source": "human"})
            elif c.get("type") == "control":
                action = c.get("action")
                if action not in ("pause", "resume", "stop", "evaluate", "auto_on", "auto_off"):
                    continue
                self.emit("control", action=action)
                if action in ("auto_on", "auto_off"):
                    self.config.auto_questions = action == "auto_on"
                elif action == "pause":
                    self.paused = True
                elif action == "resume":
                    self.paused = False
                elif action == "stop":
                    self.stop_requested = True
                elif action == "evaluate":
                    self.eval_requested = True
        self.save_state()

    def safe_point(self) -> None:
        """Between a tool result and the next step: inbox, requested evaluation, pause."""
        self.poll_inbox()
        while True:
            if self.eval_requested and not self.stop_requested:
                self.eval_requested = False
                ev = self.evaluate(self.goal_set, source="control")
                self.notes.append("The engineer ran an evaluation of the current candidate:\n"
                                  + compact_table(ev, self.goal))
                self.save_state()
            if not self.paused or self.stop_requested:
                return
            t = time.monotonic()
            time.sleep(self.config.poll_s)
            self.stats["wait_s"] += time.monotonic() - t
            self.poll_inbox()

    def deliver(self) -> None:
        """Questions and harness notes go into the next user message (the safe point)."""
        if not self.notes and not self.questions:
            return
        for note in self.notes:
            self.pending.append({"type": "text", "text": note})
        self.notes = []
        for q in self.questions:
            self.emit("question", text=q["text"], bank_id=q.get("bank_id"),
                      trigger=q.get("trigger"), source=q.get("source", "human"))
            if q.get("bank_id"):
                self.asked_ids.append(str(q["bank_id"]))
            self.asked_texts.append(q["text"])
            self.pending.append({"type": "text", "text": prompt.question_message(
                q["text"], q.get("source", "human"), q.get("trigger"))})
        self.questions = []
        self.save_state()

    # ------------------------------------------------------------------ triggers
    def fire(self, fired: Fired) -> None:
        suggestions: list[tuple[str, str]] = []
        if self.suggester is not None:
            try:
                suggestions = self.suggester(fired.kind, list(self.asked_ids + [
                    q["bank_id"] for q in self.questions if q.get("bank_id")]),
                    self.recent_text[-2000:])
            except Exception as exc:  # noqa: BLE001 - a bank bug never stops the campaign
                self.emit("api.retry", attempt=0, error=f"bank.suggest failed: {exc}", wait_s=0)
                suggestions = []
        self.emit("trigger", kind=fired.kind, reason=fired.reason,
                  suggestions=[s[0] for s in suggestions])
        asked = set(self.asked_ids) | {q.get("bank_id") for q in self.questions}
        fresh = [s for s in suggestions if s[0] not in asked]
        if self.config.auto_questions and fresh:
            bid, text = fresh[0]  # the bank's top suggestion not posed yet
            self.questions.append({"text": text, "bank_id": bid, "trigger": fired.kind,
                                   "source": "auto"})
            self.save_state()

    # ------------------------------------------------------------------ evaluation
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

    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        notes = self.check_task_files()
        if notes:
            self.emit("task.modified", notes=notes)
        cand = self.session.candidate
        data = cand.read_bytes() if cand.exists() else b""
        sha = sha256_text(data)
        n = max(len(self.history), self.eval_seq) + 1  # an evaluation cut by a kill keeps its n
        self.eval_seq = n
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
                env=self.eval_env, timeout_s=self.config.eval_timeout_s, on_scenario=on_row)
        stderr = self.redact(stderr)
        if result is not None and self.redact.secrets:
            # a candidate can smuggle text into its build log (e.g. #include of a /proc file)
            raw = json.dumps(result)
            if any(sec in raw for sec in self.redact.secrets):
                result = json.loads(self.redact(raw))
        rel = f"evals/{n:04d}.json"
        doc = result if result is not None else {"error": error, "exit_code": code,
                                                 "stderr": stderr[-20000:]}
        (self.session.dir / rel).write_text(json.dumps(doc, indent=1), encoding="utf-8")
        ev = Evaluation(n, sha, set_name, result, code, rel, error, time.monotonic() - t0,
                        stderr[-4000:])
        self.history.add(ev)
        self.emit("eval.end", n=n, candidate_sha=sha, set=set_name, source=source,
                  summary=ev.summary(), result=rel, seconds=round(ev.seconds, 3))
        ev.notes = notes
        for f in self.detectors.on_eval(ev, set_name == self.goal_set):
            self.fire(f)
        return ev

    def _tool_evaluate(self, inp: dict[str, Any]) -> str:
        set_name = inp.get("scenarios") if isinstance(inp.get("scenarios"), str) else None
        ev = self.evaluate(set_name or self.goal_set)
        return "\n".join([*ev.notes, compact_table(ev, self.goal)])

    # ------------------------------------------------------------------ the loop
    def limit_reached(self) -> str | None:
        c = self.config
        if c.max_tool_calls is not None and self.tool_calls >= c.max_tool_calls:
            return "max_tool_calls"
        if c.max_turns is not None and self.turns >= c.max_turns:
            return "max_turns"
        if c.max_minutes is not None and (time.monotonic() - self.log.t0) / 60 >= c.max_minutes:
            return "max_minutes"
        return None

    def end(self, reason: str, **extra: Any) -> str:
        self._flush_text()
        best = self.history.best()
        self.end_event = self.emit(
            "campaign.end", reason=reason, evaluations=len(self.history),
            tool_calls=self.tool_calls, turns=self.turns, cost_usd=round(self.cost, 4),
            best=best.to_record() if best else None, **extra)
        self.log.sync()
        self.save_state()
        return reason

    def run(self) -> str:
        """Run until the goal is met, a limit, a stop, or a stall; returns the end reason."""
        prev = signal.getsignal(signal.SIGTERM)
        if threading_main():
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            return self._run()
        except KeyboardInterrupt:
            return self.end("interrupted")
        except EndCampaign as exc:
            return self.end(exc.reason)
        except FatalAPIError as exc:
            return self.end("api_error", error=self.redact(str(exc))[:500])
        finally:
            if threading_main():
                signal.signal(signal.SIGTERM, prev)

    def _run(self) -> str:
        if not self.detectors.start.done:
            f = self.detectors.start.fire(self.task.name, self.goal.describe())
            if f:
                self.fire(f)
        while True:
            self._iteration_stats()
            self.safe_point()
            if self.stop_requested:
                return self.end("stopped")
            reason = self.limit_reached()
            if reason:
                return self.end(reason)
            self.deliver()
            if self.context_tokens > self.config.context_limit_tokens:
                self.handoff(f"context at {self.context_tokens} tokens")
            self.append_message("user", self.pending)
            self.pending = []
            try:
                resp = self._respond()
            except ContextTooLong as exc:
                self.pending = self.messages.pop()["content"]
                self._rewrite_messages()
                self.handoff(f"the API refused the context: {str(exc)[:200]}")
                continue
            self.append_message("assistant", resp.content)
            if resp.text.strip():
                self.recent_text = (self.recent_text + "\n" + resp.text)[-4000:]
                for f in self.detectors.on_text(resp.text, len(self.history)):
                    self.fire(f)
            if resp.tool_uses:
                ended = self._run_tools(resp)
                if ended:
                    return ended
            elif resp.stop_reason == "max_tokens":
                self.pending = [{"type": "text", "text": (
                    "(Your response was cut at the max_tokens limit. Continue.)")}]
            elif resp.stop_reason == "refusal":
                self.pending = [{"type": "text", "text": "Continue with the task."}]
            else:
                ended = self._stop_attempt()
                if ended:
                    return ended

    def _iteration_stats(self) -> None:
        """Harness overhead of the last loop iteration: wall time less model, tool and
        paused time (the overhead benchmark reads `overheads`)."""
        now = time.monotonic()
        mark = getattr(self, "_mark", None)
        busy = self.stats["model_s"] + self.stats["tool_s"] + self.stats["wait_s"]
        if mark is not None:
            self.overheads.append((now - mark[0]) - (busy - mark[1]))
        self._mark = (now, busy)

    def _respond(self) -> Response:
        t = time.monotonic()
        self._text_t = t
        try:
            resp = self.agent.respond(self.system, self.tool_specs, self.messages, self._on_text)
        finally:
            self.stats["model_s"] += time.monotonic() - t
        self._flush_text()
        self.turns += 1
        self.cost += resp.usage.get("cost_usd", 0.0)
        u = resp.usage
        self.context_tokens = (u.get("input_tokens", 0) + u.get("cache_read", 0)
                               + u.get("cache_write", 0) + u.get("output_tokens", 0))
        self.emit("usage", **u, model=self.config.model, context_tokens=self.context_tokens)
        return resp

    def _run_tools(self, resp: Response) -> str | None:
        results: list[dict[str, Any]] = []
        for i, use in enumerate(resp.tool_uses):
            reason = "stopped" if self.stop_requested else self.limit_reached()
            if reason == "max_tool_calls" or reason == "stopped":
                self.pending = results
                return self.end(reason)
            self.tool_calls += 1
            self.calls_since_stop += 1
            self.emit("tool.call", id=use["id"], name=use["name"], input=use.get("input"))
            t = time.monotonic()
            ok, out = self.tools.run(use["name"], use.get("input") or {})
            dt = time.monotonic() - t
            self.stats["tool_s"] += dt
            fields: dict[str, Any] = {"id": use["id"], "name": use["name"], "ok": ok,
                                      "seconds": round(dt, 3)}
            if len(out) > self.config.log_output_cap:
                blob = "blobs/" + re.sub(r"[^A-Za-z0-9_-]", "_", str(use["id"]))[:80] + ".txt"
                (self.session.dir / blob).write_text(out, encoding="utf-8")
                fields["output"] = out[: self.config.log_output_cap] + "\n[... full text in blob]"
                fields["blob"] = blob
            else:
                fields["output"] = out
            self.emit("tool.result", **fields)
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": out,
                            **({} if ok else {"is_error": True})})
            if i < len(resp.tool_uses) - 1:
                self.safe_point()  # pause takes effect after the current tool call
        self.pending = results
        return None

    def _stop_attempt(self) -> str | None:
        """The model ended its turn: judge the goal predicate on a fresh evaluation."""
        if self.calls_since_stop == 0 and self.empty_stops > 0:
            self.empty_stops += 1
        else:
            self.empty_stops = 1
        self.calls_since_stop = 0
        ev = self.history.find(sha256_text(self.session.candidate.read_bytes())
                               if self.session.candidate.exists() else "", self.goal_set)
        reused = ev is not None
        if ev is None:
            ev = self.evaluate(self.goal_set, source="stophook")
        met, failing = judge(ev, self.goal)
        self.emit("stophook", met=met, failing=failing, n=ev.n, reused=reused,
                  goal=self.goal.to_dict())
        if met:
            return self.end("goal_met", n=ev.n)
        f = self.detectors.declared.on_stop(met, len(failing), len(self.history))
        if f:
            self.fire(f)
        self.pending = [{"type": "text", "text": prompt.stophook_message(
            describe_failing(failing, self.goal), len(failing), ev.n)}]
        if self.empty_stops >= self.config.max_empty_stops:
            if not self.config.wait_for_human:
                return self.end("stalled", stop_attempts=self.empty_stops)
            return self._wait_for_question()
        return None

    def _wait_for_question(self) -> str | None:
        """Attached: a stalled agent waits for a human question (or stop)."""
        self.emit("control", action="wait", reason="repeated stop attempts; waiting for a question")
        while not self.stop_requested:
            self.safe_point()
            if any(q.get("source") == "human" for q in self.questions):
                self.empty_stops = 0
                return None
            time.sleep(self.config.poll_s)
        return self.end("stopped")

    def handoff(self, why: str) -> None:
        """Start a fresh context seeded from the campaign state."""
        best = self.history.best()
        best_text = (f"evaluation #{best.n}, sha256 {best.sha[:12]}, saved as "
                     f"{self.session.candidates.name}/{best.sha[:16]}.cu (session dir), "
                     f"geomean {best.metric('geomean_speedup')}, min {best.metric('min_speedup')}"
                     if best else "none correct yet")
        cur = self.session.candidate.read_bytes() if self.session.candidate.exists() else b""
        cur_ev = self.history.find(sha256_text(cur), self.goal_set)
        cur_text = (f"sha256 {sha256_text(cur)[:12]}, " + (
            f"last evaluated as #{cur_ev.n}" if cur_ev else "not evaluated in this form"))
        try:
            notes = self.session.notes.read_text(encoding="utf-8")[-12000:]
        except OSError:
            notes = "(missing)"
        pend = []
        for b in self.pending:
            if b.get("type") == "tool_result":
                pend.append("Result of your last tool call:\n" + str(b.get("content"))[-6000:])
            elif b.get("type") == "text":
                pend.append(b["text"])
        seed = prompt.handoff_seed(goal=self.goal, task=self.task,
                                   history_table=self.history.table(),
                                   best=best_text, current=cur_text, notes=notes,
                                   questions=self.asked_texts, pending="\n\n".join(pend))
        self.ctx += 1
        self.messages = []
        self.pending = [{"type": "text", "text": seed}]
        self.emit("context.handoff", ctx=self.ctx, reason=why, tokens=self.context_tokens)
        self.context_tokens = 0


class EndCampaign(Exception):
    """Raised where the loop cannot return directly (inside API retries)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


__all__ = ["Campaign", "bank_suggester"]
