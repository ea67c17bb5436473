"""The contracts' vocabularies (socratic.contracts.vocab): Literal aliases defined once, read
as plain strings (a newer version's value still parses), written by the harness only from the
list."""

from __future__ import annotations

import typing

from socratic import contracts as c
from socratic import endreasons


def test_the_tuples_are_the_aliases():
    assert c.END_REASONS == typing.get_args(c.EndReason)
    assert c.RETRACT_PARTS == ("all", "comparisons") == typing.get_args(c.RetractPart)
    assert set(c.BLOCK_KINDS) == {"start", "text", "tool", "eval", "trigger", "question",
                                  "stophook", "control", "problem", "retract", "end"}
    assert set(endreasons.UNPROVEN) | {endreasons.GOAL_MET} <= set(c.END_REASONS)


def test_a_reason_this_version_does_not_know_still_reads():
    ev = c.parse_event({"seq": 9, "t": 1.0, "ts": "x", "type": "campaign.end",
                        "reason": "a_newer_reason"})
    assert isinstance(ev, c.CampaignEnd) and ev.reason == "a_newer_reason"
    assert ev.to_dict()["reason"] == "a_newer_reason"
    part = c.parse_event({"seq": 3, "t": 1.0, "ts": "x", "type": "eval.retract", "evals": [1],
                          "part": "a_newer_part", "why": "w"})
    assert isinstance(part, c.EvalRetract)
    assert c.Retractions.of([part]).part(1) is None   # ignored, as before


def test_a_vocabulary_field_is_still_checked_as_a_string():
    try:
        c.parse_event({"seq": 9, "t": 1.0, "ts": "x", "type": "campaign.end", "reason": 3})
    except c.ContractError as exc:
        assert "reason: expected a string" in str(exc)
    else:
        raise AssertionError("a number is not a reason")
