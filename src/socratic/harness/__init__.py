"""socratic harness: the campaign loop (`socratic run`), outside agents' hooks (`attach`,
`hook`), campaigns by hand, `inject` and `retract`.

Public API (other parts use only this; each name loads on first use):

    run_options()    `socratic run`'s options by dest (argparse actions): a fleet file's
                     campaign keys are these
    check_goal(task_dir, against, scenarios, where)  a new campaign's --goal-against and
                     --scenarios against its task.toml (InputError naming the value)
    headless_agents()  the outside agents `socratic attach --headless` runs: name -> the
                     program it starts (harness/attached/agents/NAME.toml's [headless])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socratic.lazyexports import lazy_exports

_WHERE = {"run_options": ".cli", "check_goal": ".cli", "headless_agents": ".attached.agentspec"}

__all__ = ["run_options", "check_goal", "headless_agents"]

if TYPE_CHECKING:
    from socratic.harness.attached.agentspec import headless_agents
    from socratic.harness.cli import check_goal, run_options

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
