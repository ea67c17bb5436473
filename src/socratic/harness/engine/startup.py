"""What a campaign starts from, whichever adapter drives it (campaign.py, attach.py): the
bank's suggester for the triggers, and the facts of the machine
and the software that campaign.start records."""

from __future__ import annotations

import platform

from socratic.bank import SuggestContext, arch_from_cc, load_bank, suggest
from socratic.contracts import Goal
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.triggers import Suggester, Suggestion


def bank_suggester(has_comparison: bool, cc: str | None = None) -> Suggester:
    """bank.suggest over the bank (shipped and user files). A malformed user bank file is
    bad input (InputError naming file:line), not a campaign that silently suggests nothing.
    `cc`: the GPU's compute capability (nvidia-smi's, e.g. "10.0"), which picks the
    arch-specific questions; unknown: hopper, the arch the shipped tasks build for."""
    bank = load_bank()
    arch = arch_from_cc(cc) or "hopper"

    def fn(kind: str, asked: list[str], recent_text: str) -> list[Suggestion]:
        ctx = SuggestContext(arch=arch, has_comparison=has_comparison, asked=list(asked),
                             recent_text=recent_text)
        return [Suggestion(e.id, e.text) for e in suggest(bank, kind, ctx, limit=5)]

    return fn


def has_comparison(task: CampaignTask, goal: Goal) -> bool:
    """Whether the campaign has a comparison to time (the bank's comparison questions)."""
    return goal.against != "baseline" or bool(task.spec.comparisons)


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("socratic", "anthropic"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out
