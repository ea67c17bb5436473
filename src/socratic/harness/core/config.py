"""Campaign settings: model, limits, detector thresholds, evaluator command. One dataclass,
filled from the CLI (and environment), stored in the session so `--resume` reuses it."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import asdict, dataclass, field, fields
from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-6"

# USD per million tokens (input, output); cache writes cost 1.25x input, reads 0.1x input.
# An estimate: the cost_usd of `usage` events is labelled as such in the docs.
PRICES = {
    "opus": (5.0, 25.0),
    "sonnet": (3.0, 15.0),
    "haiku": (1.0, 5.0),
}


def price_for(model: str) -> tuple[float, float]:
    for family, price in PRICES.items():
        if family in model:
            return price
    return PRICES["sonnet"]


def cost_usd(model: str, input_tokens: int, output_tokens: int, cache_read: int,
             cache_write: int) -> float:
    pin, pout = price_for(model)
    return (input_tokens * pin + cache_write * pin * 1.25 + cache_read * pin * 0.1
            + output_tokens * pout) / 1e6


def default_evaluator() -> list[str]:
    """argv prefix of the evaluator: $SOCRATIC_EVALUATOR (shell words) or `python -m socratic.evaluator`."""
    env = os.environ.get("SOCRATIC_EVALUATOR")
    if env:
        try:
            return shlex.split(env)
        except ValueError as exc:  # an unclosed quote
            from socratic.errors import InputError

            raise InputError(f"$SOCRATIC_EVALUATOR {env!r}: not shell words ({exc})") from None
    # -P: the working directory (an agent's workspace, say) is not on sys.path
    return [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m",
            "socratic.evaluator"]


@dataclass
class TriggerConfig:
    plateau_window: int = 5            # evaluations without a relative improvement of ...
    plateau_min_gain: float = 0.01     # ... this much in best min-speedup or geomean
    suspicious_step: float = 0.25      # one evaluation improving geomean/min by this much
    suspicious_bound_fraction: float = 0.9  # any scenario at this fraction of its bound
    same_source_step: float = 0.10     # the same source measured again, this much faster
    explanation_min_chars: int = 40    # text after a failing evaluation that counts as explanation
    declared_done_cooldown: int = 1    # evaluations between two declared_done firings


@dataclass
class Config:
    model: str = DEFAULT_MODEL
    max_tokens: int = 16000                # per response
    auto_questions: bool = False
    wait_for_human: bool = False           # attached: stalls wait for a question, not end
    max_tool_calls: int | None = None
    max_turns: int | None = None
    max_minutes: float | None = None
    goal_min_speedup: float | None = None  # overrides task.toml [goal] min_speedup
    goal_against: str | None = None        # overrides task.toml [goal] against
    goal_hidden: bool | None = None        # overrides task.toml [goal] hidden
    scenarios: str | None = None           # evaluation set (default: the task's default_set)
    evaluator: list[str] = field(default_factory=default_evaluator)
    eval_timeout_s: float = 1800.0
    bash_timeout_s: float = 600.0
    output_cap: int = 12000                # characters of tool output shown to the agent
    log_output_cap: int = 4000             # characters of tool output kept inline in events
    context_limit_tokens: int = 160_000    # hand off to a fresh context above this
    max_empty_stops: int = 3               # stop attempts in a row with no work in between
    api_timeout_s: float = 600.0
    retry_base_s: float = 2.0
    retry_max_s: float = 60.0
    retry_max_attempts: int | None = None  # None: retry forever (the campaign never dies of one)
    poll_s: float = 0.2                    # inbox poll while paused / waiting
    text_flush_s: float = 0.1              # agent.text merge interval
    fsync_every_s: float = 1.0             # events are flushed each; fsync'd at most this often
    triggers: TriggerConfig = field(default_factory=TriggerConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in names}
        if isinstance(kw.get("triggers"), dict):
            tnames = {f.name for f in fields(TriggerConfig)}
            kw["triggers"] = TriggerConfig(**{k: v for k, v in kw["triggers"].items()
                                              if k in tnames})
        return cls(**kw)
