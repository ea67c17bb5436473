"""The stop hook: whenever the agent ends its turn, the goal predicate is judged on a fresh
evaluation of the current candidate (or the one already made of the same source), and the
agent is told which scenarios fall short. `StopAttempts` counts attempts with no work
between them: a stalled agent."""

from __future__ import annotations

from dataclasses import dataclass

from socratic.contracts import Failing, Problem, StopHook
from socratic.harness.core.history import Evaluation, describe_failing, judge, standing_failures
from socratic.harness.engine.evaluations import Evaluations, result_matches
from socratic.harness.engine.prompt import stophook_message


@dataclass
class Verdict:
    ev: Evaluation
    met: bool
    failing: list[Failing]
    reused: bool        # the candidate's evaluation on the goal set was already there
    message: str        # for the agent when unmet: which scenarios fall short, with numbers


def judge_stop(evals: Evaluations, record: str | None = None) -> Verdict:
    """The goal predicate on the current candidate's evaluation on the goal set (reused when
    this source was evaluated already, else a fresh one, which the triggers see as any
    other); logs `stophook` (with `record`: the log's chain is broken, said in one line).
    An evaluation whose saved result was rewritten since eval.end is not reused. Firing
    declared_done (`Triggers.on_stop`) is the caller's."""
    ev = evals.history.find(evals.candidate_sha(), evals.goal_set, evals.goal.against)
    if ev is not None and not result_matches(evals.session.dir, ev):
        # its result file was rewritten since it was logged: judged afresh, and said so
        evals.emit(Problem(where=ev.path, error=(
            f"its bytes differ from what eval.end #{ev.n} recorded (sha256 "
            f"{ev.result_sha[:16]}...): not reused; the candidate is evaluated again")))
        ev.result, ev.error = None, f"{ev.path} was rewritten after it was logged"
        ev = None
    reused = ev is not None
    if ev is None:
        ev = evals.run(evals.goal_set, source="stophook")
    met, failing = judge(ev, evals.goal)
    # what earlier evaluations of this same source found stands: a lucky draw (the hidden
    # shapes change every time) or a correct run after a wrong one does not undo it (red team,
    # s27: ./evaluate until one draw passed, then stop)
    earlier = [e for e in evals.history.all_of(ev.sha, evals.goal_set, evals.goal.against) if e.n != ev.n]
    standing = [f for e in earlier for f in standing_failures(e, evals.goal)]
    if standing:
        met, failing = False, failing + standing
    evals.emit(StopHook(met=met, failing=failing, n=ev.n, reused=reused, goal=evals.goal,
                        record=record or None))
    message = "" if met else stophook_message(describe_failing(failing, evals.goal),
                                              len(failing), ev.n)
    return Verdict(ev, met, failing, reused, message)


@dataclass
class StopAttempts:
    """Stop attempts in a row with no tool call between them."""

    in_a_row: int = 0
    calls_since: int = 0    # tool calls since the last attempt

    def tool_call(self) -> None:
        self.calls_since += 1

    def attempt(self) -> int:
        """Count a stop attempt; the attempts in a row, this one included."""
        self.in_a_row = self.in_a_row + 1 if self.calls_since == 0 and self.in_a_row > 0 else 1
        self.calls_since = 0
        return self.in_a_row

    def reset(self) -> None:
        """A human question broke the stall."""
        self.in_a_row = 0
