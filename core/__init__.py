"""socratic: a terminal workbench for question-driven GPU kernel optimization.

This package holds only what every part shares: the CLI dispatcher, the one-line
input error, the event-log/inbox file contract and the locations of bundled data.
"""

__version__ = "0.1.0"
