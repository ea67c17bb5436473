"""The short system prompt, the messages the harness adds to the conversation, and the seed
of a fresh context after a handoff. No optimization menu and no plan: only the task, the
tools, the goal as a predicate, the rules."""

from __future__ import annotations

from socratic.contracts import Goal
from socratic.harness.core.task import CampaignTask

DEFAULT_BANNED = ("CUTLASS/CuTe, cuBLAS/cuBLASLt, cuDNN, FlashAttention, Triton-generated code "
                  "or any other kernel library, whether included, linked or dlopen'ed; the evaluator "
                  "also rejects any dlopen, run-time code loading or compilation (cuModuleLoad*, "
                  "cudaLibraryLoad*, NVRTC), embedded binaries (.incbin, custom sections), #line "
                  "directives and calls into the Python interpreter")


def system_prompt(task: CampaignTask, goal: Goal, set_name: str | None, scenario_ids: list[str],
                  output_cap: int, bash_timeout_s: float) -> str:
    banned = task.data.get("banned") or task.data.get("bans")
    banned_text = ", ".join(banned) if isinstance(banned, list) else DEFAULT_BANNED
    ids = ", ".join(scenario_ids[:40]) + (" ..." if len(scenario_ids) > 40 else "")
    return f"""You are optimizing one CUDA kernel on an NVIDIA GPU.

Task: `{task.name}`. The entry point is `extern "C" int {task.entry}(...)` as in the baseline.
Your working directory (the workspace) holds:
- candidate.cu: the file you optimize; it starts as a copy of the baseline.
- NOTES.md: your notes. Keep them current (what you tried, measured, believe, plan): a fresh
  context may start from them.
- task/: read-only copies of the task (task.toml, the baseline, the fp32 reference). Editing
  them changes nothing: evaluations use a frozen copy.

Tools: bash (cwd = workspace; output capped at {output_cap} characters; timeout
{bash_timeout_s:g} s), read_file, write_file, edit_file (exact string replacement), and
evaluate (builds candidate.cu, checks every scenario against the reference, times it
against the baseline on the same GPU, and saves the full result).

Goal (a predicate, checked by the harness whenever you end your turn): {goal.describe()},
on the `{set_name or task.default_set or 'default'}` scenario set{f' ({ids})' if ids else ''}.
Your turn ends only when the predicate holds on a fresh evaluation; your claims are not
evidence. If you end your turn early you are told which scenarios fall short.

Rules: no {banned_text}. Keep the ABI of the entry point.

Questions from the engineer or from the harness may arrive between tool results. Each
deserves an answer you have checked (by a measurement, a file or a computation), not one
from memory; say what you checked."""


def question_message(text: str, source: str, trigger: str | None) -> str:
    who = "the engineer" if source == "human" else "the harness's question bank"
    why = f" (asked at: {trigger})" if trigger else ""
    return f"Question from {who}{why}: {text}\nAnswer it with a check, then continue."


def stophook_message(failing_text: str, n_failing: int, ev_n: int) -> str:
    return (f"The goal is not met on evaluation #{ev_n}: {n_failing} scenario(s) fall short.\n"
            f"{failing_text}\nContinue working on the candidate.")


def handoff_seed(*, goal: Goal, task: CampaignTask, history_table: str, best: str, current: str,
                 notes: str, questions: list[str], pending: str) -> str:
    qs = "\n".join(f"- {q}" for q in questions[-30:]) or "(none)"
    return f"""This is a fresh context for a campaign already under way (the previous context
reached its size limit). The campaign state:

Task: {task.name}. Goal: {goal.describe()}.

Best candidate so far: {best}
Current candidate (workspace/candidate.cu): {current}

Evaluation history (most recent last):
{history_table}

Your NOTES.md:
{notes}

Questions asked so far:
{qs}

{pending}
Continue: read candidate.cu and your notes as needed, then keep working toward the goal."""
