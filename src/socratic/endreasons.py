"""Why a campaign ended (campaign.end `reason`), in words for fleet status, the TUI and the
report (one wording for all three).

Two ends say that the campaign's record cannot be trusted as a result: `hooks_silent` (an
outside agent ran tools its hooks never reported, or ended without the stop hook being
consulted) and `agent_exited` (the agent process exited while the campaign was running).
Neither ever counts as goal met, whatever the log holds before them.
"""

from __future__ import annotations

from typing import Any

from socratic.contracts.vocab import END_REASONS, EndReason

__all__ = ["END_REASONS", "GOAL_MET", "UNPROVEN", "EndReason", "counts_as_met", "end_detail"]

GOAL_MET: EndReason = "goal_met"
UNPROVEN: tuple[EndReason, ...] = ("hooks_silent", "agent_exited")


def counts_as_met(reason: EndReason | None) -> bool:
    """Whether an end may stand as goal met (an unproven end never does)."""
    return reason not in UNPROVEN


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def end_detail(reason: EndReason | None, fields: dict[str, Any]) -> str:
    """What an unproven end means, from its campaign.end fields ("" for other ends):
    `hooks_silent` with tools_reported (the agent's own count, or None), tools_logged (by
    its hooks) and stop_consulted; `agent_exited` with exit_code."""
    if reason == "hooks_silent":
        ran, logged = _int(fields.get("tools_reported")), _int(fields.get("tools_logged"))
        stops = _int(fields.get("stop_consulted"))
        parts = []
        if ran is not None or logged is not None:
            parts.append(f"the agent ran {ran if ran is not None else 'unknown'} tool calls, "
                         f"its hooks reported {logged if logged is not None else 'unknown'}")
        if stops is not None:
            parts.append(f"stop hook consulted {stops} time{'' if stops == 1 else 's'}")
        said = "; ".join(parts) or "the agent's hooks did not report its work"
        return f"hooks silent: {said} (not goal met)"
    if reason == "agent_exited":
        code = _int(fields.get("exit_code"))
        how = f" with code {code}" if code is not None else ""
        return f"the agent process exited{how} while the campaign ran (not goal met)"
    return ""
