"""What the engine needs from the adapter that drives it (campaign.py, attached_campaign.py),
as Protocols: handed to the engine when it is made, not assigned to it afterwards."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol


class Holder(Protocol):
    """Who holds the campaign while an evaluation runs. A session server lets go of it
    while the evaluator runs (other hooks are answered meanwhile) and takes it back for
    each row it logs (hookserver.py); everyone else holds it throughout."""

    def outside(self) -> AbstractContextManager[object]: ...

    def inside(self) -> AbstractContextManager[object]: ...


class Host(Holder, Protocol):
    """The adapter, as the engine's rules use it."""

    def minutes(self) -> float:
        """Campaign time so far: the clock of max_minutes."""
        ...

    def sync(self) -> None:
        """The log made durable (at the end)."""
        ...

    def sleep(self, seconds: float) -> None:
        """How the adapter waits (a pause, a stall): a session server lets go meanwhile."""
        ...

    def caller_alive(self) -> bool:
        """Whether whoever waits for this step's answer is still there (a hook's agent)."""
        ...


class Alone:
    """A holder that never lets go: one process holds the campaign throughout."""

    def outside(self) -> AbstractContextManager[object]:
        return nullcontext()

    def inside(self) -> AbstractContextManager[object]:
        return nullcontext()


ALONE = Alone()
