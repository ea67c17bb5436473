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
import socket
import time
from collections import Counter
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from socratic.contracts import (
    AgentText,
    CampaignEnd,
    CampaignStart,
    CampaignResume,
    EvalEnd,
    Event,
    StopHook,
    ToolCall,
    Trigger,
    Usage,
    read_events,
)
from socratic.errors import InputError

from socratic.harness import prompt
from socratic.harness.config import Config, cost_usd
from socratic.harness.evaluation import Evaluation
from socratic.harness.evaluations import Evaluations
from socratic.harness.inbox import Inbox, Saved, Taken
from socratic.harness.record import Recorder
from socratic.harness.resume import resume_state
from socratic.harness.session import Session, write_json_atomic
from socratic.harness.sessionlog import SessionLog
from socratic.harness.stophook import StopAttempts
from socratic.harness.task import Goal, Task
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
    def load(cls, path: Path) -> HookState | None:
        """attach.json; None when it is missing, damaged or of wrong types (then it is
        rebuilt from the log: `rebuilt`)."""
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(d, dict):
            return None
        blank = cls()
        for f in fields(cls):
            if f.name not in d:
                continue
            want, v = getattr(blank, f.name), d[f.name]
            if f.name in ("declared_last_at", "ended") and v is None:
                continue
            kind = type(want) if want is not None else (int if f.name == "declared_last_at"
                                                         else str)
            if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
                return None
            if isinstance(v, list) and not all(isinstance(x, str) for x in v):
                return None
            if isinstance(v, dict) and not all(isinstance(k, str) and isinstance(x, int)
                                               for k, x in v.items()):
                return None
        return cls(**{k: v for k, v in d.items() if k in {f.name for f in fields(cls)}})

    @classmethod
    def rebuilt(cls, events: list[Event]) -> HookState:
        """What the log says of the fields a hook keeps between calls (a state file lost or
        damaged): the stop counters, the triggers' marks, whether the campaign has ended.
        Transcript offsets are not in the log: the transcripts are read again, skipping
        what the log has (`Attached.catch_up`)."""
        st = cls()
        n_evals = 0
        for e in events:
            if isinstance(e, EvalEnd):
                n_evals += 1
                last_n = e.n
            elif isinstance(e, ToolCall):
                st.calls_since += 1
                st.blocks = 0
            elif isinstance(e, StopHook):
                st.in_a_row = st.in_a_row + 1 if st.calls_since == 0 and st.in_a_row else 1
                st.calls_since = 0
                st.blocks += 0 if e.met else 1
            elif isinstance(e, Trigger):
                if e.kind == "start":
                    st.start_fired = True
                elif e.kind == "declared_done":
                    st.declared_last_at = n_evals
                elif e.kind == "correctness_failure" and n_evals:
                    st.explained_n = last_n
            elif isinstance(e, AgentText):
                st.recent_text = (st.recent_text + "\n" + e.text)[-4000:]
            elif isinstance(e, CampaignEnd):
                st.ended = e.reason
            elif isinstance(e, CampaignResume):
                st.ended, st.in_a_row, st.blocks = None, 0, 0
        return st


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


@dataclass
class CatchUp:
    """What the log holds of the transcripts when the offsets into them were lost."""

    texts: Counter[str]
    usage: int


def start_fields(settings: AttachSettings, task_name: str, goal: Goal, goal_set: str | None,
                 config: Config, *, agent_label: str, session_dir: Path,
                 task_source: Path | None, task_hashes: dict[str, str],
                 versions: dict[str, str], gpu: dict[str, Any] | None = None,
                 recovered: bool = False) -> dict[str, Any]:
    """The fields of an attached campaign's campaign.start."""
    fields_: dict[str, Any] = dict(
        task=task_name, goal=goal.to_dict(), model=agent_label, agent=settings.agent,
        scenarios={"set": goal_set, "ids": settings.scenario_ids}, gpu=gpu,
        host=socket.gethostname(), versions=versions, session=session_dir.name,
        task_source=str(task_source) if task_source else None, task_hashes=task_hashes,
        auto_questions=config.auto_questions,
        limits={"max_tool_calls": config.max_tool_calls, "max_turns": config.max_turns,
                "max_minutes": config.max_minutes})
    if recovered:
        fields_["recovered"] = True
    return fields_


class Attached:
    def __init__(self, session_dir: Path, secrets: list[str] | None = None) -> None:
        self.session = Session(Path(session_dir))
        saved = self.session.load_config()
        if not isinstance(saved.get(ATTACH_KEY), dict):
            raise InputError(f"{self.session.config_file}: not an attached session "
                             f"(made by `socratic run`, not `socratic attach`)")
        try:
            self.settings = AttachSettings(**saved[ATTACH_KEY])
        except TypeError as exc:
            raise InputError(f"{self.session.config_file}: its `attach` section is damaged "
                             f"({exc})") from None
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
        # a state file rebuilt from the log: transcripts are read again from their start,
        # skipping the texts (and the first model calls) the log already has
        self.catch_up: CatchUp | None = None
        # a session server answers other hooks while this one evaluates or waits: it sets
        # these to let go of the campaign and to take it back (hookserver.py)
        self.outside: Callable[[], AbstractContextManager[object]] = nullcontext
        self.inside: Callable[[], AbstractContextManager[object]] = nullcontext
        parent = os.getppid()
        # whether whoever runs this hook still waits for its answer (the agent that ran it)
        self.caller_alive: Callable[[], bool] = lambda: os.getppid() == parent
        self._taken: list[Taken] = []
        self._hook_state_written: dict[str, Any] | None = None

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
        events = read_events(self.session.events)[0].events if self.session.events.exists() \
            else []
        if not any(isinstance(e, CampaignStart) for e in events[:1]):
            events = self.recover_start(events)
        loaded = HookState.load(self.session.dir / HOOK_STATE)
        if loaded is None:
            loaded = HookState.rebuilt(events)
            self.catch_up = CatchUp(Counter(e.text for e in events if isinstance(e, AgentText)),
                                    sum(isinstance(e, Usage) for e in events))
            if (self.session.dir / HOOK_STATE).exists():
                self.emit("problem", where=HOOK_STATE,
                          error="damaged or of wrong types: rebuilt from the log")
        st = self.state = loaded
        try:
            saved_state = json.loads(self.session.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved_state = None
        if Saved.parse(saved_state) is None and self.session.state_file.exists():
            self.emit("problem", where="state.json",
                      error="damaged or of wrong types: rebuilt from the log and the inbox")
        rs = resume_state(events, saved_state, self.session.inbox)
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
        self.evals.outside = lambda: self.outside()
        self.evals.inside = lambda: self.inside()
        # replays the detectors, nothing fires
        self.evals.restore(rs.eval_ends, rs.eval_seq, rs.retractions)
        d = self.triggers.detectors
        d.start.done = st.start_fired
        d.declared.last_at = st.declared_last_at
        if d.correctness.pending is not None and d.correctness.pending.n <= st.explained_n:
            d.correctness.pending = None
        self.stops = StopAttempts(st.in_a_row, st.calls_since)

    def recover_start(self, events: list[Event]) -> list[Event]:
        """A log without its campaign.start: empty (the attach was killed before it wrote
        it), it is written now from the session's settings; with events of its own, it is
        not this session's log and nothing is written past it."""
        if events or (self.session.events.exists() and self.session.events.stat().st_size):
            raise InputError(f"{self.session.events}: does not begin with campaign.start; "
                             f"not a campaign's log (nothing was written to it)")
        from socratic.harness.campaign import versions

        self.emit("campaign.start", **start_fields(
            self.settings, self.task.name, self.goal, self.goal_set, self.config,
            agent_label=self.settings.agent, session_dir=self.session.dir,
            task_source=self.task_source, task_hashes=self.task_hashes,
            versions=versions(), recovered=True))
        return read_events(self.session.events)[0].events

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
        data = asdict(st)
        if data != self._hook_state_written or not (self.session.dir / HOOK_STATE).exists():
            write_json_atomic(self.session.dir / HOOK_STATE, data, fsync=False)
            self._hook_state_written = data
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
            if self.catch_up is not None and self.catch_up.texts[text] > 0:
                self.catch_up.texts[text] -= 1  # in the log already (state rebuilt)
                continue
            self.agent_text(text)
        for u in chunk.usage:
            if u["id"] in st.usage_ids:
                continue
            st.usage_ids = (st.usage_ids + [u["id"]])[-500:]
            if self.catch_up is not None and self.catch_up.usage > 0:
                self.catch_up.usage -= 1
                continue
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
        while not until() and time.monotonic() < deadline and self.caller_alive():
            with self.outside():
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
        """Harness notes and questions due, as texts for the agent's answer. They count as
        delivered (the questions logged) only once the answer was written: `settle`."""
        taken = self.inbox.take()
        if taken.notes or taken.questions:
            self._taken.append(taken)
        return list(taken.notes) + [prompt.question_message(q["text"], q.get("source", "human"),
                                                            q.get("trigger"))
                                    for q in taken.questions]

    def deliver_now(self) -> list[str]:
        """`deliver`, counted as delivered at once (by hand: the person reads them now)."""
        texts = self.deliver()
        self.settle(self.taken(), written=True)
        return texts

    def taken(self) -> list[Taken]:
        """What `deliver` handed to the answer being made (the caller settles it)."""
        out, self._taken = self._taken, []
        return out

    def settle(self, taken: list[Taken], written: bool) -> None:
        """The answer holding `taken` reached the agent (its questions are logged as
        asked) or did not (they are due again at the next hook)."""
        for t in taken:
            if written:
                for q in t.questions:
                    self.emit("question", text=q["text"], bank_id=q.get("bank_id"),
                              trigger=q.get("trigger"), source=q.get("source", "human"))
            self.inbox.settle(t, delivered=written)

    def human_question(self, text: str) -> None:
        """Words the engineer typed into the agent directly: a human question."""
        self.emit("question", text=text, bank_id=None, trigger=None, source="human")
        self.inbox.asked_texts.append(text)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        return self.evals.run(set_name or self.goal_set, source=source)
