"""socratic: a terminal workbench for question-driven GPU kernel optimization.

This package holds only what every part shares: the CLI dispatcher, the one-line
input error, the contract types (`socratic.contracts`: the evaluation result and every
event), the event-log/inbox files, the one task.toml loader (`socratic.taskfile`, with its
expressions in `socratic.expr`) and the locations of bundled data.
"""

__version__ = "0.1.0"
