"""The closed vocabularies of the contracts, as `Literal` aliases defined once: why a
campaign ended, which part of an evaluation a retraction takes back, the TUI transcript's
block kinds, and what a speedup is against (the goal's terms).

A record field typed with one of these is checked as a string when read (`Record.from_dict`),
not against the list: a log written by a newer version, with a reason this one does not
know, still reads (readers ignore what they do not know). The aliases type what this version
writes and compares.
"""

from __future__ import annotations

import typing
from typing import Literal

EndReason = Literal[
    "goal_met",          # the goal predicate held
    "stopped",           # by the engineer (inbox stop, the TUI's x)
    "stalled",           # stop attempts without the goal, or given up by hand
    "interrupted",       # SIGINT/SIGTERM
    "api_error",         # the model's API failed beyond retrying
    "error",             # the campaign's own files failed (a full disk)
    "max_tool_calls", "max_turns", "max_minutes",   # a limit
    "hooks_silent",      # an outside agent's hooks did not report its work (unproven)
    "agent_exited",      # the agent process exited while the campaign ran (unproven)
    "ended",             # a reader's: a campaign.end too malformed to say why (logread)
]
END_REASONS: tuple[EndReason, ...] = typing.get_args(EndReason)

RetractPart = Literal["all", "comparisons"]
RETRACT_PARTS: tuple[RetractPart, ...] = typing.get_args(RetractPart)

BlockKind = Literal["start", "text", "tool", "eval", "trigger", "question", "stophook",
                    "control", "problem", "retract", "end"]
BLOCK_KINDS: tuple[BlockKind, ...] = typing.get_args(BlockKind)

Baseline = Literal["baseline"]
BASELINE: Baseline = "baseline"
# What a speedup is against: "baseline" or a comparison's name. The comparisons are the
# task's own (fa3, cudnn, fa2 for flash_attn_fwd; a new task brings others), an open set, so
# the terms are `Baseline | str`, which is `str` to a type checker: the alias names the seam.
Terms = str
