"""A campaign driven by hand (`socratic attach TASK --agent manual`): no agent process and
no hooks. A person, or any tool, edits workspace/candidate.cu and runs, one command each,
the steps an agent's hooks would run:

    socratic hook evaluate                         evaluate here (a GPU node), as ./evaluate
    socratic hook evaluate --import R.json         record `socratic eval --json` run elsewhere
    socratic hook say TEXT | -                     the agent's words (answers, plans)
    socratic hook stop [--give-up REASON]          the goal judged; or the end without it

Each step is a short-lived process that holds the session as a hook does (AttachedCampaign.open:
the session lock, the campaign's pieces rebuilt from the log): the inbox is read, the step
done, and what it surfaced printed: triggers with the bank's suggestions, and the questions
due (auto-questions, or typed in the TUI), which count as delivered: the person running the
step reads them, and answers with `say`.

Importing is for campaigns by hand only: in a session an agent's hooks drive, the agent
could import a result it wrote itself, so the import is refused there (and the refusal
logged). The import is refused, nothing recorded, unless the file is a
`socratic.eval/1` result of the session's task for this very candidate source (sha256), on
scenarios that match the task's set of that name; a result on another set than the goal's
(say `full`) is recorded and, as a local one, never satisfies the goal.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.contracts import (
    AgentText,
    CampaignEnd,
    CampaignResume,
    ContractError,
    EvalEnd,
    EvalResult,
    Problem,
    Question,
    Trigger,
    parse_eval,
    parse_event,
    read_events,
)
from socratic.errors import InputError
from socratic.harness.attached import agentspec
from socratic.harness.attached.attached_campaign import AttachedCampaign, check_set
from socratic.harness.core.history import Evaluation


@dataclass
class Step:
    """One command's hold on the session, and what it logged (to say what surfaced)."""

    camp: AttachedCampaign
    by_hand: bool                  # the session's agent has no hooks: deliver questions now
    seen: list[dict[str, Any]] = field(default_factory=list)

    def surfaced(self) -> list[str]:
        """Lines for what the step's events surfaced: triggers, questions, the end. With
        an agent that has hooks, its questions wait for its next hook (said so)."""
        if self.by_hand and self.camp.ended is None:  # after the end nothing is posed
            notes = list(self.camp.inbox.notes)
            self.camp.engine.deliver_now()  # logs the questions due: the person reads them now
        else:
            notes = []
        lines: list[str] = []
        for raw in self.seen:
            e = parse_event(raw)   # as this process wrote it: it parses
            if isinstance(e, Trigger):
                lines.append(f"socratic: trigger {e.kind}: {e.reason}")
                if e.suggestions:
                    lines.append("  the bank suggests: " + ", ".join(e.suggestions)
                                 + f"  (`socratic bank show ID`; pose one with `socratic "
                                 f"inject {shlex.quote(str(self.camp.session.dir))} --bank ID`)")
            elif isinstance(e, Question):
                where = e.source + (f" @ {e.trigger}" if e.trigger else "")
                bank = f" {e.bank_id}" if e.bank_id else ""
                lines.append(f"socratic: question [{where}]{bank}:\n  {e.text}\n"
                             f"  (answer it after checking: `socratic hook say \"...\"`)")
            elif isinstance(e, CampaignEnd):
                lines.append(f"socratic: campaign ended: {e.reason}")
            elif isinstance(e, CampaignResume):
                lines.append(f"socratic: campaign resumed (it had ended: {e.ended})")
        if not self.by_hand:
            agent = self.camp.settings.agent
            lines += [f"socratic: question due at {agent}'s next hook: {q.text}"
                      for q in self.camp.inbox.questions]
        return lines + [f"socratic: {n}" for n in notes]

    def limit(self) -> None:
        """A limit reached (by hand: --max-minutes) ends the campaign, as a hook would."""
        reason = self.camp.engine.limit_reached()
        if reason and self.camp.ended is None:
            self.camp.end(reason)


@contextmanager
def step(session_dir: Path, all_or_nothing: bool = True) -> Iterator[Step]:
    """One command by hand over the campaign. A write that fails part way (a full disk)
    takes back all it logged (`all_or_nothing`; off where an evaluation's files were
    written), so that the error it reports is true and a retry logs it once."""
    try:
        with _step(session_dir, all_or_nothing) as s:
            yield s
    except OSError as exc:
        if not all_or_nothing:
            raise
        where = f": {exc.filename}" if exc.filename else ""
        raise InputError(f"{exc.strerror or exc}{where}: nothing was recorded (run the "
                         f"command again once the file can be written)") from None


@contextmanager
def _step(session_dir: Path, all_or_nothing: bool) -> Iterator[Step]:
    with AttachedCampaign.open(session_dir, all_or_nothing=all_or_nothing) as camp:
        by_hand = not agentspec.load(camp.settings.agent).has_hooks
        s = Step(camp, by_hand)
        camp.emit.on_event = s.seen.append
        if by_hand:
            camp.engine.poll_inbox()
            ib = camp.inbox
            if ib.stop_requested and camp.ended is None:
                camp.end("stopped")
                ib.stop_requested = False
                raise InputError(f"{session_dir}: the campaign was stopped from its inbox (the "
                                 f"TUI's x, or `socratic inject --stop`): campaign.end stopped, "
                                 f"nothing else recorded; run the command again to resume it")
            if ib.eval_requested:
                ib.eval_requested = False
                ib.note("the engineer asks for an evaluation of the current candidate: "
                        "./evaluate here on a GPU node, or import one (--import)")
            camp.engine.fire_start()
            # questions already waiting (injected since the last step) were posed before
            # this command: log them first, so the text that answers them follows them
            if camp.ended is None:
                camp.engine.deliver_now()
        yield s


def begin(session_dir: Path) -> list[str]:
    """Right after `socratic attach --agent manual`: the start trigger and its question."""
    with step(session_dir) as s:
        return s.surfaced()


# ---------------------------------------------------------------------- evaluations

def evaluate_here(session_dir: Path, set_name: str | None) -> tuple[int, str]:
    """`socratic hook evaluate` by hand: the workspace's ./evaluate, plus what surfaced."""
    check_set(session_dir, set_name)
    _gpu_here(session_dir)
    with step(session_dir, all_or_nothing=False) as s:
        s.camp.resume("an evaluation was run by hand")
        ev = s.camp.evaluate(set_name, source="agent")
        text = s.camp.evals.table(ev)
        s.limit()
        return (0 if ev.all_correct else 1), "\n".join([text, *s.surfaced()])


def _gpu_here(session_dir: Path) -> None:
    """A campaign by hand is often edited where there is no GPU: there, the real evaluator's
    refusal would be recorded as an incorrect evaluation (and fire correctness_failure).
    Say where to evaluate instead, before anything is recorded."""
    from socratic.harness.core.session import Session

    argv = Session(session_dir).load_config().config.get("evaluator")
    if not isinstance(argv, list) or argv[-2:] != ["-m", "socratic.evaluator"]:
        return  # another evaluator ($SOCRATIC_EVALUATOR) knows its own needs
    from socratic.gpuinfo import gpu_present

    why = gpu_present()
    if why:
        raise InputError(f"no GPU here ({why}): evaluate candidate.cu on the GPU node "
                         f"(`socratic eval TASK --candidate candidate.cu --json > result.json`) "
                         f"and record it with `socratic hook evaluate --import result.json`; "
                         f"nothing recorded")


def read_result(path: Path) -> tuple[EvalResult, str]:
    """The result file and the sha256 of its bytes; InputError naming the file when it is
    not a `socratic eval --json` document that ran scenarios."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    def not_a_number(token: str) -> None:  # NaN, Infinity: no JSON, and no measurement
        raise ValueError(f"{token} is not a number JSON allows")

    try:
        doc = json.loads(raw, parse_constant=not_a_number)
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc}); import what `socratic eval TASK "
                         f"--candidate FILE --json` prints on stdout") from None
    try:
        result = parse_eval(doc, str(path))
    except ContractError as exc:
        raise InputError(str(exc)) from None
    if result.build.ok and not result.scenarios:
        raise InputError(f"{path}: a --check-only result (no scenario ran): nothing to "
                         f"import; evaluate without --check-only on the GPU node")
    for row in result.scenarios:
        for name in ("baseline_ms", "candidate_ms", "speedup"):
            v = getattr(row, name)
            if v is not None and not v > 0:
                raise InputError(f"{path}: scenario {row.id}: {name} {v} is not a positive "
                                 f"time or ratio: not a result the evaluator writes")
    return result, hashlib.sha256(raw).hexdigest()


def check_result(camp: AttachedCampaign, path: Path, result: EvalResult, file_sha: str,
                 candidate: Path) -> bytes:
    """The candidate's bytes when `result` is this session's task's evaluation of them on
    the scenarios its set names, not imported before; else InputError (one line)."""
    if result.task != camp.task.name:
        raise InputError(f"{path}: a result of task {result.task!r}, not of this session's "
                         f"task {camp.task.name!r}")
    try:
        data = candidate.read_bytes()
    except OSError as exc:
        raise InputError(f"{candidate}: cannot read the candidate "
                         f"({exc.strerror or exc})") from None
    sha = hashlib.sha256(data).hexdigest()
    if result.candidate.sha256 != sha:
        raise InputError(f"{path}: evaluated a candidate with sha256 "
                         f"{result.candidate.sha256[:16]}... ({result.candidate.path}), not "
                         f"{candidate} (sha256 {sha[:16]}...): import it with the source it "
                         f"evaluated (--candidate FILE)")
    try:
        _, scenarios = camp.task.spec.select(result.set)
    except InputError:
        raise InputError(f"{path}: set {result.set!r} names no set or scenario of task "
                         f"{camp.task.name}") from None
    expected = {s.id for s in scenarios}
    if result.set == camp.goal_set and camp.settings.scenario_ids:
        expected = set(camp.settings.scenario_ids)  # as campaign.start recorded them
    got = [r.id for r in result.scenarios]
    if got and (set(got) != expected or len(got) != len(expected)):
        odd = sorted(set(got) ^ expected)
        raise InputError(f"{path}: set {result.set!r} ran {len(got)} scenario(s), not the "
                         f"{len(expected)} this session's task has in it (differing: "
                         f"{', '.join(odd[:5]) or 'repeated ids'}): another version of the "
                         f"task?")
    for e in read_events(camp.session.events)[0].events:
        if isinstance(e, EvalEnd) and e.imported is not None and e.imported.sha256 == file_sha:
            raise InputError(f"{path}: already imported, as evaluation #{e.n}")
    return data


def import_evaluation(session_dir: Path, path: Path,
                      candidate: Path | None = None) -> tuple[Evaluation, str]:
    """`socratic hook evaluate --import RESULT.json [--candidate FILE]`: the evaluation
    recorded as a local one is, marked imported; returns it and the text to print."""
    result, file_sha = read_result(path)
    with step(session_dir, all_or_nothing=False) as s:
        camp = s.camp
        if not s.by_hand:
            # an agent with a shell could import a result it wrote itself: its evaluations
            # are the ones socratic runs (./evaluate, the stop)
            why = (f"{camp.session.dir} is driven by {camp.settings.agent}'s hooks; imports "
                   f"are for campaigns by hand (--agent manual)")
            camp.emit(Problem(where="hook evaluate --import",
                              error=f"refused {path.name} (sha256 {file_sha[:16]}...): {why}"))
            raise InputError(f"hook evaluate --import: {why}; the refusal is logged, nothing "
                             f"else recorded")
        cand = candidate or camp.session.candidate
        data = check_result(camp, path, result, file_sha, cand)
        camp.resume("an evaluation was imported")
        ev = camp.evals.record_import(result, data, {
            "file": str(path.resolve()), "sha256": file_sha, "host": socket.gethostname()})
        gpu = f" on {result.gpu.name}" if result.gpu else ""
        lines = [f"socratic: evaluation #{ev.n} imported from {path}{gpu} "
                 f"(candidate {cand}, set {result.set})", camp.evals.table(ev)]
        if ev.set != camp.goal_set:
            lines.append(f"socratic: set {ev.set!r} is not the goal's set "
                         f"({camp.goal_set!r}): recorded; it never satisfies the goal")
        ws = camp.session.candidate
        if not ws.exists() or ws.read_bytes() != data:
            lines.append(f"socratic: {ws} is not {cand}: the next `socratic hook stop` "
                         f"judges {ws.name} as it is, not this evaluation (copy {cand} there "
                         f"to have it judged)")
        s.limit()
        return ev, "\n".join(lines + s.surfaced())


# ---------------------------------------------------------------------- words and the end

def say(session_dir: Path, text: str) -> str:
    """`socratic hook say`: the agent's text (after the end: logged, nothing fires)."""
    text = text.strip()
    if not text:
        raise InputError("hook say: empty text (give TEXT, or - to read it from stdin)")
    with step(session_dir) as s:
        _by_hand_only(s, "say")
        if s.camp.ended is not None:
            s.camp.emit(AgentText(text=text))  # closing words: the campaign stays ended
        else:
            s.camp.engine.agent_text(text)  # a failure explained, a limit declared: triggers
            s.limit()
        return "\n".join([f"socratic: recorded as the agent's text ({len(text)} characters)",
                          *s.surfaced()])


def _by_hand_only(s: Step, what: str) -> None:
    if not s.by_hand:
        agent = s.camp.settings.agent
        raise InputError(f"hook {what}: {s.camp.session.dir} is driven by {agent}'s hooks "
                         f"(its words come from its transcript; `socratic inject "
                         f"{s.camp.session.dir} --stop` ends it)")


def _current(camp: AttachedCampaign) -> Evaluation | None:
    return camp.evals.history.find(camp.evals.candidate_sha(), camp.goal_set,
                                   camp.goal.against)


def stop(session_dir: Path) -> tuple[int, str]:
    """`socratic hook stop` by hand: the goal judged on workspace/candidate.cu's recorded
    evaluation on the goal set (never run here). Met: campaign.end goal_met, exit 0;
    unmet: the refusal with the failing scenarios and the questions due, exit 1."""
    with step(session_dir) as s:
        _by_hand_only(s, "stop")
        camp = s.camp
        if camp.ended is not None:
            return 0, f"socratic: the campaign has ended ({camp.ended})"
        if _current(camp) is None:
            sha = camp.evals.candidate_sha()
            gone = any(e.sha == sha and e.set == camp.goal_set and e.retracted
                       for e in camp.evals.history.evals)
            raise InputError(f"{camp.session.candidate}: no evaluation of it (sha256 "
                             f"{sha[:16]}...) on the goal set {camp.goal_set!r} is recorded"
                             f"{' that is not retracted' if gone else ''}: "
                             f"run ./evaluate on a GPU node or import one (`socratic hook "
                             f"evaluate --import RESULT.json`); nothing recorded")
        verdict = camp.engine.judge()
        if verdict.met:
            return 0, "\n".join([f"socratic: the goal is met on evaluation #{verdict.ev.n} "
                                 f"({camp.goal.describe()})", *s.surfaced()])
        s.limit()
        return 1, "\n".join([f"socratic: stop refused. {verdict.message}",
                             camp.evals.table(verdict.ev), *s.surfaced()])


def give_up(session_dir: Path, why: str) -> str:
    """`socratic hook stop --give-up REASON`: the end without the goal, said honestly: the
    current candidate's evaluation judged (if there is one: a met goal ends goal_met),
    the reason logged as the agent's text, and campaign.end `stalled` with `gave_up`."""
    why = why.strip()
    if not why:
        raise InputError("--give-up: say why (one line is enough)")
    with step(session_dir) as s:
        _by_hand_only(s, "stop --give-up")
        camp = s.camp
        if camp.ended is not None:
            return f"socratic: the campaign has ended ({camp.ended})"
        if _current(camp) is not None:
            verdict = camp.engine.judge(declared=False)
            if verdict.met:
                return "\n".join([f"socratic: the goal is met on evaluation #{verdict.ev.n}: "
                                  f"not given up", *s.surfaced()])
        camp.emit(AgentText(text=why))
        camp.end("stalled", gave_up=why)
        return "\n".join(s.surfaced())


def commands(session_dir: Path, eval_task: str) -> list[str]:
    """What `socratic attach --agent manual` prints: the commands that drive the session."""
    # quoted: the lines are copied into a shell, and a session path may hold spaces
    d = shlex.quote(str(session_dir))
    ws = session_dir / "workspace"
    return [
        f"  edit {ws / 'candidate.cu'}, then evaluate it, here on a GPU node:",
        f"    {shlex.quote(str(ws / 'evaluate'))}",
        "  or on the GPU node (a copy of candidate.cu), bringing the result back:",
        f"    socratic eval {eval_task} --candidate candidate.cu --json > result.json",
        f"    socratic hook evaluate --session {d} --import result.json",
        "  say what you measured, plan or conclude (answers to questions too):",
        f"    socratic hook say --session {d} \"...\"        (- reads stdin)",
        "  try to stop (the goal judged on candidate.cu's evaluation), or give up:",
        f"    socratic hook stop --session {d}",
        f"    socratic hook stop --session {d} --give-up \"why\"",
        "  (in the workspace, --session may be left out)",
    ]
