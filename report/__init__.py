"""`socratic report`: what a campaign did and what the questions changed, re-derived from
its session folder (events.jsonl, evals/, candidates/).

Public API (other parts use only this): build_report, session_report, summary_lines,
bank_usage, bank_traces (with its Traces, Asking and DEFAULT_MIN_GAIN).
"""

from socratic.report.bankuse import bank_usage
from socratic.report.figures import SessionReport
from socratic.report.model import Report, build_report, session_report
from socratic.report.text import summary_lines
from socratic.report.traces import DEFAULT_MIN_GAIN, Asking, Traces, bank_traces

__all__ = ["DEFAULT_MIN_GAIN", "Asking", "Report", "SessionReport", "Traces", "bank_usage",
           "bank_traces", "build_report", "session_report", "summary_lines"]
