"""What every way of running a campaign shares: its configuration, session folder, task,
event log and history, inbox, pins, resume state, evaluator process, secrets redaction and
atomic writes. Imports no other harness subpackage."""
