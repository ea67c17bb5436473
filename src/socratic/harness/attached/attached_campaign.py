"""A campaign whose agent is an outside coding agent (Claude Code, Codex CLI, Gemini CLI),
driven by that agent's hooks: every hook call and every `./evaluate` is a short-lived
process that holds the session (socratic.ownership, as a campaign does; harness/core/sessionlog.py),
rebuilds the campaign's pieces from the event log and its state files, acts, and saves the
state back before it lets go.

The rules are the campaign's own (engine.py), over its pieces rebuilt as `--resume`
rebuilds them (resume.py). What a hook call leaves for the next is kept in attach.json:
the engine's `Marks`, and what only a hook-driven campaign needs (transcript offsets, the
texts already logged, the last refusal).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from socratic import chain
from socratic.contracts import (
    AgentText,
    CampaignStart,
    EndReason,
    Event,
    Goal,
    Problem,
    Usage,
    read_events,
)
from socratic.errors import InputError
from socratic.harness.attached import agentspec, hookcheck
from socratic.harness.core.atomicwrite import write_bytes_atomic, write_json_atomic
from socratic.harness.core.config import Config, cost_usd
from socratic.harness.core.history import Evaluation
from socratic.harness.core.inbox import Inbox, Saved, Taken
from socratic.harness.core.pins import (
    CONFIG_FILE,
    already_said,
    enforce,
    pins_of,
    problem_line,
    record_problem,
)
from socratic.harness.core.pins import hashes as pinned_hashes
from socratic.harness.core.record import Recorder
from socratic.harness.core.redaction import SECRET_NAME, Redactor, scrubbed_env
from socratic.harness.core.resume import resume_state
from socratic.harness.core.session import Session
from socratic.harness.core.sessionlog import SessionLog
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.engine import MARK_FIELDS, Engine, Marks
from socratic.harness.engine.evaluations import Evaluations
from socratic.harness.engine.host import Holder
from socratic.harness.engine.plan import CampaignPlan, resolve_plan, start_event
from socratic.harness.engine.triggers import Suggester, Suggestion, Triggers
from socratic.logread import LogState, RuleMarks, read_log

HOOK_STATE = "attach.json"     # what one hook call leaves for the next
# ends a prompt hook may not undo: the engineer's stop and the limits they set
PROMPT_CANNOT_RESUME = ("stopped", "max_tool_calls", "max_turns", "max_minutes")


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
class HookState(Marks):
    """attach.json: the engine's marks, and what reading the agent's transcripts needs."""

    transcripts: dict[str, int] = field(default_factory=dict)  # path -> offset read
    transcript: str = ""       # the path the last hook call named (./evaluate reads it too)
    echo: list[str] = field(default_factory=list)   # texts logged before the transcript had them
    text_keys: list[str] = field(default_factory=list)   # transcript texts that may repeat
    usage_ids: list[str] = field(default_factory=list)
    last_refusal: str = ""     # an agent may hand a refused stop's reason back as a prompt
    agent_session: str = ""    # the agent's own session id, as its hooks said (its resume)

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
        """The marks as the log leaves them (a state file lost or damaged). Transcript
        offsets are not in the log: the transcripts are read again, skipping what the log
        has (`CatchUp`)."""
        return cls.of(read_log(events).marks)

    @classmethod
    def of(cls, marks: RuleMarks) -> HookState:
        """The marks the one reading of the log keeps, with no transcript read yet."""
        return cls(**asdict(marks))


def env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the environment's key-like variables (the agent's API key among them),
    kept out of the event log."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items()
            if (k.startswith("ANTHROPIC_") or SECRET_NAME.search(k)) and len(v) >= 8
            and not k.endswith("_URL") and not k.endswith("_MODEL")]


def lazy_suggester(settings: AttachSettings) -> Suggester:
    """The bank's suggester, loaded only when a trigger fires (most hook calls fire none)."""
    loaded: list[Suggester | None] = []

    def fn(kind: str, asked: list[str], recent_text: str) -> list[Suggestion]:
        if not loaded:
            # here, not above: startup imports the bank, which most hook calls never need
            from socratic.harness.engine.startup import bank_suggester

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
    without its task is left for `AttachedCampaign.open` to report."""
    if set_name is None:
        return
    if not set_name.strip():
        raise InputError("--scenarios: empty (give a set name or scenario ids)")
    task_dir = Session(session_dir).task_dir
    if not (task_dir / "task.toml").is_file():
        return
    from socratic.harness.engine.plan import goal_scenarios
    from socratic.taskfile import parse_space

    task = CampaignTask.load(task_dir)
    if parse_space(set_name) is not None or set_name.startswith("space-"):
        task.spec.select(set_name)   # a space evaluation, or its draws: drawn again, or one line
        return
    goal_scenarios({n: [sc.id for sc in scs] for n, scs in task.spec.sets.items()}, task, set_name)


@dataclass
class CatchUp:
    """What the log holds of the transcripts when the offsets into them were lost."""

    texts: Counter[str]
    usage: int


def trusted_events(session_dir: Path) -> tuple[list[Event], chain.ChainCheck]:
    """The events of the session's log that its chain vouches for, and the chain's verdict
    (a session without a key here: every event, unverified)."""
    if not (Path(session_dir) / "events.jsonl").exists():
        return [], chain.ChainCheck(chain.UNVERIFIED, why="no log yet")
    parsed, check = chain.read_trusted(Path(session_dir))
    return parsed.events, check


@dataclass
class Undo:
    """The session's log length and state files as a call found them, to put back when
    the call fails part way: the log cut back to its length, a state file written back
    (or, where the disk takes nothing, removed: both are rebuilt from the log)."""
    log: Path
    size: int
    files: dict[Path, bytes | None]

    @classmethod
    def taken(cls, session: Session) -> Undo:
        files: dict[Path, bytes | None] = {}
        for path in (session.dir / HOOK_STATE, session.state_file):
            try:
                files[path] = path.read_bytes()
            except FileNotFoundError:
                files[path] = None
        size = session.events.stat().st_size if session.events.exists() else 0
        return cls(session.events, size, files)

    def restore(self) -> None:
        try:
            if self.log.exists() and self.log.stat().st_size > self.size:
                os.truncate(self.log, self.size)
        except OSError:
            pass  # the error being raised says what failed
        for path, data in self.files.items():
            try:
                now: bytes | None = path.read_bytes()
            except OSError:
                now = None
            if now == data:
                continue
            try:
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    write_bytes_atomic(path, data)
            except OSError:
                path.unlink(missing_ok=True)   # rebuilt from the log on the next call


class Server(Holder, Protocol):
    """A session server that holds the campaign between hook calls (hookserver.py): it lets
    go of the campaign while a hook waits or evaluates, and knows whether the hook that
    asked still waits for the answer."""

    def caller_alive(self) -> bool: ...


class AttachedCampaign:
    """An attached session's campaign: the engine over its files, as one hook call (or a
    session server between calls) holds it. It is the engine's host (engine/host.py)."""

    def __init__(self, session_dir: Path, secrets: list[str] | None = None,
                 server: Server | None = None) -> None:
        self.session = Session(Path(session_dir))
        saved = self.session.load_config()
        if saved.attach is None:
            raise InputError(f"{self.session.config_file}: not an attached session "
                             f"(made by `socratic run`, not `socratic attach`)")
        try:
            self.settings = AttachSettings(**saved.attach)
        except TypeError as exc:
            raise InputError(f"{self.session.config_file}: its `attach` section is damaged "
                             f"({exc})") from None
        self.config = Config.from_dict(saved.config)
        self.task = CampaignTask.load(self.session.task_dir)
        self.task_hashes: dict[str, str] = dict(saved.task_hashes)
        self.task_source = Path(saved.task_source) if saved.task_source else None
        self.log = SessionLog(self.session.dir, self.settings.start_epoch)
        secrets = env_secrets() if secrets is None else secrets
        self.redact = Redactor(secrets)
        self.pinned_libraries: dict[str, str] | None = None
        # as config.json says; re-resolved where the log's pins say otherwise (apply_pins)
        self.plan = self.resolve()
        self.env = scrubbed_env(secrets)
        self.emit = Recorder(self.log, self.redact)
        self.state = HookState()
        self.record = chain.ChainCheck(chain.UNVERIFIED)   # the log's chain, as last loaded
        # a state file rebuilt from the log: transcripts are read again from their start,
        # skipping the texts (and the first model calls) the log already has
        self.catch_up: CatchUp | None = None
        # a session server answers other hooks while this one evaluates or waits
        self.server = server
        self._parent = os.getppid()   # the agent that ran this hook
        self._hook_state_written: dict[str, Any] | None = None
        self.hook_facts = hookcheck.Facts(None, launched=False)   # the log's, at load
        self.hooks_said: set[str] = set()

    # ------------------------------------------------------------------ opening
    @classmethod
    @contextmanager
    def open(cls, session_dir: Path, secrets: list[str] | None = None,
             all_or_nothing: bool = False) -> Iterator[AttachedCampaign]:
        """The session's campaign rebuilt, under the writer lock; its state is saved back
        on the way out (also when the body raised: what it logged stays consistent).
        `all_or_nothing`: a write that fails (a full disk) takes back what this call logged
        and saved, so that the command's error is true and its retry logs it once."""
        camp = cls(session_dir, secrets)
        with camp.log.locked():
            undo = Undo.taken(camp.session) if all_or_nothing else None
            try:
                camp.load()
                try:
                    yield camp
                finally:
                    camp.save()
            except OSError:
                if undo is not None:
                    undo.restore()
                raise

    def load(self) -> None:
        events, self.record = trusted_events(self.session.dir)
        if not any(isinstance(e, CampaignStart) for e in events[:1]):
            events = self.recover_start(events)
        log = read_log(events)   # the one reading (socratic.logread): pins, rule marks
        self.apply_pins(events, log)
        self.hook_facts = hookcheck.facts(events)
        self.hooks_said = {e.error for e in events if isinstance(e, Problem)
                           and e.where == hookcheck.WHERE}
        marks = log.marks
        loaded = HookState.load(self.session.dir / HOOK_STATE)
        if loaded is None:
            loaded = HookState.of(marks)
            self.catch_up = CatchUp(Counter(e.text for e in events if isinstance(e, AgentText)),
                                    log.turns)   # the usage events
            if (self.session.dir / HOOK_STATE).exists():
                self.emit(Problem(where=HOOK_STATE,
                                  error="damaged or of wrong types: rebuilt from the log"))
        logged_end = marks.ended
        if loaded.ended != logged_end:
            # whether the campaign has ended is the log's to say (an agent can write
            # attach.json): a stop let through on "ended" would need no verdict
            self.emit(Problem(where=HOOK_STATE, error=(
                        f"says the campaign ended {loaded.ended!r} but the log says "
                        f"{'it ended ' + repr(logged_end) if logged_end else 'it is running'}: "
                        f"the log's is kept")))
            loaded.ended = logged_end
        self.state = loaded
        try:
            saved_state = json.loads(self.session.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved_state = None
        if Saved.parse(saved_state) is None and self.session.state_file.exists():
            self.emit(Problem(where="state.json",
                              error="damaged or of wrong types: rebuilt from the log and the inbox"))
        rs = resume_state(events, saved_state, self.session.inbox, log=log)
        self.engine = Engine(
            self.session, self.plan, self.config, sink=self.emit, host=self, env=self.env,
            redact=self.redact, suggester=lazy_suggester(self.settings), resumed=rs,
            marks=loaded,
            record_note=self.record.describe() if self.record.status == chain.BROKEN else None)
        for ev in self.evals.history.evals:   # results rewritten since they were logged
            if ev.result is None and ev.error and "(rewritten)" in ev.error and \
                    not already_said(events, ev.path, ev.error):
                self.emit(Problem(where=ev.path, error=ev.error))

    def apply_pins(self, events: list[Event], log: LogState) -> None:
        """The goal, set, limits, evaluator, agent and task hashes as campaign.start pinned
        them, whatever config.json says now; a difference, and a broken chain, said once in
        the log."""
        said: list[tuple[str, str]] = []
        if self.record.status == chain.BROKEN:
            said.append(("events.jsonl", record_problem(self.record)))
        p = pins_of(log)
        self.pinned_libraries = p.libraries if p is not None else None
        if p is not None:
            diffs = enforce(self.config, p, self.task.default_set)
            self.task_hashes, more = pinned_hashes(self.task_hashes, p)
            diffs += more
            if p.task_source is not None:
                self.task_source = Path(p.task_source)
            if p.agent and self.settings.agent != p.agent:
                diffs.append(f"agent {self.settings.agent!r} (pinned {p.agent!r})")
                self.settings.agent = p.agent
            if diffs:
                said.append((CONFIG_FILE, problem_line(diffs)))
            self.plan = self.resolve()   # the pinned settings, for the engine and the steps
        for where, error in said:
            if not already_said(events, where, error):
                self.emit(Problem(where=where, error=error))

    def check_hooks(self, spec: agentspec.AgentSpec) -> list[str]:
        """The hooks this agent session runs against what attach wrote (harness/attached/hookcheck.py);
        a difference is logged once. Returns what differs."""
        found = hookcheck.problems(self.session.dir, spec, self.hook_facts)
        if found:
            error = hookcheck.line(found)
            if error not in self.hooks_said:
                self.hooks_said.add(error)
                self.emit(Problem(where=hookcheck.WHERE, error=error))
        return found

    # the engine's pieces, by their names
    @property
    def inbox(self) -> Inbox:
        return self.engine.inbox

    @property
    def evals(self) -> Evaluations:
        return self.engine.evals

    @property
    def triggers(self) -> Triggers:
        return self.engine.triggers

    @property
    def ended(self) -> EndReason | None:
        return self.engine.ended

    @property
    def tool_calls(self) -> int:
        return self.engine.counters.tool_calls

    # ------------------------------------------------------------------ the engine's host
    def minutes(self) -> float:
        return (time.time() - self.settings.start_epoch) / 60

    def sync(self) -> None:
        self.log.sync()

    def sleep(self, seconds: float) -> None:
        with self.outside():  # other hooks are answered meanwhile
            time.sleep(seconds)

    def caller_alive(self) -> bool:
        """Whether whoever runs this hook still waits for its answer."""
        if self.server is not None:
            return self.server.caller_alive()
        return os.getppid() == self._parent

    def outside(self) -> AbstractContextManager[object]:
        return self.server.outside() if self.server is not None else nullcontext()

    def inside(self) -> AbstractContextManager[object]:
        return self.server.inside() if self.server is not None else nullcontext()

    # the plan's parts, by their names
    @property
    def goal(self) -> Goal:
        return self.plan.goal

    @property
    def goal_set(self) -> str | None:
        return self.plan.goal_set

    def resolve(self) -> CampaignPlan:
        """The plan as the settings say (config.json and attach's; the log's pins once
        applied): attach.py resolved the same from the same settings at the start."""
        return resolve_plan(self.task, self.config, scenario_ids=self.settings.scenario_ids,
                            task_hashes=self.task_hashes, task_source=self.task_source,
                            libraries=self.pinned_libraries)

    def recover_start(self, events: list[Event]) -> list[Event]:
        """A log without its campaign.start: empty (the attach was killed before it wrote
        it), it is written now from the session's settings; with events of its own, it is
        not this session's log and nothing is written past it."""
        if events or (self.session.events.exists() and self.session.events.stat().st_size):
            raise InputError(f"{self.session.events}: does not begin with campaign.start; "
                             f"not a campaign's log (nothing was written to it)")
        from socratic.harness.engine.startup import versions

        self.emit(start_event(self.plan, self.config, model=self.settings.agent,
                              session=self.session.dir.name, versions=versions(), gpu=None,
                              session_id=self.session.session_id, agent=self.settings.agent,
                              recovered=True))
        return read_events(self.session.events)[0].events

    def save(self) -> None:
        marks = self.engine.marks()
        for name in MARK_FIELDS:
            setattr(self.state, name, getattr(marks, name))
        data = asdict(self.state)
        if data != self._hook_state_written or not (self.session.dir / HOOK_STATE).exists():
            write_json_atomic(self.session.dir / HOOK_STATE, data, fsync=False)
            self._hook_state_written = data
        self.inbox.save()

    # ------------------------------------------------------------------ the campaign's life
    def resume_by_socratic(self, why: str) -> None:
        """socratic's own resume (`attach --resume`, outside the agent's reach): whatever
        ended the campaign, it goes on."""
        if self.engine.ended is not None:
            self.engine.resumed(ctx=0, messages=0, reason=why, ended=self.engine.ended)

    def resume(self, why: str) -> bool:
        """A hook call after campaign.end (the engineer typed into the agent): go on, unless
        the end was the engineer's stop or a limit. A prompt hook proves no engineer (the
        agent can run the hook client by hand with any payload), so it may not undo either:
        that takes socratic's own resume (`socratic attach SESSION --resume --headless`).
        Whether it goes on."""
        if self.engine.ended is None:
            return True
        if self.engine.ended in PROMPT_CANNOT_RESUME:
            return False
        # the fields of a `run` resume (no conversation of ours: ctx and messages 0), and why
        self.engine.resumed(ctx=0, messages=0, reason=why, ended=self.engine.ended)
        return True

    def end(self, reason: EndReason, **extra: Any) -> None:
        self.engine.end(reason, **extra)

    # ------------------------------------------------------------------ the agent's words
    def read_transcript(self, fmt: str, path: str | None) -> None:
        """Log what the agent wrote since the last call (text, and token usage)."""
        from socratic.harness.core.transcripts import read_new

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
            self.engine.agent_text(text)
        for u in chunk.usage:
            if u["id"] in st.usage_ids:
                continue
            st.usage_ids = (st.usage_ids + [u["id"]])[-500:]
            if self.catch_up is not None and self.catch_up.usage > 0:
                self.catch_up.usage -= 1
                continue
            model = u.pop("model") or self.config.model
            u.pop("id")
            cost = round(cost_usd(model, u["input_tokens"], u["output_tokens"], u["cache_read"],
                                  u["cache_write"]), 6)
            self.engine.model_turn(cost)  # turns: the agent's model responses
            self.emit(Usage(**u, model=model, cost_usd=cost))

    def last_message(self, text: Any) -> None:
        """The agent's final words as the Stop payload has them: a transcript written
        asynchronously may not hold them yet; logged now, skipped when it does."""
        if not isinstance(text, str) or not text.strip():
            return
        if self.triggers.recent_text.rstrip().endswith(text.strip()):
            return
        self.engine.agent_text(text)
        self.state.echo = (self.state.echo + [text])[-5:]

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, set_name: str | None, source: str = "agent") -> Evaluation:
        return self.engine.evaluate(set_name, source)

    def settle(self, taken: list[Taken], written: bool) -> None:
        self.engine.settle(taken, written)
