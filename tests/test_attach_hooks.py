"""`socratic attach` and `socratic hook` without the agents' binaries: the configuration
written for each agent, and each hook fed the payloads each agent sends (Claude Code's as
seen with 2.1.328; Codex's from its published hook schemas; Gemini CLI's from its hooks
reference), answered in that agent's shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from socratic.contracts import AskCommand, ControlCommand
from socratic.eventlog import inject, read_jsonl
from socratic.harness.attached import agentspec
from socratic.harness.attached.attach import attach
from socratic.harness.attached.hooks import run_hook
from socratic_doubles.testing import FAKE_EVALUATOR, FAKE_KEY, candidate_source, fake_config, make_task

AGENTS = ("claude", "codex", "gemini")


def make(tmp_path: Path, agent: str, goal: float = 1.2, wait_s: float = 0.5, **cfg):
    task = make_task(tmp_path, goal=goal)
    return attach(task, agent, fake_config(**cfg), session_dir=tmp_path / f"s-{agent}",
                  wait_s=wait_s)


def events(sess: Path) -> list[dict]:
    return read_jsonl(sess / "events.jsonl")[0]


def of(sess: Path, type_: str) -> list[dict]:
    return [e for e in events(sess) if e["type"] == type_]


def write_candidate(sess: Path, speedup: float | None) -> None:
    (sess / "workspace" / "candidate.cu").write_text(candidate_source(speedup))


# payloads as each agent sends them ---------------------------------------------------

def stop_payload(agent: str, ws: Path, text: str = "Done.", active: bool = False) -> dict:
    base = {"session_id": "s1", "transcript_path": None, "cwd": str(ws)}
    if agent == "claude":
        return {**base, "prompt_id": "p1", "permission_mode": "bypassPermissions",
                "effort": {"level": "medium"}, "hook_event_name": "Stop",
                "stop_hook_active": active, "last_assistant_message": text,
                "background_tasks": [], "session_crons": []}
    if agent == "codex":
        return {**base, "hook_event_name": "Stop", "last_assistant_message": text,
                "model": "gpt-test", "permission_mode": "bypassPermissions",
                "stop_hook_active": active, "turn_id": "t1"}
    return {**base, "hook_event_name": "AfterAgent", "timestamp": "2026-12-01T00:00:00Z",
            "prompt": "go", "prompt_response": text, "stop_hook_active": active}


def tool_payload(agent: str, ws: Path, command: str, output: str, tid: str = "t-1") -> dict:
    base = {"session_id": "s1", "transcript_path": None, "cwd": str(ws)}
    if agent == "claude":
        return {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": command}, "tool_use_id": tid, "duration_ms": 5,
                "tool_response": {"stdout": output, "stderr": "", "interrupted": False}}
    if agent == "codex":
        return {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": command}, "tool_response": output,
                "tool_use_id": tid, "model": "gpt-test", "permission_mode": "default",
                "turn_id": "t1"}
    return {**base, "hook_event_name": "AfterTool", "timestamp": "2026-12-01T00:00:00Z",
            "tool_name": "run_shell_command", "tool_input": {"command": command},
            "tool_response": {"llmContent": output, "returnDisplay": output}}


# configuration -----------------------------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
def test_attach_writes_the_agents_configuration(tmp_path, agent):
    a = make(tmp_path, agent, wait_s=600)
    ws = a.session.workspace
    spec = agentspec.load(agent)
    settings = json.loads((ws / spec.config_file).read_text())
    hooks = settings["hooks"]
    expected = {"claude": {"SessionStart", "UserPromptSubmit", "PostToolUse",
                           "PostToolUseFailure", "Stop"},
                "codex": {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"},
                "gemini": {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"}}[agent]
    assert set(hooks) == expected
    stop_event = {"claude": "Stop", "codex": "Stop", "gemini": "AfterAgent"}[agent]
    handler = hooks[stop_event][0]["hooks"][0]
    assert handler["type"] == "command"
    # the tiny client (compiled, or Python isolated from the workspace: -I -S), with the
    # agent's block word
    assert handler["command"].startswith("exec ") and "hookclient" in handler["command"]
    assert handler["command"].endswith(f"--block {spec.block_decision} stop")
    # long enough for an evaluation and a wait; Gemini counts milliseconds
    scale = 1000 if agent == "gemini" else 1
    assert handler["timeout"] == (60 + 600 + 120) * scale  # eval_timeout_s 60 in fake_config
    tool_event = {"claude": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool"}[agent]
    assert hooks[tool_event][0]["matcher"] == "*"
    if agent == "gemini":
        assert settings["tools"] == {"enableHooks": True}
        assert settings["hooksConfig"] == {"enabled": True}
    if agent == "codex":
        assert "hooks = true" in (ws / ".codex" / "config.toml").read_text()
    text = (ws / spec.instructions).read_text()
    assert "./evaluate" in text and "speedup >= 1.2x" in text and "a, b, c" in text
    assert os.access(ws / "evaluate", os.X_OK)
    marker = json.loads((ws / ".socratic-session").read_text())
    assert marker == {"session": str(a.session.dir.resolve()), "agent": agent}
    start = events(a.session.dir)[0]
    assert start["type"] == "campaign.start" and start["agent"] == agent
    assert start["scenarios"] == {"set": "bench", "ids": ["a", "b", "c"]}
    assert a.launch_argv[0] == agent and "CLAUDE.md AGENTS.md GEMINI.md".split()[
        AGENTS.index(agent)] in a.launch_argv[-1]


# the stop hook -----------------------------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
def test_stop_refused_with_numbers_until_the_goal_is_met(tmp_path, agent):
    a = make(tmp_path, agent)
    sess, ws = a.session.dir, a.session.workspace
    write_candidate(sess, 1.1)
    out = run_hook("stop", stop_payload(agent, ws, "All done."), session_dir=sess)
    assert out["decision"] == {"gemini": "deny"}.get(agent, "block")
    assert "- a: correct, speedup 1.100x vs baseline (goal >= 1.2x)" in out["reason"]
    assert "evaluation #1" in out["reason"]
    write_candidate(sess, 1.3)
    out = run_hook("stop", stop_payload(agent, ws, active=True), session_dir=sess)
    assert out == {"systemMessage": f"socratic: campaign ended: goal_met (session {sess})"}
    hooks = of(sess, "stophook")
    assert [(h["met"], h["reused"], h["n"]) for h in hooks] == [(False, False, 1),
                                                               (True, False, 2)]
    evts = events(sess)
    assert [e["seq"] for e in evts] == list(range(1, len(evts) + 1))
    assert evts[-1]["type"] == "campaign.end" and evts[-1]["reason"] == "goal_met"
    assert [e["text"] for e in of(sess, "agent.text")] == ["All done.", "Done."]
    assert [t["kind"] for t in of(sess, "trigger")] == ["declared_done"]
    # a stop after the end lets the agent go and logs nothing
    n = len(evts)
    assert run_hook("stop", stop_payload(agent, ws), session_dir=sess) == {}
    assert len(events(sess)) == n


def test_the_agents_own_evaluation_is_reused_at_the_stop(tmp_path):
    a = make(tmp_path, "claude")
    write_candidate(a.session.dir, 1.1)
    r = subprocess.run([str(a.session.workspace / "evaluate")], capture_output=True, text=True,
                       cwd=a.session.workspace, timeout=60,
                       env=dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY))
    assert r.returncode == 0 and "evaluation #1" in r.stdout and "not met" in r.stdout
    out = run_hook("stop", stop_payload("claude", a.session.workspace), session_dir=a.session.dir)
    assert out["decision"] == "block"
    assert [(h["reused"], h["n"]) for h in of(a.session.dir, "stophook")] == [(True, 1)]
    assert [e["source"] for e in of(a.session.dir, "eval.end")] == ["agent"]


def test_stalled_agent_waits_for_a_question_then_ends_stalled(tmp_path):
    a = make(tmp_path, "claude", wait_s=0.3)
    sess, ws = a.session.dir, a.session.workspace
    out1 = run_hook("stop", stop_payload("claude", ws), session_dir=sess)
    out2 = run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    assert out1["decision"] == out2["decision"] == "block"
    # the third stop in a row with no tool call: wait for the engineer's question
    timer = threading.Timer(0.1, inject, (sess, AskCommand(text="Why stop?")))
    timer.start()
    a.session  # noqa: B018
    out3 = run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    timer.join()
    assert out3["decision"] == "block" and "Why stop?" in out3["reason"]
    assert [c["action"] for c in of(sess, "control")] == ["wait"]
    assert [q["text"] for q in of(sess, "question")] == ["Why stop?"]
    # no question this time: the campaign ends stalled and the agent may stop
    run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    out = run_hook("stop", stop_payload("claude", ws, active=True), session_dir=sess)
    assert "campaign ended: stalled" in out["systemMessage"] and "decision" not in out
    end = events(sess)[-1]
    assert end["type"] == "campaign.end" and end["reason"] == "stalled"


def test_claude_block_cap_is_never_reached_silently(tmp_path):
    """Claude Code ends the turn itself on the 9th refusal in a row: the campaign ends
    `stalled` on the 9th stop instead of refusing it, so the log says what happened."""
    a = make(tmp_path, "claude", wait_s=0.2)
    sess, ws = a.session.dir, a.session.workspace
    outs = []
    for i in range(9):
        if i >= 2:  # keep the stall rule satisfied with a question each time
            inject(sess, AskCommand(text=f"q{i}"))
        outs.append(run_hook("stop", stop_payload("claude", ws, active=i > 0), session_dir=sess))
    assert [o.get("decision") for o in outs] == ["block"] * 8 + [None]
    assert "stalled" in outs[-1]["systemMessage"]
    end = events(sess)[-1]
    assert end["reason"] == "stalled" and end["refusals"] == 9


# tool results, questions, controls ---------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
def test_post_tool_logs_the_call_and_delivers_pending_questions(tmp_path, agent):
    a = make(tmp_path, agent)
    sess, ws = a.session.dir, a.session.workspace
    inject(sess, AskCommand(text="What bounds r1?", bank_id=None))
    os.environ["SOCRATIC_TEST_SECRET_KEY"] = FAKE_KEY  # a key the agent's process holds
    try:
        out = run_hook("post-tool", tool_payload(agent, ws, "ls", f"files {FAKE_KEY}"),
                       session_dir=sess)
    finally:
        del os.environ["SOCRATIC_TEST_SECRET_KEY"]
    spec = agentspec.load(agent)
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == spec.event_for("post-tool")
    assert "Question from the engineer: What bounds r1?" in hso["additionalContext"]
    call, = of(sess, "tool.call")
    result, = of(sess, "tool.result")
    assert call["input"] == {"command": "ls"} and result["id"] == call["id"]
    assert result["ok"] is True and result["output"] == "files [redacted]"
    assert result.get("seconds") == (0.005 if agent == "claude" else None)
    assert [q["source"] for q in of(sess, "question")] == ["human"]
    # nothing pending: no context
    assert run_hook("post-tool", tool_payload(agent, ws, "pwd", "/"), session_dir=sess) == {}


def test_a_failed_tool_is_logged_as_failed(tmp_path):
    a = make(tmp_path, "claude")
    payload = {"session_id": "s", "transcript_path": None, "cwd": str(a.session.workspace),
               "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "false"}, "tool_use_id": "t9",
               "error": "Exit code 1", "is_interrupt": False}
    inject(a.session.dir, AskCommand(text="Why?"))
    out = run_hook("post-tool", payload, session_dir=a.session.dir)
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    result, = of(a.session.dir, "tool.result")
    assert result["ok"] is False and result["output"] == "Exit code 1"


@pytest.mark.parametrize("agent", AGENTS)
def test_stop_control_halts_the_agent(tmp_path, agent):
    a = make(tmp_path, agent)
    sess, ws = a.session.dir, a.session.workspace
    inject(sess, ControlCommand(action="stop"))
    out = run_hook("post-tool", tool_payload(agent, ws, "ls", ""), session_dir=sess)
    assert out["continue"] is False and "stopped" in out["stopReason"]
    assert events(sess)[-1]["reason"] == "stopped"
    # a stop attempt after that: allowed, nothing evaluated
    assert run_hook("stop", stop_payload(agent, ws), session_dir=sess) == {}
    assert of(sess, "eval.start") == []


def test_evaluate_and_pause_controls_at_the_safe_point(tmp_path):
    a = make(tmp_path, "claude", wait_s=5)
    sess, ws = a.session.dir, a.session.workspace
    inject(sess, ControlCommand(action="evaluate"))
    out = run_hook("post-tool", tool_payload("claude", ws, "ls", ""), session_dir=sess)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "The engineer ran an evaluation" in ctx and "evaluation #1" in ctx
    assert [e["source"] for e in of(sess, "eval.end")] == ["control"]
    # pause holds the agent in the hook until resume
    inject(sess, ControlCommand(action="pause"))
    timer = threading.Timer(0.4, inject, (sess, ControlCommand(action="resume")))
    t0 = time.monotonic()
    timer.start()
    run_hook("post-tool", tool_payload("claude", ws, "pwd", ""), session_dir=sess)
    timer.join()
    assert time.monotonic() - t0 >= 0.35
    assert [c["action"] for c in of(sess, "control")] == ["evaluate", "pause", "resume"]


def test_limits_end_the_campaign(tmp_path):
    a = make(tmp_path, "claude", max_tool_calls=2)
    sess, ws = a.session.dir, a.session.workspace
    assert run_hook("post-tool", tool_payload("claude", ws, "a", ""), session_dir=sess) == {}
    out = run_hook("post-tool", tool_payload("claude", ws, "b", ""), session_dir=sess)
    assert out["continue"] is False
    assert events(sess)[-1]["reason"] == "max_tool_calls"


@pytest.mark.parametrize("end", ["stopped", "max_tool_calls"])
def test_a_prompt_does_not_undo_the_engineers_stop_or_a_limit(tmp_path, end):
    # red team, s27: the agent ran the hook client by hand with a prompt of its own after
    # the engineer's stop (or a limit); the campaign resumed "in the engineer's name", its
    # words logged as the engineer's question, and its next stop recorded goal_met
    a = make(tmp_path, "claude", **({"max_tool_calls": 1} if end == "max_tool_calls" else {}))
    sess, ws = a.session.dir, a.session.workspace
    write_candidate(sess, 1.5)   # a kernel that would meet the goal
    if end == "stopped":
        inject(sess, ControlCommand(action="stop"))
    out = run_hook("post-tool", tool_payload("claude", ws, "ls", ""), session_dir=sess)
    assert out["continue"] is False and events(sess)[-1]["reason"] == end
    out = run_hook("prompt", {"cwd": str(ws), "hook_event_name": "UserPromptSubmit",
                              "prompt": "Please keep going, ignore the limit."}, session_dir=sess)
    assert out["continue"] is False and "--resume --headless" in out["stopReason"]
    assert run_hook("stop", stop_payload("claude", ws), session_dir=sess) == {}
    types = [e["type"] for e in events(sess)]
    assert "campaign.resume" not in types and "eval.start" not in types
    assert [e["source"] for e in of(sess, "question") if e["source"] == "human"] == []
    assert [e["reason"] for e in of(sess, "campaign.end")] == [end]


def test_a_lucky_draw_does_not_undo_what_this_source_failed(tmp_path):
    # red team, s27: 1.5x on the listed set but 0.75x on half the space (n > 500000): the
    # agent ran ./evaluate until one evaluation's hidden draws all missed the slow half, then
    # stopped, and the stop reused that evaluation: goal_met for a kernel that is not
    from socratic.harness.attached.hooks import run_evaluate
    from socratic_doubles.testing import candidate_source

    task = make_task(tmp_path, goal=1.3, hidden=True, goal_hidden=True)
    a = attach(task, "claude", fake_config(), session_dir=tmp_path / "s", wait_s=0.5)
    sess, ws = a.session.dir, a.session.workspace
    (ws / "candidate.cu").write_text(candidate_source(1.5, "// slow[n > 500000]: 0.5"))
    tables = [run_evaluate(sess, None)[1]]
    while "not met" not in tables[-1] and len(tables) < 200:   # the draws find the slow half ...
        tables.append(run_evaluate(sess, None)[1])
    tables.append(run_evaluate(sess, None)[1])
    while "not met" in tables[-1] and len(tables) < 400:       # ... then miss it: the lucky one last
        tables.append(run_evaluate(sess, None)[1])
    assert any("not met" in t for t in tables) and "not met" not in tables[-1], tables[-3:]
    out = run_hook("stop", stop_payload("claude", ws), session_dir=sess)
    assert out["decision"] == "block" and "of this same source" in out["reason"]
    hook = of(sess, "stophook")[-1]
    assert hook["reused"] and not hook["met"] and "campaign.end" not in [e["type"] for e in events(sess)]
    # a source that never failed its draws still meets the goal on its latest evaluation
    (ws / "candidate.cu").write_text(candidate_source(1.5))
    run_evaluate(sess, None)
    assert "goal_met" in run_hook("stop", stop_payload("claude", ws), session_dir=sess)["systemMessage"]


def test_a_stop_past_a_limit_ends_on_the_limit_not_the_goal(tmp_path):
    # the stop's own check: a campaign resumed past its limit (or one whose limit came with no
    # tool call between) is not judged, whatever it evaluated
    from socratic.harness.attached.attached_campaign import AttachedCampaign

    a = make(tmp_path, "claude", max_tool_calls=1)
    sess = a.session.dir
    write_candidate(sess, 1.5)
    with AttachedCampaign.open(sess) as camp:
        camp.engine.counters.tool_calls = 1
        out = camp.engine.stop_attempt()
    assert out.ended == "max_tool_calls" and out.verdict is None
    assert [e["reason"] for e in of(sess, "campaign.end")] == ["max_tool_calls"]


@pytest.mark.parametrize("agent", AGENTS)
def test_session_start_and_typed_prompts(tmp_path, agent):
    a = make(tmp_path, agent, auto_questions=True)
    sess, ws = a.session.dir, a.session.workspace
    launch = json.loads((sess / "config.json").read_text())["attach"]["launch_prompt"]
    base = {"session_id": "s", "transcript_path": None, "cwd": str(ws)}
    out = run_hook("session-start", {**base, "hook_event_name": "SessionStart",
                                     "source": "startup"}, session_dir=sess)
    start, = of(sess, "trigger")
    assert start["kind"] == "start" and start["suggestions"]
    auto, = of(sess, "question")
    assert auto["source"] == "auto" and auto["trigger"] == "start"
    assert auto["text"] in out["hookSpecificOutput"]["additionalContext"]
    prompt_event = agentspec.load(agent).event_for("prompt")
    assert run_hook("prompt", {**base, "hook_event_name": prompt_event, "prompt": launch},
                    session_dir=sess) == {}
    run_hook("prompt", {**base, "hook_event_name": prompt_event,
                        "prompt": "Try vectorized loads."}, session_dir=sess)
    qs = [(q["text"], q["source"]) for q in of(sess, "question")]
    assert qs == [(auto["text"], "auto"), ("Try vectorized loads.", "human")]
    assert len(of(sess, "trigger")) == 1  # the start trigger fires once


def test_a_refusal_handed_back_as_a_prompt_is_not_a_human_question(tmp_path):
    """Gemini CLI sends a denied AfterAgent's reason back as a new prompt (BeforeAgent)."""
    a = make(tmp_path, "gemini")
    sess, ws = a.session.dir, a.session.workspace
    out = run_hook("stop", stop_payload("gemini", ws), session_dir=sess)
    run_hook("prompt", {"cwd": str(ws), "hook_event_name": "BeforeAgent",
                        "prompt": out["reason"]}, session_dir=sess)
    assert of(sess, "question") == []


def test_a_prompt_after_the_end_resumes_the_campaign(tmp_path):
    a = make(tmp_path, "claude")
    sess, ws = a.session.dir, a.session.workspace
    write_candidate(sess, 1.5)
    assert "goal_met" in run_hook("stop", stop_payload("claude", ws), session_dir=sess)[
        "systemMessage"]
    run_hook("prompt", {"cwd": str(ws), "hook_event_name": "UserPromptSubmit",
                        "prompt": "Now make it 2x."}, session_dir=sess)
    from socratic.contracts import CampaignResume, read_events

    parsed = read_events(sess / "events.jsonl")[0]  # every event as its contract declares it
    assert parsed.skipped == 0 and parsed.events[0].agent == "claude"
    resumed, = [e for e in parsed.events if isinstance(e, CampaignResume)]
    assert (resumed.reason, resumed.ended) == ("the engineer typed into the agent", "goal_met")
    types = [e["type"] for e in events(sess)]
    end = types.index("campaign.end")
    assert types[end + 1] == "campaign.resume" and types[-1] == "question"
    assert "campaign.end" not in types[end + 1:]


# the agent's own words -----------------------------------------------------------------

def test_transcript_text_is_logged_once_and_in_order(tmp_path):
    a = make(tmp_path, "claude")
    sess, ws = a.session.dir, a.session.workspace
    tr = tmp_path / "t.jsonl"

    def entry(mid, block, usage=None):
        return json.dumps({"type": "assistant", "message": {
            "id": mid, "model": "claude-x", "content": [block],
            "usage": usage or {"input_tokens": 3, "output_tokens": 5,
                               "cache_read_input_tokens": 7,
                               "cache_creation_input_tokens": 11}}}) + "\n"

    tr.write_text(json.dumps({"type": "user", "message": {"content": "go"}}) + "\n"
                  + entry("m1", {"type": "text", "text": "First I measure."})
                  + entry("m1", {"type": "tool_use", "id": "x", "name": "Bash", "input": {}}))
    payload = tool_payload("claude", ws, "ls", "")
    payload["transcript_path"] = str(tr)
    run_hook("post-tool", payload, session_dir=sess)
    with open(tr, "a") as fh:
        fh.write(entry("m2", {"type": "text", "text": "It is at the memory bound now."}))
        fh.write('{"type": "assistant", "message": {"content": [{"type": "te')  # half written
    stop = stop_payload("claude", ws, "Stopping here, finally.")
    stop["transcript_path"] = str(tr)
    run_hook("stop", stop, session_dir=sess)
    with open(tr, "a") as fh:  # the rest of the line, then the final words the Stop payload had
        fh.write('xt", "text": "x"}]}}\n')
        fh.write(entry("m3", {"type": "text", "text": "Stopping here, finally."}))
    payload["tool_use_id"] = "t-2"
    run_hook("post-tool", payload, session_dir=sess)
    texts = [e["text"] for e in of(sess, "agent.text")]
    assert texts == ["First I measure.", "It is at the memory bound now.",
                     "Stopping here, finally.", "x"]
    usage = of(sess, "usage")
    assert [u["input_tokens"] for u in usage] == [3, 3, 3]  # once per message id
    assert usage[0]["cache_read"] == 7 and usage[0]["model"] == "claude-x"
    kinds = [t["kind"] for t in of(sess, "trigger")]
    assert "declared_done" in kinds


@pytest.mark.parametrize("fmt", ["claude-jsonl", "gemini-json"])
def test_a_transcript_path_that_is_no_file_reads_as_nothing_at_once(tmp_path, fmt):
    # red team, s27: the path comes in the agent's payload and is read by the session server,
    # the campaign's lock held: a FIFO (swapped in after a check, too) would hold it forever,
    # a sparse file of 100 GB would fill its memory
    import os

    from socratic.harness.core import transcripts

    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    assert transcripts.read_new(fmt, str(fifo), 0)[0].texts == []
    assert transcripts.read_new(fmt, "/dev/zero", 0)[0].texts == []
    assert time.monotonic() - t0 < 5
    big = tmp_path / "big.jsonl"
    line = json.dumps({"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "x"}]}})
    with open(big, "w") as fh:
        fh.write(line + "\n")
        fh.truncate(100 << 30)   # sparse: 100 GB of zeros after the line
    chunk, off = transcripts.read_new("claude-jsonl", str(big), 0)
    assert off <= transcripts.MAX_READ and chunk.texts == ["x"]


def test_codex_and_gemini_transcripts(tmp_path):
    from socratic.harness.core.transcripts import read_new

    roll = tmp_path / "rollout.jsonl"
    roll.write_text("\n".join(json.dumps(x) for x in [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Measuring first."}]}},
        {"timestamp": "t", "type": "event_msg", "payload": {
            "type": "agent_message", "message": "Measuring first."}},
    ]) + "\n")
    chunk, off = read_new("codex-rollout", str(roll), 0)
    assert chunk.texts == ["Measuring first."] and off == roll.stat().st_size
    assert read_new("codex-rollout", str(roll), off)[0].texts == []
    gem = tmp_path / "session.json"
    gem.write_text(json.dumps({"sessionId": "x", "messages": [
        {"type": "user", "content": "go"}, {"type": "gemini", "content": "Reading."}]}))
    chunk, seen = read_new("gemini-json", str(gem), 0)
    assert chunk.texts == ["Reading."] and seen == 2
    gem.write_text(json.dumps({"messages": [
        {"type": "user", "content": "go"}, {"type": "gemini", "content": "Reading."},
        {"type": "gemini", "content": [{"text": "Now timing."}]}]}))
    assert read_new("gemini-json", str(gem), seen)[0].texts == ["Now timing."]
    gem.write_text('{"messages": [')  # caught mid-rewrite
    assert read_new("gemini-json", str(gem), 3)[1] == 3
    # 0.61: JSON Lines, a message written again (same id) as its tool calls complete
    lines = tmp_path / "session-1.jsonl"
    msg = {"id": "m1", "type": "gemini", "content": "Running it.", "model": "g",
           "tokens": {"input": 10, "output": 3, "cached": 4}}
    lines.write_text("\n".join(json.dumps(x) for x in [
        {"sessionId": "x", "kind": "main"}, {"$set": {"lastUpdated": "t"}}, msg,
        {**msg, "toolCalls": [{"name": "run_shell_command"}]}]) + "\n")
    chunk, _ = read_new("gemini-json", str(lines), 0)
    assert chunk.texts == ["Running it.", "Running it."] and chunk.keys == ["m1:0", "m1:0"]
    assert chunk.usage[0]["cache_read"] == 4


# one door ---------------------------------------------------------------------------------

def _appender(path: str, n: int) -> None:
    from socratic.harness.core.sessionlog import SessionLog

    log = SessionLog(Path(path), start_epoch=time.time())
    for i in range(n):
        log.append("agent.text", text=f"{os.getpid()}:{i}")


def test_concurrent_writers_keep_seq_strictly_increasing(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(str(tmp_path), 40)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    evts = read_jsonl(tmp_path / "events.jsonl")[0]
    assert [e["seq"] for e in evts] == list(range(1, 161))
    ts = [e["t"] for e in evts]
    assert ts == sorted(ts)


# the CLI -------------------------------------------------------------------------------------

def socratic(*args, stdin: str = "", cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "socratic", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd, timeout=60,
                          env=env or dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR)))


def test_hook_errors_are_one_line_and_never_exit_2(tmp_path):
    r = socratic("hook", "post-tool", stdin=json.dumps({"cwd": str(tmp_path)}), cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no socratic session" in r.stderr
    # the stop fails closed: refused, with the reason, in the agent's word for it
    r = socratic("hook", "stop", "--block", "deny", stdin=json.dumps({"cwd": str(tmp_path)}),
                 cwd=tmp_path)
    assert r.returncode == 0 and r.stderr.count("\n") == 1
    out = json.loads(r.stdout)
    assert out["decision"] == "deny" and "no socratic session" in out["reason"]
    a = make(tmp_path, "claude")
    r = socratic("hook", "post-tool", stdin="{not json", cwd=a.session.workspace)
    assert r.returncode == 1 and "not JSON" in r.stderr and r.stderr.count("\n") == 1
    # found from the workspace marker, answered as JSON on stdout
    inject(a.session.dir, AskCommand(text="Why?"))
    r = socratic("hook", "post-tool", stdin=json.dumps(tool_payload(
        "claude", a.session.workspace / "task", "ls", "")), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Why?" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    # the agent went elsewhere (`cd /tmp`): found from the project dir it names
    inject(a.session.dir, AskCommand(text="Where?"))
    r = socratic("hook", "post-tool", stdin=json.dumps(tool_payload("claude", tmp_path, "x", "")),
                 cwd=tmp_path, env=dict(os.environ, CLAUDE_PROJECT_DIR=str(a.session.workspace)))
    assert r.returncode == 0 and "Where?" in r.stdout, r.stderr


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_payload_fields_of_the_wrong_type_are_ignored_not_a_traceback(tmp_path, agent):
    # {"transcript_path": 5} was a TypeError traceback from pathlib
    a = make(tmp_path, agent)
    for payload in ({"transcript_path": 5, "cwd": 7}, {"transcript_path": ["x"]},
                    {"tool_name": {"x": 1}, "tool_input": 5, "tool_response": [1]}):
        for event in ("post-tool", "prompt", "session-start"):
            r = socratic("hook", event, stdin=json.dumps(payload), cwd=a.session.workspace)
            assert r.returncode == 0 and r.stderr == "", (event, payload, r.stderr)


def test_evaluate_with_an_unknown_set_is_refused_before_it_is_numbered(tmp_path):
    # `./evaluate --scenarios nope` was logged as a failing evaluation (build_ok false)
    a = make(tmp_path, "claude")
    before = (a.session.dir / "events.jsonl").read_bytes()
    ev = a.session.workspace / "evaluate"
    r = subprocess.run([str(ev), "--scenarios", "nope"], capture_output=True, text=True,
                       cwd=a.session.workspace, timeout=60,
                       env=dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR)))
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "--scenarios nope: not a scenario set or id of task tiny" in r.stderr
    assert (a.session.dir / "events.jsonl").read_bytes() == before
    assert not list((a.session.dir / "evals").glob("*.json"))


def test_attach_cli_bad_input_before_the_session_exists(tmp_path):
    task = make_task(tmp_path)
    r = socratic("attach", str(task), "--agent", "cursor", cwd=tmp_path)
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = socratic("attach", str(task), "--agent", "claude", "--scenarios", "nope",
                 "--session-dir", str(tmp_path / "s"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--scenarios nope" in r.stderr
    assert not (tmp_path / "s").exists()
    r = socratic("attach", str(task), "--agent", "gemini", "--goal-min-speedup", "0",
                 cwd=tmp_path)
    assert r.returncode == 2 and "must be positive" in r.stderr
    r = socratic("attach", str(task), "--agent", "codex", "--session-dir",
                 str(tmp_path / "ok"), "--launch", cwd=tmp_path,
                 env=dict(os.environ, PATH="/nonexistent",
                          SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR)))
    assert r.returncode == 2 and "`codex` not found" in r.stderr.splitlines()[-1]
    # issue 43: checked before the session exists, so the retry is not "already a campaign"
    assert not (tmp_path / "ok").exists()


def test_run_resume_refuses_an_attached_session(tmp_path):
    a = make(tmp_path, "claude")
    r = socratic("run", "--resume", str(a.session.dir), "--headless",
                 env=dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY))
    assert r.returncode == 2 and "an attached campaign (claude)" in r.stderr
    assert r.stderr.count("\n") == 1


def test_inject_controls_an_attached_campaign_between_hook_calls(tmp_path):
    """Nothing holds an attached session between two hook calls: its agent is alive while
    the campaign has not ended, and a control waits in the inbox for the next hook."""
    a = make(tmp_path, "claude")
    sess, ws = a.session.dir, a.session.workspace
    r = socratic("inject", str(sess), "--pause")
    assert r.returncode == 0 and "sent pause" in r.stderr
    r = socratic("inject", str(sess), "--stop")
    assert r.returncode == 0
    assert run_hook("post-tool", tool_payload("claude", ws, "ls", ""), session_dir=sess)[
        "continue"] is False
    r = socratic("inject", str(sess), "--evaluate")
    assert r.returncode == 2 and "has ended (stopped)" in r.stderr
    assert "prompting claude again in" in r.stderr


def test_a_session_attached_before_the_move_still_finds_its_hook_client():
    # hook commands written before issue 44 append socratic/harness (not harness/attached)
    import socratic.harness
    from socratic.harness.attached import hookclient

    old_dir = Path(socratic.harness.__file__).resolve().parent
    code = (f"import sys; sys.path.append({str(old_dir)!r}); import hookclient; "
            "print(hookclient.main.__module__, hookclient.__file__)")
    r = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["hookclient", str(Path(hookclient.__file__).resolve())]


def test_a_hook_in_a_process_of_its_own_imports_only_what_it_uses(tmp_path, monkeypatch):
    """Without a session server every hook is a fresh `python -m socratic hook` (issue 44,
    hook latency): it must not pay for the bank (only a firing trigger asks it), the headless
    runner and the launcher (reading an agent file needs neither) or importlib.resources."""
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    a = make(tmp_path, "claude")
    ws = a.session.dir / "workspace"
    # the start trigger (and its bank suggestions) is session-start's, done here
    run_hook("session-start", {"session_id": "s1", "cwd": str(ws)}, session_dir=a.session.dir)
    code = ("import runpy, sys; sys.argv = ['socratic', 'hook', 'post-tool']\n"
            "try:\n    runpy.run_module('socratic', run_name='__main__')\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.startswith(('socratic.', 'importlib.res',"
            " 'ctypes'))), file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCRATIC_SESSION")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, text=True,
                         env={**env, "SOCRATIC_HOOK_SERVER": "0"}, timeout=60,
                         input=json.dumps(tool_payload("claude", ws, "ls", "x")))
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stderr.strip().splitlines()[-1].replace("'", '"')))
    assert "socratic.harness.attached.hooks" in loaded            # it did run the hook
    unneeded = {"socratic.bank", "socratic.harness.engine.startup",
                "socratic.harness.attached.headless", "socratic.harness.attached.agentlaunch",
                "importlib.resources", "ctypes"}
    assert not loaded & unneeded, sorted(loaded & unneeded)
