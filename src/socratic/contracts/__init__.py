"""The contracts between the parts, declared once as dataclasses: the evaluation result
(`socratic.eval/1`, what `socratic eval --json` prints and the harness saves under
evals/) and every event type of events.jsonl.

Writers build records through these types (`EventLog.append` checks every event against
its class; the evaluator builds its result from them), readers parse through them
(`parse_event`, `parse_eval`, `parse_events`, `read_events`).

Rules, the same for every record:
- A field without a default is required; `X | None` without a default may be null but
  must be present. A field defaulting to None is optional: absent, null and missing mean
  the same, and `to_dict` leaves it out when it is None.
- Declared fields are type-checked (an int is accepted where a float is declared, a bool
  never counts as a number). Keys beyond the declaration are kept, unchecked, in `extra`
  and written back by `to_dict`: writers may add fields, readers ignore what they do not
  know.
- An event of an unknown type is not an error (`parse_event` returns None: readers
  ignore it); a known type that does not match its declaration raises ContractError, and
  the list/file readers skip it and count it.

The package, by concern (every name is re-exported here, so `socratic.contracts.X` is
what importers write):
- common: `Record`, its checkers, `ContractError`;
- evalresult: `socratic.eval/1`, the evaluator's result document;
- events: every event type of events.jsonl and the readers of a log;
- retractions: what `eval.retract` events take back (`Retractions`);
- inbox: inbox.jsonl's commands;
- session: a session's config.json;
- vocab: the closed vocabularies as Literal aliases (`EndReason`, `RetractPart`, `BlockKind`)
  and the goal's `Terms`.
"""

from __future__ import annotations

from socratic.contracts.common import (
    ContractError,
    R,
    Record,
)
from socratic.contracts.evalresult import (
    SCHEMA,
    BanHit,
    Bans,
    Build,
    Candidate,
    Comparison,
    Coverage,
    CoverageCell,
    CoverageDraw,
    EvalResult,
    GpuInfo,
    HiddenSummary,
    KernelResources,
    OutputErrors,
    ScenarioProgress,
    ScenarioResult,
    Seconds,
    Summary,
    parse_eval,
    parse_scenario,
    read_eval,
)
from socratic.contracts.events import (
    EVENT_CLASSES,
    SCENARIO_LOGGED,
    AgentLaunch,
    AgentText,
    ApiRetry,
    BestEvaluation,
    CampaignEnd,
    CampaignResume,
    CampaignStart,
    ContextHandoff,
    Control,
    EvalEnd,
    EvalRetract,
    EvalScenario,
    EvalStart,
    EvalSummary,
    EvalWait,
    Event,
    Failing,
    Goal,
    GoalScenarios,
    HostGpu,
    Imported,
    Parsed,
    Problem,
    Question,
    StopHook,
    TaskModified,
    ToolCall,
    ToolResult,
    Trigger,
    Usage,
    build_event,
    parse_event,
    parse_event_lines,
    parse_events,
    read_events,
    scenario_fields,
    scenario_vs,
    with_scenario_vs,
)
from socratic.contracts.inbox import (
    CONTROL_ACTIONS,
    AskCommand,
    ControlCommand,
    InboxCommand,
    command_line,
    parse_command,
)
from socratic.contracts.retractions import (
    Retractions,
    number_runs,
    retracted_on,
)
from socratic.contracts.session import (
    SessionSettings,
)
from socratic.contracts.vocab import (
    BASELINE,
    BLOCK_KINDS,
    END_REASONS,
    RETRACT_PARTS,
    Baseline,
    BlockKind,
    EndReason,
    RetractPart,
    Terms,
)

__all__ = [
    "BASELINE", "BLOCK_KINDS", "END_REASONS", "Baseline", "BlockKind", "EndReason",
    "RetractPart", "Terms",
    "SCHEMA",
    "ContractError",
    "R",
    "Record",
    "Candidate",
    "GpuInfo",
    "KernelResources",
    "Build",
    "BanHit",
    "Bans",
    "OutputErrors",
    "Comparison",
    "ScenarioResult",
    "ScenarioProgress",
    "Summary",
    "HiddenSummary",
    "Seconds",
    "CoverageCell",
    "CoverageDraw",
    "Coverage",
    "EvalResult",
    "parse_eval",
    "read_eval",
    "parse_scenario",
    "Event",
    "Goal",
    "GoalScenarios",
    "HostGpu",
    "CampaignStart",
    "AgentText",
    "ToolCall",
    "ToolResult",
    "EvalStart",
    "SCENARIO_LOGGED",
    "EvalScenario",
    "scenario_fields",
    "scenario_vs",
    "with_scenario_vs",
    "EvalSummary",
    "Imported",
    "EvalEnd",
    "RETRACT_PARTS",
    "EvalRetract",
    "retracted_on",
    "Retractions",
    "number_runs",
    "EvalWait",
    "Trigger",
    "Question",
    "Failing",
    "StopHook",
    "Usage",
    "Control",
    "BestEvaluation",
    "CampaignEnd",
    "CampaignResume",
    "ApiRetry",
    "AgentLaunch",
    "Problem",
    "ContextHandoff",
    "TaskModified",
    "EVENT_CLASSES",
    "parse_event",
    "build_event",
    "Parsed",
    "parse_events",
    "read_events",
    "parse_event_lines",
    "CONTROL_ACTIONS",
    "AskCommand",
    "ControlCommand",
    "InboxCommand",
    "command_line",
    "parse_command",
    "SessionSettings",
]
