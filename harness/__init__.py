"""socratic harness: the campaign loop (`socratic run`), outside agents' hooks (`attach`,
`hook`), campaigns by hand, `inject` and `retract`.

Public API (other parts use only this; each name loads on first use):

    run_options()    `socratic run`'s options by dest (argparse actions): a fleet file's
                     campaign keys are these
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socratic.lazyexports import lazy_exports

_WHERE = {"run_options": ".cli"}

__all__ = ["run_options"]

if TYPE_CHECKING:
    from socratic.harness.cli import run_options

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
