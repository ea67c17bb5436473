"""`socratic retract SESSION N [N ...] --why TEXT [--comparisons]`: take recorded evaluations
back, append-only. One `eval.retract` event says which, on what terms and why; nothing
recorded is rewritten, and every reader applies it (socratic.contracts.Retractions).

The session is written the way a hook writes it: holding it (socratic.ownership) and
appending through EventLog. A `socratic run` campaign holds its session while it runs, so a
retraction waits for its end; an attached campaign holds it only during a hook call.
Cheap to import: registered by the harness's cli module.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from socratic.cliargs import path_text, positive_int
from socratic.contracts import RetractPart, number_runs
from socratic.errors import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "retract", help="take back recorded evaluations (or only their comparisons)",
        description="Mark recorded evaluations as retracted, with the reason: they no longer "
        "count as a best, for the goal, in the report, the TUI or bank traces. Nothing is "
        "rewritten: one eval.retract event is appended to the session's log.")
    p.add_argument("session", type=path_text, metavar="SESSION", help="a session folder")
    p.add_argument("evals", nargs="+", type=positive_int, metavar="N",
                   help="evaluation numbers (as `socratic report` and the TUI number them)")
    p.add_argument("--why", required=True, metavar="TEXT", help="the reason, kept in the log")
    p.add_argument("--comparisons", action="store_true",
                   help="retract only their speedups against the comparisons (FA3, cuDNN, "
                   "...); their correctness and speedup against the baseline stand")
    p.set_defaults(handler=handle_retract)


def handle_retract(args) -> int:
    from socratic import resources

    given = Path(args.session)
    session = resources.resolve_session_dir(given)
    from socratic.sessionfiles import is_pack, refuse_pack

    if resources.installed(session):
        how = f"`socratic unpack {args.session} DIR`" if is_pack(session) else "copy the folder"
        raise InputError(f"{args.session}: a campaign installed with socratic ({session}); "
                         f"{how} and retract in the copy")
    refuse_pack(session, "retract")
    why = args.why.strip()
    if not why:
        raise InputError("--why: empty reason")
    part: RetractPart = "comparisons" if args.comparisons else "all"
    event = retract(session, sorted(set(args.evals)), part, why)
    what = "the comparisons of evaluation(s)" if part == "comparisons" else "evaluation(s)"
    print(f"socratic: retracted {what} {number_runs(event['evals'])} of {session} "
          f"(event seq {event['seq']})", file=sys.stderr)
    cited = bank_entries_citing(session.name, event["evals"])
    if cited:
        # a trace resting on what was taken back no longer stands: say which, and how to
        # judge them again (`--write` there demotes what it no longer confirms)
        print(f"socratic: bank entries citing those evaluations as evidence: "
              f"{', '.join(cited)}; `socratic bank trace {shlex.quote(str(given))}` judges "
              f"them again", file=sys.stderr)
    return 0


def bank_entries_citing(session_name: str, ns: list[int]) -> list[str]:
    """Ids of the bank's entries whose evidence names one of the session's evaluations."""
    from socratic.bank import BankError, load_bank

    files = {f"{session_name}/evals/{n:04d}.json" for n in ns}
    try:
        bank = load_bank()
    except BankError:
        return []
    return sorted(e.id for e in bank.entries if files & set(e.evidence))


def retract(session: Path, ns: list[int], part: RetractPart, why: str) -> dict[str, Any]:
    """Append `eval.retract` for evaluations `ns` while holding the session; InputError (and
    nothing written) when the session is not a readable campaign, another process runs it,
    or an N is not a recorded evaluation or is retracted already on these terms."""
    from socratic.contracts import EvalRetract, read_events
    from socratic.eventlog import EVENTS_FILE, EventLog
    from socratic.harness.core.sessionlog import CLAIM_WAIT_S
    from socratic.logread import read_log
    from socratic.ownership import SessionBusy, SessionOwner

    log = session / EVENTS_FILE
    if not log.is_file():
        raise InputError(f"{session}: not a campaign session (no {EVENTS_FILE})")
    try:
        owner = SessionOwner.claim(session, role="retract")
    except SessionBusy as exc:
        if exc.owner.role == "campaign":
            raise InputError(f"{session}: a campaign is running here ({exc.owner.describe()}); "
                             f"retract once it has ended (nothing recorded)") from None
        owner = SessionOwner.claim(session, role="retract", wait_s=CLAIM_WAIT_S)  # a hook's turn
    with owner:
        try:
            events = read_events(log)[0].events
        except OSError as exc:
            raise InputError(f"{log}: cannot read ({exc.strerror or exc})") from None
        reading = read_log(events)   # the one reading (socratic.logread)
        if reading.start is None:
            raise InputError(f"{log}: no readable campaign.start event: not a campaign log")
        recorded = {e.n for e in reading.evaluations}
        done = reading.retractions
        for n in ns:
            if n not in recorded:
                have = f"recorded: {number_runs(sorted(recorded))}" if recorded else "none recorded"
                raise InputError(f"{log}: no evaluation {n} ({have}); nothing recorded")
            if done.part(n) in ("all", part):
                raise InputError(f"{log}: evaluation {n} is already retracted "
                                 f"({done.part(n)}: {done.why(n)}); nothing recorded")
        return EventLog.open(session).write(EvalRetract(evals=ns, part=part, why=why))
