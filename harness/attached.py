"""A campaign whose agent is an outside coding agent (Claude Code, Codex CLI, Gemini CLI),
driven by that agent's hooks: every hook call and every `./evaluate` is a short-lived
process that holds the session (socratic.ownership, as a campaign does; harness/sessionlog.py),
rebuilds the campaign's pieces from the event log and its state files, acts, and saves the
state back before it lets go.

The pieces are the campaign's own: the inbox and its controls (inbox.py, state.json), the
evaluations service (evaluations.py), the triggers with the bank (triggers.Triggers), the
stop-hook judgement and stall count (stophook.py), rebuilt as `--resume` rebuilds them
(resume.py). What only a hook-driven campaign needs between two calls (transcript offsets,
the stop counters, the detectors' state that replaying evaluations cannot give) is kept
in attach.json.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from socratic.contracts import read_events
from socratic.errors import InputError

from socratic.harness import prompt
from socratic.harness.config import Config, cost_usd
from socratic.harness.evaluation import Evaluation
from socratic.harness.evaluations import Evaluations
from socratic.harness.inbox import Inbox
from socratic.harness.record import Recorder
from socratic.harness.resume import resume_state
from socratic.harness.session import Session, write_json_atomic
from socratic.harness.sessionlog import SessionLog
from socratic.harness.stophook import StopAttempts
from socratic.harness.task import Task
from socratic.harness.tools import SECRET_NAME, Redactor, scrubbed_env
from socratic.harness.triggers import Suggester, Triggers

ATTACH_KEY = "attach"          # config.json section of an attached session
HOOK_STATE = "attach.json"     # what one hook call leaves for the next


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
class HookState:
    """attach.json: what the campaign's pieces do not keep themselves between processes."""

    transcripts: dict[str, int] = field(default_factory=dict)  # path -> offset read
    transcript: str = ""       # the path the last hook call named (./evaluate reads it too)
    echo: list[str] = field(default_factory=list)   # texts logged before the transcript had them
    text_keys: list[str] = field(default_factory=list)   # transcript texts that may repeat
    usage_ids: list[str] = field(default_factory=list)
    in_a_row: int = 0          # StopAttempts: stop attempts in a row with no tool call between
    calls_since: int = 0       # StopAttempts: tool calls since the last attempt
    blocks: int = 0            # refused stops in a row with no tool call between them
    recent_text: str = ""      # the agent's latest words, for the bank's suggestions
    start_fired: bool = False
    declared_last_at: int | None = None
    explained_n: int = 0       # correctness_failure settled for evaluations up to this n
    stop_requested: bool = False   # read from the inbox by a hook that could not act on it
    eval_requested: bool = False
    ended: str | None = None   # the campaign.end reason, while ended
    last_refusal: str = ""     # an agent may hand a refused stop's reason back as a prompt

    @classmethod
    def load(cls, path: Path) -> HookState:
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names}) if isinstance(d, dict) \
            else cls()


def env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the environment's key-like variables (the agent's API key among them),
    kept out of the event log."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items()
            if (k.startswith("ANTHROPIC_") or SECRET_NAME.search(k)) and len(v) >= 8
            and not k.endswith("_URL") and not k.endswith("_MODEL")]


def lazy_suggester(settings: AttachSettings) -> Suggester:
    """The bank's suggester, loaded only when a trigger fires (most hook calls fire none)."""
    from socratic.harness.campaign import bank_suggester

    loaded: list[Suggester | None] = []

    def fn(kind: str, asked: list[str], recent_text: str) -> list[tuple[str, str]]:
        if not loaded:
            try:
                loaded.append(bank_suggester(settings.has_comparison, settings.cc))
            except InputError:  # a user bank file broken since attach: no suggestions
                loaded.append(None)
        return loaded[0](kind, asked, recent_text) if loaded[0] else []

    return fn


def check_set(session_dir: Path, set_name: str | None) -> None:
    """An evaluation's `--scenarios` (`./evaluate --scenarios`, `socratic hook evaluate
    --scenarios`): a set or ids of the session's frozen task, refused before anything is
    logged (the evaluator's refusal was recorded as a failing evaluation). A session
    without its task is left for `Attached.open` to report."""
    if set_name is None:
        return
    if not set_name.strip():
        raise InputError("--scenarios: empty (give a set name or scenario ids)")
    task_dir = Session(session_dir).task_dir
    if not (task_dir / "task.toml").is_file():
        return
    from socratic.harness.campaign import goal_scenarios

    task = Task.load(task_dir)
    goal_scenarios({n: [sc.id for sc in scs] for n, scs in task.spec.sets.items()}, task, set_name)


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
        self.goal = self.task.goal(self.config.goal_min_speedup, self.config.goal_against)
        self.goal_set = self.config.scenarios or self.task.default_set
        self.task_hashes: dict[str, str] = dict(saved.get("task_hashes") or {})
        src = saved.get("task_source")
        self.task_source = Path(src) if src else None
        self.log = SessionLog(self.session.dir, self.settings.start_epoch)
        secrets = env_secrets() if secrets is None else secrets
        self.redact = Redactor(secrets)
        self.env = scrubbed_env(secrets)
        self.emit = Recorder(self.log, self.redact)  # type: ignore[arg-type]
        self.state = HookState()
        self.tool_calls = 0
        self.turns = 0

    # ------------------------------------------------------------------ opening
    @classmethod
    @contextmanager
    def open(cls, session_dir: Path, secrets: list[str] | None = None) -> Iterator[Attached]:
        """The session's campaign rebuilt, under the writer lock; its state is saved back
        on the way out (also when the body raised: what it logged stays consistent)."""
        camp = cls(session_dir, secrets)
        with camp.log.locked():
            camp.load()
            try:
                yield camp
            finally:
                camp.save()

    def load(self) -> None:
        st = self.state = HookState.load(self.session.dir / HOOK_STATE)
        events = read_events(self.session.events)[0].events if self.session.events.exists() \
            else []
        try:
            saved_state = json.loads(self.session.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved_state = None
        rs = resume_state(events, saved_state)
        self.tool_calls = rs.counters.tool_calls
        self.turns = rs.counters.turns  # the agent's model calls seen (usage events)
        auto = rs.saved.auto_questions
        self.inbox = Inbox(self.session.inbox, self.session.state_file,
                           auto_questions=self.config.auto_questions if auto is None else auto,
                           saved=rs.saved, asked_ids=rs.asked_ids, asked_texts=rs.asked_texts)
        self.inbox.stop_requested = st.stop_requested
        self.inbox.eval_requested = st.eval_requested
        self.triggers = Triggers(self.config.triggers, goal_set=self.goal_set,
                                 inbox=self.inbox, emit=self.emit,
                                 suggester=lazy_suggester(self.settings), against=self.goal.against)
        self.triggers.recent_text = st.recent_text
        self.evals = Evaluations(
            self.session, evaluator=self.config.evaluator, timeout_s=self.config.eval_timeout_s,
            env=self.env, redact=self.redact, emit=self.emit, goal=self.goal,
            goal_set=self.goal_set, task_hashes=self.task_hashes, task_source=self.task_source,
            triggers=self.triggers)
        # replays the detectors, nothing fires
        self.evals.restore(rs.eval_ends, rs.eval_seq, rs.retractions)
        d = self.triggers.detectors
        d.start.done = st.start_fired
        d.declared.last_at = st.declared_last_at
        if d.correctness.pending is not None and d.correctness.pending.n <= st.explained_n:
            d.correctness.pending = None
        self.stops = StopAttempts(st.in_a_row, st.calls_since)

    def save(self) -> None:
        st, d = self.state, self.triggers.detectors
        st.in_a_row, st.calls_since = self.stops.in_a_row, self.stops.calls_since
        st.recent_text = self.triggers.recent_text
        st.start_fired = d.start.done
        st.declared_last_at = d.declared.last_at
        if d.correctness.pending is None:
            st.explained_n = max([st.explained_n] + [e.n for e in self.evals.history.evals])
        st.stop_requested = self.inbox.stop_requested
        st.eval_requested = self.inbox.eval_requested
        write_json_atomic(self.session.dir / HOOK_STATE, asdict(st), fsync=False)
        self.inbox.save()

    # ------------------------------------------------------------------ the campaign's life
    def resume(self, why: str) -> None:
        """A hook call after campaign.end (the engineer typed into the agent): go on."""
        if self.state.ended is None:
            return
        # the fields of a `run` resume (no conversation of ours: ctx and messages 0), and why
        self.emit("campaign.resume", evaluations=len(self.evals.history),
                  tool_calls=self.tool_calls, turns=self.turns, ctx=0, messages=0,
                  reason=why, ended=self.state.ended)
        self.state.ended = None
        self.inbox.stop_requested = False
        self.stops.reset()
        self.state.blocks = 0

    def end(self, reason: str, **extra: Any) -> None:
        if self.state.ended is not None:
            return
        best = self.evals.history.best(self.goal, self.goal_set)
        self.emit("campaign.end", reason=reason, evaluations=len(self.evals.history),
                  tool_calls=self.tool_calls, best=best.to_record() if best else None, **extra)
        self.log.sync()
        self.state.ended = reason

    def limit_reached(self) -> str | None:
        c = self.config
        if c.max_tool_calls is not None and self.tool_calls >= c.max_tool_calls:
            return "max_tool_calls"
        if c.max_turns is not None and self.turns >= c.max_turns:
            return "max_turns"  # turns: the agent's model responses its transcript reported
        if c.max_minutes is not None and \
                (time.time() - self.settings.start_epoch) / 60 >= c.max_minutes:
            return "max_minutes"
        return None

    def fire_start(self) -> None:
        self.triggers.start(self.task.name, self.goal.describe())

    def tool_done(self) -> None:
        """A tool call was logged: it counts, and breaks a run of stop attempts."""
        self.tool_calls += 1
        self.stops.tool_call()
        self.state.blocks = 0  # the agents count refusals afresh after a tool call

    # ------------------------------------------------------------------ the agent's words
    def agent_text(self, text: str) -> None:
        if not text.strip():
            return
        self.emit("agent.text", text=text)
        self.triggers.on_text(text, len(self.evals.history))

    def read_transcript(self, fmt: str, path: str | None) -> None:
        """Log what the agent wrote since the last call (text, and token usage)."""
        from socratic.harness.transcripts import read_new

        if not path or not isinstance(path, str):  # an agent's payload is not trusted for types
            return
        st = self.state
        chunk, offset = read_new(fmt, path, st.transcripts.get(path, 0))
        st.transcripts[path] = offset
        st.transcript = path
        for text, key in zip(chunk.texts, chunk.keys, strict=True):  # Chunk.add keeps them paired
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
            self.turns += 1
            self.emit("usage", **u, model=model, cost_usd=round(cost_usd(
                model, u["input_tokens"], u["output_tokens"], u["cache_read"],
                u["cache_write"]), 6))

    def last_message(self, text: Any) -> None:
        """The agent's final words as the Stop payload has them: a transcript written
        asynchronously may not hold them yet; logged now, skipped when it does."""
        if not isinstance(text, str) or not text.strip():
            return
        if self.triggers.recent_text.rstrip().endswith(text.strip()):
            return
        self.agent_text(text)
        self.state.echo = (self.state.echo + [text])[-5:]

    # ------------------------------------------------------------------ inbox and questions
    def poll_inbox(self) -> None:
        self.inbox.poll(on_control=lambda action: self.emit("control", action=action))

    def wait(self, until: Callable[[], bool], deadline: float) -> bool:
        """Poll the inbox until `until()` holds or the deadline passes; returns until().
        Gives up early when the agent that ran this hook is gone (orphaned)."""
        parent = os.getppid()
        while not until() and time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(max(self.config.poll_s, 0.01))
            self.poll_inbox()
        return until()

    def wait_while_paused(self, deadline: float) -> None:
        ib = self.inbox
        if ib.paused and not ib.stop_requested:
            self.wait(lambda: not ib.paused or ib.stop_requested, deadline)

    def run_requested_evaluation(self) -> None:
        ib = self.inbox
        if ib.eval_requested and not ib.stop_requested:
            ib.eval_requested = False
            ev = self.evals.run(self.goal_set, source="control")
            ib.note("The engineer ran an evaluation of the current candidate:\n"
                    + self.evals.table(ev))

    def deliver(self) -> list[str]:
        """Harness notes and questions due, as texts for the agent; the questions are
        logged as delivered (as the campaign's safe point does)."""
        ib = self.inbox
        out = list(ib.notes)
        for q in ib.questions:
            source = q.get("source", "human")
            self.emit("question", text=q["text"], bank_id=q.get("bank_id"),
                      trigger=q.get("trigger"), source=source)
            out.append(prompt.question_message(q["text"], source, q.get("trigger")))
        if out:
            ib.delivered()
        return out

    def human_question(self, text: str) -> None:
        """Words the engineer typed into the agent directly: a human question."""
        self.emit("question", text=text, bank_id=None, trigger=None, source="human")
        self.inbox.asked_texts.append(text)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        return self.evals.run(set_name or self.goal_set, source=source)
