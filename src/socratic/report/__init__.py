"""`socratic report`: what a campaign did and what the questions changed, re-derived from
its session folder (events.jsonl, evals/, candidates/).

Public API (other parts use only this): build_report, session_report, summary_lines,
bank_usage and its usage_lines (`bank stats --sessions`), bank_traces (with its Traces,
Asking and DEFAULT_MIN_GAIN). Each loads on first use: `socratic.report.cli` (imported by
every `socratic ...`) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socratic.lazyexports import lazy_exports

_WHERE = {
    "bank_usage": ".bankuse", "usage_lines": ".bankuse", "SessionReport": ".figures",
    "Report": ".model", "build_report": ".model", "session_report": ".model",
    "summary_lines": ".text", "DEFAULT_MIN_GAIN": ".traces", "Asking": ".traces",
    "Traces": ".traces", "bank_traces": ".traces",
}

__all__ = ["DEFAULT_MIN_GAIN", "Asking", "Report", "SessionReport", "Traces", "bank_usage",
           "bank_traces", "build_report", "session_report", "summary_lines", "usage_lines"]

if TYPE_CHECKING:
    from socratic.report.bankuse import bank_usage, usage_lines
    from socratic.report.figures import SessionReport
    from socratic.report.model import Report, build_report, session_report
    from socratic.report.text import summary_lines
    from socratic.report.traces import DEFAULT_MIN_GAIN, Asking, Traces, bank_traces

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
