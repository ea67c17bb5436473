"""Fleets: many campaigns at once, over a node's GPUs or a Slurm cluster.

What other parts may use (the TUI's fleet screen): `is_fleet(dir)`, `FleetStatus(dir)`
(rows, polled incrementally) and `CampaignRow`.
"""

from socratic.fleet.folder import is_fleet
from socratic.fleet.status import CampaignRow, FleetStatus, fleet_rows

__all__ = ["CampaignRow", "FleetStatus", "fleet_rows", "is_fleet"]
