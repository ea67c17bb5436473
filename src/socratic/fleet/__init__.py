"""Fleets: many campaigns at once, over a node's GPUs or a Slurm cluster.

What other parts may use (the TUI's fleet screen): `is_fleet(dir)`, `session_hint(dir)`,
`FleetStatus(dir)` (rows, polled incrementally), `CampaignRow` and `fleet_rows`. Each loads
on first use: `socratic.fleet.cli` (imported by every `socratic ...`) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# the folder test is the shared layer's (the harness, below the fleet, uses it too)
from socratic.fleetfolder import is_fleet, session_hint
from socratic.lazyexports import lazy_exports

_WHERE = {"CampaignRow": ".status", "FleetStatus": ".status", "fleet_rows": ".status"}

__all__ = ["CampaignRow", "FleetStatus", "fleet_rows", "is_fleet", "session_hint"]

if TYPE_CHECKING:
    from socratic.fleet.status import CampaignRow, FleetStatus, fleet_rows

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
