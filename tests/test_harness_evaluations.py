"""The evaluations service, the stop hook and the triggers wired to bank and inbox, without a
model or the campaign loop: a session, the fake evaluator and a list for the event log."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from socratic.contracts import Event, Question, build_event
from socratic.harness.core.config import TriggerConfig
from socratic.harness.core.inbox import Inbox
from socratic.harness.core.redaction import Redactor, scrubbed_env
from socratic.harness.core.session import Session
from socratic.harness.core.task import CampaignTask
from socratic.harness.engine.evaluations import Evaluations
from socratic.harness.engine.plan import CampaignPlan, Limits
from socratic.harness.engine.stophook import StopAttempts, judge_stop
from socratic.harness.engine.triggers import Fired, Triggers
from socratic_doubles.testing import FAKE_KEY, candidate_source, fake_config, make_task


class Log(list):
    """Stands in for the event log: emit(event) checks the event against its declaration,
    as the log does, and appends it as logged (without seq, t and ts)."""

    def __call__(self, event: Event) -> dict[str, Any]:
        build_event(event.TYPE, **ENVELOPE, **event.body())
        self.append({"type": event.TYPE, **event.body()})
        return self[-1]

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self if e["type"] == type_]

    def typed(self, type_: str) -> list[Event]:
        return [build_event(type_, **ENVELOPE, **{k: v for k, v in e.items() if k != "type"})
                for e in self.of(type_)]


ENVELOPE = {"seq": 1, "t": 0.0, "ts": "2026-12-01T00:00:00.000+00:00"}


@dataclass
class Pieces:
    session: Session
    log: Log
    inbox: Inbox
    triggers: Triggers
    evals: Evaluations

    def write(self, speed: float, *extra: str) -> None:
        self.session.candidate.write_text(candidate_source(speed, *extra))


def pieces(tmp_path, *, suggester=None, auto=False, triggers=None) -> Pieces:
    """The pieces on the session in tmp_path/s (made on first use)."""
    cfg = fake_config(auto_questions=auto, triggers=triggers)
    if (tmp_path / "s").exists():
        session = Session(tmp_path / "s")
        src, hashes = CampaignTask.load(tmp_path / "tiny_task"), session.load_config().task_hashes
    else:
        src = CampaignTask.load(make_task(tmp_path, goal=1.2))
        session, hashes = Session.create(src, cfg, tmp_path / "s")
    log = Log()
    inbox = Inbox(session.inbox, session.state_file, auto_questions=auto)
    trig = Triggers(cfg.triggers, goal_set="bench", inbox=inbox, emit=log, suggester=suggester)
    task = CampaignTask.load(session.task_dir)
    plan = CampaignPlan(task=task, goal=task.goal(None), goal_set="bench", scenario_ids=[],
                        limits=Limits(), task_hashes=hashes, task_source=src.dir)
    evals = Evaluations(session, plan, evaluator=cfg.evaluator, timeout_s=60,
                        env=scrubbed_env(), redact=Redactor([FAKE_KEY]), emit=log,
                        triggers=trig)
    return Pieces(session, log, inbox, trig, evals)


def test_evaluations_are_numbered_saved_and_logged(tmp_path):
    p = pieces(tmp_path)
    p.write(1.3)
    ev = p.evals.run("bench")
    assert ev.n == 1 and ev.all_correct and ev.metric("min_speedup") == 1.3
    assert [e["type"] for e in p.log] == ["eval.start"] + ["eval.scenario"] * 3 + ["eval.end"]
    start, end = p.log.of("eval.start")[0], p.log.of("eval.end")[0]
    assert start["source"] == "agent" and start["candidate_sha"] == ev.sha == end["candidate_sha"]
    assert end["result"] == "evals/0001.json" and end["summary"]["all_correct"] is True
    saved = json.loads((p.session.dir / "evals/0001.json").read_text())
    assert saved["schema"] == "socratic.eval/1"
    assert (p.session.candidates / f"{ev.sha[:16]}.cu").read_text() == candidate_source(1.3)
    # the agent's tool: the goal set unless it names another, as the compact table
    out = p.evals.tool({"scenarios": "smoke"})
    assert out.startswith("evaluation #2  set=smoke") and "summary: 1/1 correct" in out
    assert p.evals.tool({"scenarios": 7}).startswith("evaluation #3  set=bench")
    assert len(p.evals.history) == 3


def test_a_missing_candidate_is_a_failed_evaluation_not_a_crash(tmp_path):
    p = pieces(tmp_path)
    p.session.candidate.unlink()
    ev = p.evals.run("bench")
    assert ev.result is None and ev.exit_code == 2 and "missing or empty" in ev.error
    doc = json.loads((p.session.dir / "evals/0001.json").read_text())
    assert doc["error"] == ev.error and p.log.of("eval.end")[0]["summary"]["all_correct"] is False


def test_restore_from_the_log_keeps_numbers_and_results(tmp_path):
    p = pieces(tmp_path)
    p.write(1.3)
    first = p.evals.run("bench")
    again = pieces(tmp_path)                                 # the same session, restarted
    again.evals.restore(p.log.typed("eval.end"), seq=4)     # #2..#4 were cut by kills
    old = again.evals.history.evals[0]
    assert (old.n, old.sha, old.result) == (first.n, first.sha, first.result)
    assert again.evals.run("bench").n == 5
    again.triggers.start("tiny", "goal")                    # a resumed campaign has started
    assert again.log.of("trigger") == []


def test_edits_to_task_files_are_undone_and_reported(tmp_path):
    p = pieces(tmp_path)
    for d in (p.session.workspace_task, p.session.task_dir):
        (d / "task.toml").chmod(0o644)
        with open(d / "task.toml", "a") as fh:
            fh.write("# edited\n")
    out = p.evals.tool({})
    notes = p.log.of("task.modified")[0]["notes"]
    assert "in the workspace differ" in notes[0] and "restored" in notes[1]
    assert out.startswith(notes[0]) and "# edited" not in (p.session.task_dir / "task.toml").read_text()


def test_the_key_is_redacted_from_results(tmp_path):
    # a candidate can smuggle text into its build log (an #include of a /proc file, say)
    p = pieces(tmp_path)
    doc = {"schema": "socratic.eval/1", "task": "tiny", "set": "bench",
           "candidate": {"path": "candidate.cu", "sha256": p.evals.candidate_sha()}, "gpu": None,
           "build": {"ok": False, "cached": False, "seconds": 0.1, "command": "nvcc",
                     "log": f"error near {FAKE_KEY}", "resources": []},
           "bans": {"ok": True, "hits": []}, "scenarios": [],
           "summary": {"all_correct": False, "n": 0, "n_correct": 0, "geomean_speedup": None,
                       "min_speedup": None, "worst_scenario": None, "geomean_vs": {}},
           "exit_code": 1}
    p.evals.evaluator = [sys.executable, "-c", f"import json, sys; print({FAKE_KEY!r}, "
                         f"file=sys.stderr); print(json.dumps({doc!r}))"]
    ev = p.evals.run("bench")
    assert ev.result.build.log == "error near [redacted]" and FAKE_KEY not in ev.stderr_tail
    assert FAKE_KEY not in (p.session.dir / "evals/0001.json").read_text()
    assert FAKE_KEY not in json.dumps(p.evals.tool({}))


def test_stop_hook_judges_the_goal_and_reuses_an_evaluation(tmp_path):
    p = pieces(tmp_path)
    p.write(1.1)
    v = judge_stop(p.evals)
    assert not v.met and not v.reused and v.ev.n == 1
    assert p.log.of("eval.start")[0]["source"] == "stophook"
    assert "goal is not met on evaluation #1" in v.message and "- a: correct, speedup 1.100x" in v.message
    hook = p.log.of("stophook")[0]
    assert hook["met"] is False and {f["scenario"] for f in hook["failing"]} == {"a", "b", "c"}
    again = judge_stop(p.evals)                             # same source: no new evaluation
    assert again.reused and again.ev.n == 1 and len(p.log.of("eval.start")) == 1
    p.write(1.3)
    met = judge_stop(p.evals)
    assert met.met and not met.reused and met.message == "" and met.ev.n == 2


def test_stop_attempts_count_only_attempts_without_work_between():
    s = StopAttempts()
    assert [s.attempt(), s.attempt()] == [1, 2]
    s.tool_call()
    assert s.attempt() == 1
    assert [s.attempt(), s.attempt()] == [2, 3]
    s.reset()
    assert s.attempt() == 1


def test_evaluations_fire_triggers(tmp_path):
    p = pieces(tmp_path)
    p.write(1.0)
    p.evals.run("bench")
    p.write(1.6)
    p.evals.run("bench")
    t = p.log.of("trigger")
    assert [x["kind"] for x in t] == ["suspicious_gain"] and "+60%" in t[0]["reason"]
    p.write(1.0, "// incorrect")
    p.evals.run("smoke")                                    # another set: no plateau or gain
    assert len(p.log.of("trigger")) == 1
    p.triggers.on_text("The tail lanes are not guarded, so a reads past the end.", 3)
    assert p.log.of("trigger")[-1]["kind"] == "correctness_failure"


def suggest(kind: str, asked: list[str], recent: str) -> list[tuple[str, str]]:
    return [(f"{kind}.q{i}", f"Q{i} for {kind}?") for i in range(3)]


def test_a_trigger_logs_suggestions_and_queues_the_first_fresh_one(tmp_path):
    p = pieces(tmp_path, suggester=suggest, auto=True)
    p.inbox.asked_ids.append("plateau.q0")
    p.triggers.fire(Fired("plateau", "flat"))
    assert p.log.of("trigger") == [{"type": "trigger", "kind": "plateau", "reason": "flat",
                                    "suggestions": ["plateau.q0", "plateau.q1", "plateau.q2"]}]
    assert p.inbox.questions == [Question(text="Q1 for plateau?", bank_id="plateau.q1",
                                          trigger="plateau", source="auto")]
    p.triggers.fire(Fired("plateau", "still flat"))         # q1 is queued: q2 is next
    assert [q.bank_id for q in p.inbox.questions] == ["plateau.q1", "plateau.q2"]
    p.inbox.auto_questions = False
    p.triggers.fire(Fired("plateau", "flat again"))
    assert len(p.inbox.questions) == 2 and len(p.log.of("trigger")) == 3


def test_a_failing_suggester_is_a_problem_event_not_an_api_retry(tmp_path):
    def broken(kind, asked, recent):
        raise RuntimeError("boom")

    p = pieces(tmp_path, suggester=broken, auto=True)
    p.triggers.start("tiny", "min speedup >= 1.2x")
    assert [e["type"] for e in p.log] == ["problem", "trigger"]
    assert p.log[0] == {"type": "problem", "where": "bank.suggest", "error": "RuntimeError: boom"}
    assert p.log[1]["kind"] == "start" and p.log[1]["suggestions"] == []
    assert p.inbox.questions == []


def test_triggers_resume_without_firing_again(tmp_path):
    p = pieces(tmp_path, triggers=TriggerConfig(plateau_window=2))
    for speed in (1.0, 1.001, 1.002):
        p.write(speed)
        p.evals.run("bench")
    assert [t["kind"] for t in p.log.of("trigger")] == ["plateau"]
    q = pieces(tmp_path / "q", triggers=TriggerConfig(plateau_window=2))
    q.triggers.resume(p.evals.history.evals)                # detector state, nothing fired
    assert q.log == [] and q.triggers.detectors.plateau.best_min == 1.0


def test_an_evaluation_waiting_for_its_gpu_turn_says_so(tmp_path, monkeypatch):
    """eval.wait while another evaluation holds the GPU (who holds it), gpu_wait_s on
    eval.end; the scenario numbers are the candidate's, whatever the wait."""
    import subprocess
    import threading
    import time

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")   # the fake evaluator's GPU: index-3
    p = pieces(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom socratic.gpulock import gpu_turn\n"
         "with gpu_turn('index-3', 'another campaign'):\n print('held', flush=True)\n"
         " sys.stdin.readline()"], stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    assert holder.stdout.readline().strip() == b"held"
    p.write(1.4)
    done = []
    worker = threading.Thread(target=lambda: done.append(p.evals.run("bench")))
    worker.start()
    deadline = time.monotonic() + 30
    while not p.log.of("eval.wait"):   # the evaluation says it waits; then its turn comes
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.6)
    holder.communicate(b"\n", timeout=30)
    worker.join(60)
    ev = done[0]
    holder.wait()
    wait = p.log.of("eval.wait")
    assert wait == [{"type": "eval.wait", "n": 1, "gpu": "index-3",
                     "holder": wait[0]["holder"]}] and "another campaign" in wait[0]["holder"]
    end = p.log.of("eval.end")[0]
    assert end["gpu_wait_s"] > 0.5 and ev.metric("min_speedup") == 1.4
