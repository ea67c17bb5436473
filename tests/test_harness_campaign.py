"""Campaigns against the fake Messages API (real anthropic client, real SSE) and the fake
evaluator: the tool loop, the stop hook, each trigger, questions, control, retries, limits,
handoff, task-file freezing, and the API key kept out of everything."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from socratic.contracts import AskCommand, ControlCommand
from socratic.eventlog import inject, read_jsonl
from socratic.harness.api.campaign import Campaign
from socratic.harness.core.config import TriggerConfig
from socratic_doubles.fakeapi import FakeAnthropic, last_user_text
from socratic_doubles.testing import FAKE_KEY, candidate_source, fake_config, make_task


def suggester(kind, asked, recent):
    return [(f"{kind}.q{i}", f"Question {i} for {kind}?") for i in range(3)]


def make(tmp_path, api, goal=1.2, **cfg):
    task = make_task(tmp_path, goal=goal)
    return Campaign.create(task, fake_config(**cfg), session_dir=tmp_path / "s",
                           api_key=FAKE_KEY, base_url=api.url, suggester=suggester)


def events(c_or_dir):
    d = c_or_dir.session.dir if hasattr(c_or_dir, "session") else Path(c_or_dir)
    return read_jsonl(d / "events.jsonl")[0]


def of(evts, type_):
    return [e for e in evts if e["type"] == type_]


def write(speed, *extra):
    return ("write_file", {"path": "candidate.cu", "content": candidate_source(speed, *extra)})


def run_script(tmp_path, script, **cfg):
    with FakeAnthropic(script) as api:
        c = make(tmp_path, api, **cfg)
        reason = c.run()
    return c, reason, api, events(c)


def test_tool_loop_and_stop_hook_reject_then_goal_met(tmp_path):
    script = [
        {"text": "Evaluating the baseline.", "tools": [("evaluate", {})]},
        {"text": "A first change.", "tools": [write(1.1), ("evaluate", {})]},
        {"text": "That should do."},                                 # stop: 1.1 < 1.2
        {"text": "More work.", "tools": [write(1.3)]},
        {"text": "Finished."},                                       # stop: fresh evaluation
    ]
    c, reason, api, ev = run_script(tmp_path, script)
    assert reason == "goal_met"
    types = [e["type"] for e in ev]
    assert types[0] == "campaign.start" and types[-1] == "campaign.end"
    assert [e["seq"] for e in ev] == list(range(1, len(ev) + 1))
    hooks = of(ev, "stophook")
    assert [h["met"] for h in hooks] == [False, True]
    assert hooks[0]["reused"] is True and hooks[0]["n"] == 2           # same sha: no re-run
    assert {f["scenario"] for f in hooks[0]["failing"]} == {"a", "b", "c"}
    assert hooks[0]["failing"][0]["speedup"] == 1.1 and hooks[0]["failing"][0]["goal"] == 1.2
    assert hooks[1]["reused"] is False
    assert of(ev, "eval.start")[-1]["source"] == "stophook"
    assert of(ev, "campaign.end")[0]["reason"] == "goal_met"
    # the rejection message names each failing scenario with its numbers
    rejection = last_user_text(api.requests[3])
    assert "goal is not met" in rejection and "- a: correct, speedup 1.100x" in rejection
    assert "goal >= 1.2x" in rejection
    # tool results come back as tool_result blocks for the right ids
    msgs = api.requests[1]["messages"]
    use = msgs[-2]["content"][1]
    assert msgs[-2]["content"][0]["type"] == "text" and use["type"] == "tool_use"
    tr = msgs[-1]["content"][0]
    assert tr["type"] == "tool_result" and tr["tool_use_id"] == use["id"]
    assert "evaluation #1" in tr["content"] and "summary: 3/3 correct" in tr["content"]
    assert len(of(ev, "eval.scenario")) == 9 and (c.session.dir / "evals/0003.json").exists()
    # streaming text was logged, usage carries a cost estimate
    assert "".join(e["text"] for e in of(ev, "agent.text")).startswith("Evaluating the baseline.")
    u = of(ev, "usage")
    assert len(u) == 5 and all(x["cost_usd"] > 0 for x in u) and u[1]["cache_read"] > 0
    assert (c.session.workspace / "candidate.cu").read_text() == candidate_source(1.3)


def test_prompt_caching_and_system_prompt(tmp_path):
    c, reason, api, ev = run_script(tmp_path, [{"text": "hi", "tools": [("evaluate", {})]},
                                               {"tools": [write(2.0)]}, {"text": "done"}])
    body = api.requests[0]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["model"] == "claude-sonnet-4-6"
    sys_text = body["system"][0]["text"]
    assert "speedup >= 1.2x" in sys_text and "NOTES.md" in sys_text and "CUTLASS" in sys_text
    # only the newest user message carries the message breakpoint
    later = api.requests[2]["messages"]
    marks = [b for m in later for b in m["content"] if isinstance(b, dict) and "cache_control" in b]
    assert len(marks) == 1


def test_start_trigger_and_auto_question_first_message(tmp_path):
    c, reason, api, ev = run_script(tmp_path, [{"tools": [write(1.5)]}, {"text": "done"}],
                                    auto_questions=True)
    trig = of(ev, "trigger")[0]
    assert trig["kind"] == "start" and trig["suggestions"] == ["start.q0", "start.q1", "start.q2"]
    q = of(ev, "question")[0]
    assert q["source"] == "auto" and q["bank_id"] == "start.q0" and q["trigger"] == "start"
    assert "Question 0 for start?" in last_user_text(api.requests[0])


def test_human_mode_trigger_does_not_block(tmp_path):
    c, reason, api, ev = run_script(tmp_path, [{"tools": [write(1.5)]}, {"text": "done"}])
    assert of(ev, "trigger")[0]["kind"] == "start" and of(ev, "question") == []
    assert reason == "goal_met"


def test_plateau_trigger(tmp_path):
    script = [{"tools": [("evaluate", {})]}] + [
        {"tools": [write(1.0 + 0.001 * i), ("evaluate", {})]} for i in range(1, 4)] + [
        {"tools": [write(1.5)]}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script, auto_questions=True,
                                    triggers=TriggerConfig(plateau_window=3))
    kinds = [e["kind"] for e in of(ev, "trigger")]
    assert kinds.count("plateau") == 1
    t = [e for e in of(ev, "trigger") if e["kind"] == "plateau"][0]
    assert "3 evaluations without a 1% gain" in t["reason"]
    # the auto question is delivered after the evaluation that fired it
    assert any("Question 0 for plateau?" in last_user_text(r) for r in api.requests)


def test_suspicious_gain_trigger(tmp_path):
    script = [{"tools": [("evaluate", {})]}, {"tools": [write(1.6), ("evaluate", {})]},
              {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    t = [e for e in of(ev, "trigger") if e["kind"] == "suspicious_gain"]
    assert len(t) == 1 and "+60%" in t[0]["reason"]


def test_suspicious_gain_bound(tmp_path):
    script = [{"tools": [write(1.3, "// bound_fraction: 0.8"), ("evaluate", {})]},
              {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    t = [e for e in of(ev, "trigger") if e["kind"] == "suspicious_gain"]
    assert t and "of its bound" in t[0]["reason"]                    # 0.8 * 1.3 >= 0.9


def test_correctness_failure_trigger_after_explanation(tmp_path):
    script = [
        {"tools": [write(1.5, "// incorrect: b"), ("evaluate", {})]},
        {"text": "Scenario b fails because the tail lanes past the row end are not guarded; "
                 "I will add the bounds check.", "tools": [write(1.5)]},
        {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script, auto_questions=True)
    t = [e for e in of(ev, "trigger") if e["kind"] == "correctness_failure"]
    assert len(t) == 1 and "1 scenario(s) incorrect (b)" in t[0]["reason"]
    assert "tail lanes" in t[0]["reason"]
    # fired on the explanation, not on the failing evaluation itself
    seqs = {e["seq"]: e for e in ev}
    text_seq = [e["seq"] for e in of(ev, "agent.text") if "tail lanes" in e["text"]][0]
    assert t[0]["seq"] > text_seq
    q = [e for e in of(ev, "question") if e.get("trigger") == "correctness_failure"]
    assert q and q[0]["source"] == "auto"
    # delivered after the pending tool result of that response (the safe point)
    last = api.requests[2]["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "correctness_failure" in last[-1]["text"]
    assert reason == "goal_met" and seqs


def test_declared_done_trigger_on_unmet_stop(tmp_path):
    script = [{"tools": [write(1.1)]}, {"text": "Finished."}, {"tools": [write(1.4)]},
              {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script, auto_questions=True)
    t = [e for e in of(ev, "trigger") if e["kind"] == "declared_done"]
    assert len(t) == 1 and "stop attempt with the goal unmet" in t[0]["reason"]
    # the question rides with the stop-hook message
    msg = last_user_text(api.requests[2])
    assert "goal is not met" in msg and "Question 0 for declared_done?" in msg


def test_declared_done_trigger_on_text(tmp_path):
    script = [{"text": "The kernel is memory-bound and cannot get any faster.",
               "tools": [write(1.4)]}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    t = [e for e in of(ev, "trigger") if e["kind"] == "declared_done"]
    assert len(t) == 1 and "declares a limit" in t[0]["reason"]


def _wait_for(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def test_inbox_question_delivered_at_the_safe_point(tmp_path):
    holder = {}

    def ask_while_streaming(body):
        # the engineer types a question while the model is answering
        inject(holder["dir"], AskCommand(text="Which bound applies here?", bank_id="bound.x"))
        return {"text": "Running a command.", "tools": [("bash", {"command": "echo hi"})]}

    with FakeAnthropic([ask_while_streaming, {"tools": [write(1.5)]}, {"text": "done"}]) as api:
        c = make(tmp_path, api)
        holder["dir"] = c.session.dir
        assert c.run() == "goal_met"
    ev = events(c)
    q = of(ev, "question")[0]
    assert q["source"] == "human" and q["bank_id"] == "bound.x" and q.get("trigger") is None
    result_seq = of(ev, "tool.result")[0]["seq"]
    assert q["seq"] > result_seq                               # after the pending tool result
    content = api.requests[1]["messages"][-1]["content"]
    assert content[0]["type"] == "tool_result" and "hi" in content[0]["content"]
    assert "Which bound applies here?" in content[1]["text"]
    assert "the engineer" in content[1]["text"]


def test_pause_resume_stop(tmp_path):
    holder = {}

    def pause_now(body):
        inject(holder["dir"], ControlCommand(action="pause"))
        return {"tools": [("bash", {"command": "echo one"}), ("bash", {"command": "echo two"})]}

    script = [pause_now, {"tools": [("bash", {"command": "echo three"})]},
              {"tools": [("bash", {"command": "sleep 0.2; echo four"})]},
              {"tools": [("bash", {"command": "echo five"})]}]
    with FakeAnthropic(script) as api:
        c = make(tmp_path, api)
        holder["dir"] = c.session.dir
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("reason", c.run()))
        th.start()
        assert _wait_for(lambda: len(of(events(c), "tool.result")) >= 1)
        time.sleep(0.3)
        ev = events(c)
        # paused after the current tool call: `two` has not run, no new request went out
        assert [e["action"] for e in of(ev, "control")] == ["pause"]
        assert len(of(ev, "tool.result")) == 1 and len(api.requests) == 1
        inject(c.session.dir, ControlCommand(action="resume"))
        assert _wait_for(lambda: len(of(events(c), "tool.call")) >= 4)
        inject(c.session.dir, ControlCommand(action="stop"))
        th.join(10)
        assert not th.is_alive()
    ev = events(c)
    assert out["reason"] == "stopped"
    assert [e["action"] for e in of(ev, "control")] == ["pause", "resume", "stop"]
    assert of(ev, "campaign.end")[0]["reason"] == "stopped"
    assert "five" not in json.dumps(of(ev, "tool.result"))


def test_control_evaluate(tmp_path):
    holder = {}

    def eval_now(body):
        inject(holder["dir"], ControlCommand(action="evaluate"))
        return {"tools": [("bash", {"command": "true"})]}

    with FakeAnthropic([eval_now, {"tools": [write(1.5)]}, {"text": "done"}]) as api:
        c = make(tmp_path, api)
        holder["dir"] = c.session.dir
        c.run()
    ev = events(c)
    assert of(ev, "eval.start")[0]["source"] == "control"
    assert "The engineer ran an evaluation" in last_user_text(api.requests[1])


def test_api_errors_retried_and_logged(tmp_path):
    script = [{"status": 429, "retry_after": 0}, {"status": 529}, {"status": 500},
              {"stream_error": "overloaded_error", "text": "partial"},
              {"tools": [write(1.5)]}, {"status": 529}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    retries = of(ev, "api.retry")
    assert len(retries) == 5 and reason == "goal_met"
    assert "RateLimitError" in retries[0]["error"] and "OverloadedError" in retries[1]["error"]
    assert "overloaded_error" in retries[3]["error"]


def test_connection_errors_retried(tmp_path):
    with FakeAnthropic([{"tools": [write(1.5)]}, {"text": "done"}]) as api:
        c = make(tmp_path, api)
        url = api.url
    # the server is gone: the first attempts fail to connect, then it comes back
    from socratic.harness.api.agent import Agent

    calls = {"n": 0}
    server = FakeAnthropic([{"tools": [write(1.5)]}, {"text": "done"}])

    def sleep(s):
        calls["n"] += 1
        if calls["n"] == 2:
            server.start()
            c.agent.client = c.agent.client.with_options(base_url=server.url)

    c.agent = Agent(c.config, FAKE_KEY, base_url=url, on_retry=c._on_retry, sleep=sleep)
    try:
        assert c.run() == "goal_met"
    finally:
        server.stop()
    retries = of(events(c), "api.retry")
    assert len(retries) == 2 and "APIConnectionError" in retries[0]["error"]


def test_fatal_api_error_ends_cleanly(tmp_path):
    c, reason, api, ev = run_script(tmp_path, [{"status": 401}])
    assert reason == "api_error" and of(ev, "campaign.end")[0]["reason"] == "api_error"


def test_limits(tmp_path):
    many = [{"tools": [("bash", {"command": "true"}), ("bash", {"command": "true"})]}] * 10
    c, reason, _, ev = run_script(tmp_path, list(many), max_tool_calls=3)
    assert reason == "max_tool_calls" and len(of(ev, "tool.call")) == 3
    c, reason, _, ev = run_script(tmp_path / "b", list(many), max_turns=2)
    assert reason == "max_turns" and len(of(ev, "usage")) == 2
    c, reason, _, ev = run_script(tmp_path / "c", [{"delay": 0.2, "tools": [
        ("bash", {"command": "true"})]}] * 10, max_minutes=0.3 / 60)
    assert reason == "max_minutes" and of(ev, "campaign.end")[0]["reason"] == "max_minutes"


def test_repeated_empty_stops_end_headless(tmp_path):
    c, reason, api, ev = run_script(tmp_path, [{"text": "done"}] * 5)
    assert reason == "stalled" and len(of(ev, "stophook")) == 3
    assert len(of(ev, "eval.start")) == 1                       # later stops reuse it


def test_empty_stops_wait_for_a_human_when_attached(tmp_path):
    with FakeAnthropic([{"text": "done"}] * 3 + [{"tools": [write(1.5)]}, {"text": "ok"}]) as api:
        c = make(tmp_path, api, wait_for_human=True)
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("r", c.run()))
        th.start()
        assert _wait_for(lambda: any(e.get("action") == "wait" for e in of(events(c), "control")))
        inject(c.session.dir, AskCommand(text="What limits you?"))
        th.join(10)
    assert out["r"] == "goal_met"
    assert "What limits you?" in last_user_text(api.requests[3])


def test_a_wait_for_a_human_ends_at_max_minutes(tmp_path):
    # it waited forever (benchmarks/fleet_demo.py's human campaign)
    with FakeAnthropic([{"text": "done"}] * 3) as api:
        c = make(tmp_path, api, wait_for_human=True, max_minutes=1.5 / 60)
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("r", c.run()), daemon=True)
        th.start()
        th.join(30)
    assert out.get("r") == "max_minutes"
    assert any(e.get("action") == "wait" for e in of(events(c), "control"))


def test_context_handoff(tmp_path):
    script = [{"text": "Noting things.", "tools": [("bash", {"command": "echo keep-me"})]},
              {"tools": [write(1.5)]}, {"text": "done"}]
    with FakeAnthropic(script) as api:
        c = make(tmp_path, api, context_limit_tokens=200)
        (c.session.workspace / "NOTES.md").write_text("# Notes\nTried vector loads.\n")
        reason = c.run()
    ev = events(c)
    h = of(ev, "context.handoff")
    assert h and h[0]["ctx"] == 1
    seed = api.requests[1]["messages"]
    assert len(seed) == 1 and seed[0]["role"] == "user"
    text = seed[0]["content"][0]["text"]
    assert "fresh context" in text and "Tried vector loads." in text and "keep-me" in text
    assert "Goal:" in text and reason == "goal_met"


def test_task_files_frozen_and_edits_reported(tmp_path):
    script = [{"tools": [("bash", {"command": "chmod u+w task/task.toml ../task/task.toml; "
                                                "echo 'min_speedup = 0.1' >> task/task.toml; "
                                                "echo '# hacked' >> ../task/task.toml"}),
                         ("evaluate", {})]},
              {"tools": [write(1.5)]}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    out = of(ev, "tool.result")[1]["output"]
    assert "task/task.toml in the workspace differ" in out
    assert "frozen task copy was modified" in out and "restored" in out
    assert "# hacked" not in (c.session.task_dir / "task.toml").read_text()
    start = of(ev, "campaign.start")[0]
    assert set(start["task_hashes"]) == {"task.toml", "baseline.cu", "reference.cu"}
    assert reason == "goal_met" and of(ev, "stophook")[-1]["goal"]["min_speedup"] == 1.2


def test_evaluator_failures_do_not_kill_the_campaign(tmp_path):
    script = [{"tools": [write(1.5, "// build-error"), ("evaluate", {})]},
              {"text": "The build failed on a missing semicolon in my new code, fixing it.",
               "tools": [write(1.5)]},
              {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    out = of(ev, "tool.result")[1]["output"]
    assert "build: FAILED" in out and "expected a ';'" in out
    assert [e["kind"] for e in of(ev, "trigger")][-1] == "correctness_failure"
    assert reason == "goal_met"
    c2, reason2, _, ev2 = run_script(tmp_path / "x", [{"tools": [("evaluate", {})]},
                                                      {"text": "done"}] * 3,
                                     evaluator=["/nonexistent/evaluator"])
    assert "could not start the evaluator" in of(ev2, "tool.result")[0]["output"]
    assert reason2 == "stalled"


def test_key_never_logged(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-123456789")
    leak = tmp_path / "leak.txt"
    leak.write_text(FAKE_KEY)
    script = [{"text": "Looking around.", "tools": [
        ("bash", {"command": "env; echo $ANTHROPIC_API_KEY; cat /proc/$PPID/environ | tr '\\0' '\\n'"}),
        ("bash", {"command": f"cat {leak}"}),
        ("write_file", {"path": "k.txt", "content": "x"})]},
        {"status": 401, "message": f"invalid x-api-key {FAKE_KEY}"}]
    c, reason, api, ev = run_script(tmp_path, script)
    assert api.headers[0]["authorization"] == f"Bearer {FAKE_KEY}"   # it was used ...
    for p in c.session.dir.rglob("*"):                                # ... and never written
        if p.is_file():
            data = p.read_bytes()
            assert FAKE_KEY.encode() not in data, p
            assert b"tok-123456789" not in data, p
    outs = json.dumps(of(ev, "tool.result"))
    assert "[redacted]" in outs
    assert FAKE_KEY not in json.dumps(api.requests)                   # nor sent to the model


def test_bank_suggestions_follow_the_gpu(tmp_path, monkeypatch):
    from socratic import bank
    from socratic.harness.api import campaign as campaign_mod
    from socratic.harness.engine.startup import bank_suggester

    archs = {e.id: e.arch for e in bank.load_bank().entries}

    def seen(cc):
        s = bank_suggester(False, cc)
        got = set()
        for kind in ("start", "plateau", "declared_done", "suspicious_gain",
                     "correctness_failure"):
            got |= {archs[i] for i, _ in s(kind, [], "tensor core mma tcgen05 wgmma")}
        return got - {None}

    assert seen("10.0") == {"blackwell"}
    assert seen("9.0") == seen(None) == {"hopper"}
    asked = []                               # a campaign passes the GPU it runs on
    monkeypatch.setattr(campaign_mod, "gpu_info", lambda: {"name": "B200", "cc": "10.0"})
    monkeypatch.setattr(campaign_mod, "bank_suggester",
                        lambda has_cmp, cc=None: asked.append(cc))
    Campaign.create(make_task(tmp_path), fake_config(), session_dir=tmp_path / "s",
                    api_key=FAKE_KEY, base_url="http://127.0.0.1:9")
    assert asked == ["10.0"]


def test_a_malformed_user_bank_file_is_bad_input(tmp_path, monkeypatch):
    from socratic.errors import InputError

    bad = tmp_path / "mine.toml"
    bad.write_text("[[entry]]\nid = \"x\"\n")
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(bad))
    with pytest.raises(InputError, match="mine.toml:1: entry 'x': missing field"):
        Campaign.create(make_task(tmp_path), fake_config(auto_questions=True),
                        session_dir=tmp_path / "s", api_key=FAKE_KEY,
                        base_url="http://127.0.0.1:9")
    assert not (tmp_path / "s").exists()      # was: a campaign that never suggests anything


def test_real_bank_suggestions(tmp_path):
    from socratic import bank
    if not all(hasattr(bank, n) for n in ("load_bank", "SuggestContext", "suggest")):
        pytest.skip("bank API not available")
    from socratic.harness.engine.startup import bank_suggester

    s = bank_suggester(False)
    assert s is not None
    with FakeAnthropic([{"tools": [write(1.5)]}, {"text": "done"}]) as api:
        task = make_task(tmp_path)
        c = Campaign.create(task, fake_config(auto_questions=True), session_dir=tmp_path / "s",
                            api_key=FAKE_KEY, base_url=api.url)
        c.run()
    ev = events(c)
    trig = of(ev, "trigger")[0]
    assert trig["kind"] == "start" and trig["suggestions"]
    q = of(ev, "question")[0]
    assert q["bank_id"] == trig["suggestions"][0] and q["source"] == "auto"
    assert bank.load_bank().get(q["bank_id"]).text == q["text"]


def test_key_redacted_from_evaluator_results(tmp_path):
    # a candidate can smuggle text into its build log (an #include of a /proc file, say)
    script = [{"tools": [write(1.5, "// build-error"), ("evaluate", {})]},
              {"tools": [write(1.5)]}, {"text": "done"}]
    import socratic.harness.engine.evaluations as camp

    real = camp.run_evaluator

    def leaky(*a, **kw):
        result, code, stderr, err = real(*a, **kw)
        result.build.log += "\n" + FAKE_KEY
        return result, code, stderr + FAKE_KEY, err

    camp.run_evaluator = leaky
    try:
        c, reason, api, ev = run_script(tmp_path, script)
    finally:
        camp.run_evaluator = real
    for p in c.session.dir.rglob("*"):
        if p.is_file():
            assert FAKE_KEY.encode() not in p.read_bytes(), p
    assert FAKE_KEY not in json.dumps(api.requests)
    assert "[redacted]" in of(ev, "tool.result")[1]["output"]


def test_stop_honoured_while_retrying(tmp_path):
    with FakeAnthropic(default={"status": 529}) as api:
        c = make(tmp_path, api, retry_base_s=0.2, retry_max_s=0.2)
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("r", c.run()))
        th.start()
        assert _wait_for(lambda: len(of(events(c), "api.retry")) >= 2)
        inject(c.session.dir, ControlCommand(action="stop"))
        th.join(10)
    assert out["r"] == "stopped" and of(events(c), "campaign.end")[0]["reason"] == "stopped"


def test_context_too_long_error_hands_off(tmp_path):
    script = [{"tools": [("bash", {"command": "echo one"})]},
              {"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"},
              {"tools": [write(1.5)]}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script)
    h = of(ev, "context.handoff")
    assert len(h) == 1 and "refused the context" in h[0]["reason"]
    seed = api.requests[2]["messages"]
    assert len(seed) == 1 and "one" in seed[0]["content"][0]["text"]
    assert reason == "goal_met"
    ctx, msgs = c.session.load_messages()
    assert ctx == 1 and msgs[0]["content"][0]["text"].startswith("This is a fresh context")


def test_auto_questions_toggled_from_the_inbox(tmp_path):
    holder = {}

    def toggle(body):
        inject(holder["dir"], ControlCommand(action="auto_on"))
        return {"tools": [("evaluate", {})]}

    script = [toggle, {"tools": [write(1.6), ("evaluate", {})]}, {"text": "done"}]
    with FakeAnthropic(script) as api:
        c = make(tmp_path, api)
        holder["dir"] = c.session.dir
        c.run()
    ev = events(c)
    assert [e["action"] for e in of(ev, "control")] == ["auto_on"]
    qs = of(ev, "question")
    assert [q["trigger"] for q in qs] == ["suspicious_gain"]   # start came before auto_on
    assert c.session.load_state()["auto_questions"] is True


def test_api_timeout_retried(tmp_path):
    script = [{"delay": 2.0, "text": "too late"}, {"tools": [write(1.5)]}, {"text": "done"}]
    c, reason, api, ev = run_script(tmp_path, script, api_timeout_s=0.5)
    retries = of(ev, "api.retry")
    assert len(retries) == 1 and "Timeout" in retries[0]["error"] and reason == "goal_met"


def test_a_question_answering_the_wait_is_logged_with_its_trigger(tmp_path):
    # issue 10 item 13: a human question asked while the campaign waited after its stop
    # attempts was logged with `trigger: null`; the TUI now writes the trigger into the
    # inbox entry, and the harness gives an entry without one (socratic inject) the same
    with FakeAnthropic([{"text": "done"}] * 3 + [{"tools": [write(1.5)]}, {"text": "ok"}]) as api:
        c = make(tmp_path, api, wait_for_human=True)
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("r", c.run()))
        th.start()
        assert _wait_for(lambda: any(e.get("action") == "wait" for e in of(events(c), "control")))
        inject(c.session.dir, AskCommand(text="What limits you?"))
        th.join(10)
    assert out["r"] == "goal_met"
    asked = of(events(c), "question")
    assert [(q["text"], q["trigger"], q["source"]) for q in asked] == [
        ("What limits you?", "declared_done", "human")]
