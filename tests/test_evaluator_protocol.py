"""The evaluator's process protocols (socratic.evaluator.protocol) and the scenario record's
way from the worker to the TUI: records round-trip through JSON, a malformed message is
one line naming the field, the runner's loop survives what a worker gets wrong, and the
recorded evaluations and event logs still read to the same records. No GPU needed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic import contracts as c
from socratic.contracts import BanHit, GpuInfo, ScenarioResult, read_eval
from socratic.errors import InputError
from socratic.evaluator import protocol as p
from socratic.evaluator import runner
from socratic.eventlog import read_jsonl
from socratic.resources import demo_session_dir, resolve_session_dir
from socratic.taskfile import load_task
from socratic.tui.state import fold

ROW = ScenarioResult(id="r1-c4k", params={"rows": 1, "cols": 4096}, correct=True, failures=[],
                     error=None, err=0.0078, err_baseline=0.0039, err_ratio=2.0,
                     errors={"y": c.OutputErrors(max=0.0078, mean=0.001, baseline_max=0.0039,
                                                 baseline_mean=0.0005, tol_max=0.0078, tol_mean=0.001,
                                                 vs_baseline_max=0.004, checked=4096, nonfinite=0,
                                                 inf_mismatch=0, distribution="normal")},
                     baseline_ms=0.01, candidate_ms=0.008, speedup=1.25, spread=0.01, pairs=40,
                     order_ratio=1.01, tbps=2.1, bound_ms=0.002, bound_fraction=0.25,
                     below_bound=False, copies=17)
HIT = BanHit(library="cublas", layer="runtime", where="/usr/lib/libcublas.so.12",
             detail="mapped into the evaluation process")
JOB = p.Job(task_dir="/tasks/rmsnorm", baseline_lib="/c/b/lib.so", candidate_lib="/c/c/lib.so",
            reference_lib="/c/r/lib.so", seeds=None, timing=runner.TIMING, time=True, eval_seed=12345,
            hidden=[p.HiddenScenario(id="hidden-1", values={"rows": 3, "cols": 5000})])
MESSAGES = [
    p.Ready(gpu=GpuInfo(name="NVIDIA H200", cc="9.0", sms=132, driver=12080, l2_bytes=52428800,
                        write_protection="landlock")),
    p.Isolation(isolation={"landlock": "ABI 4", "seccomp": "on"}),
    p.Start(id="r1-c4k"),
    p.Row(row=ROW, runtime_bans=[HIT]),
    p.Row(row=ROW),
    p.Restart(),
    p.Fatal(kind="internal", id="r1-c4k", error="KeyError: 'x'", where="worker.py:10 in run"),
    p.Fatal(kind="cuda", id=None, error="CUDA_ERROR_ILLEGAL_ADDRESS"),
]


def _wire(msg: p.Message) -> bytes:
    return json.dumps(msg.to_dict(), separators=(",", ":")).encode()


# round trips ------------------------------------------------------------------------------
def test_the_worker_job_round_trips_through_json():
    job = p.WorkerJob(job=JOB, scenarios=["r1-c4k", "hidden-1"], channel_fd=7, key="ab" * 32)
    back = p.WorkerJob.from_dict(json.loads(json.dumps(job.to_dict())))
    assert back == job and back.job.timing.max_pairs == 400 and back.job.hidden[0].values["cols"] == 5000
    assert "warmup_seconds" not in job.to_dict()["job"]        # optional: left out when unset


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: m.TYPE)
def test_every_worker_message_round_trips(msg):
    assert msg.to_dict()["type"] == msg.TYPE and list(msg.to_dict())[0] == "type"
    assert runner.read_message(_wire(msg)) == msg


def test_the_comparison_messages_round_trip():
    for msg in (p.ComparisonTime(id="a", name="fa3", ms=0.5, passes=[0.6, 0.5]),
                p.Unavailable(name="cudnn", reason="torch sees no GPU")):
        assert p.parse_message(json.loads(_wire(msg)), p.COMPARE_MESSAGES, "x") == msg
    job = p.CompareJob(adapter="/t/compare.py", names=["fa3"], scenarios=[p.HiddenScenario(id="a", values={})])
    assert p.CompareJob.from_dict(json.loads(json.dumps(job.to_dict()))) == job


# malformed messages: one line -------------------------------------------------------------
@pytest.mark.parametrize(("body", "names"), [
    (b'{"type": "ready"}', "gpu: missing"),
    (b'{"type": "ready", "gpu": {"name": "H200", "cc": "9.0", "sms": "many", "driver": 1}}', "gpu.sms"),
    (b'{"type": "start"}', "id: missing"),
    (b'{"type": "row", "row": {"id": "a"}}', "row.params: missing"),
    (b'{"type": "row", "row": ' + json.dumps({**ROW.to_dict(), "correct": "yes"}).encode() + b"}",
     "row.correct: expected true or false"),
    (b'{"type": "row", "row": ' + json.dumps(ROW.to_dict()).encode() + b', "runtime_bans": [{}]}',
     "runtime_bans[0].library: missing"),
    (b'{"type": "fatal", "kind": "cuda", "error": "x"}', "id: missing"),
    (b'{"type": "verdict", "pass": true}', "unknown message type 'verdict'"),
    (b'{"id": "a"}', "unknown message type None"),
    (b'["row"]', "expected a message object"),
    (b'{"type": "row", "row": {', "not JSON"),
])
def test_a_malformed_worker_message_is_one_line_naming_the_field(body, names):
    got = runner.read_message(body)
    assert isinstance(got, runner.Malformed), got
    assert names in got.why and "\n" not in got.why and len(got.why) < 300


def test_a_malformed_job_stops_the_worker_with_one_line():
    proc = subprocess.run([sys.executable, "-I", "-m", "socratic.evaluator.worker"], input='{"job": {}}',
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "socratic.evaluator.worker: the worker's job: job.task_dir: missing"]


# the runner's loop, with a scripted worker --------------------------------------------------
class ScriptedWorker:
    """Stands in for runner._Worker: the signed lines of a worker, then its exit."""

    script: list[bytes] = []

    def __init__(self, job: p.Job, scenarios: list[str]):
        self.items = [runner.read_message(body) for body in self.script] + [runner._Gone()]

    def next(self, deadline: float):
        return self.items.pop(0)

    def stderr_tail(self) -> str:
        return "exit code 3"

    def returncode(self) -> int:
        return 3

    def kill(self) -> None:
        pass


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setattr(runner, "_Worker", ScriptedWorker)
    task = load_task(resolve_task("rmsnorm"))
    return task.select("smoke")[1][:2]


def resolve_task(name: str) -> Path:
    from socratic.resources import resolve_task_dir
    return resolve_task_dir(name)


def _row(sid: str) -> p.Row:
    return p.Row(row=ScenarioResult(**{**ROW.__dict__, "id": sid}), runtime_bans=[HIT])


def test_the_runner_takes_rows_and_runtime_bans_from_typed_messages(scripted):
    a, b = scripted
    ScriptedWorker.script = [_wire(m) for m in (MESSAGES[0], MESSAGES[1], p.Start(id=a.id), _row(a.id),
                                                p.Start(id=b.id), _row(b.id))]
    hits: list[BanHit] = []
    rows, gpu = runner.run_workers(JOB, scripted, 60.0, None, hits)
    assert [r.id for r in rows] == [a.id, b.id] and rows[0].speedup == 1.25
    assert gpu is not None and gpu.isolation == {"landlock": "ABI 4", "seccomp": "on"}
    assert hits == [HIT, HIT]


def test_each_row_carries_the_judges_seconds_from_its_start(scripted, monkeypatch):
    # the cost of each scenario, where the runner sees it: from the worker's Start to its row
    a, b = scripted
    at = iter([100.0, 101.0, 103.5, 104.0, 104.25, 105.0])   # when each message arrives
    now = [0.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(ScriptedWorker, "next", lambda self, deadline: (now.__setitem__(0, next(at)), self.items.pop(0))[1])
    ScriptedWorker.script = [_wire(m) for m in (MESSAGES[0], p.Start(id=a.id), _row(a.id),
                                                p.Start(id=b.id), _row(b.id))]
    rows, _ = runner.run_workers(JOB, scripted, 60.0, None, [])
    assert [r.seconds for r in rows] == [2.5, 0.25]


def test_rows_of_scenarios_never_started_have_no_seconds(scripted, monkeypatch):
    # a library that does not load fails every pending scenario at once: only the one the
    # worker had started has a judge's time
    a, b = scripted
    at = iter([100.0, 101.0, 103.0, 104.0])
    now = [0.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(ScriptedWorker, "next", lambda self, deadline: (now.__setitem__(0, next(at)), self.items.pop(0))[1])
    ScriptedWorker.script = [_wire(m) for m in (MESSAGES[0], p.Start(id=a.id),
                                                p.Fatal(kind="load", id=a.id, error="undefined symbol"))]
    rows, _ = runner.run_workers(JOB, scripted, 60.0, None, [])
    assert [(r.id, r.seconds) for r in rows] == [(a.id, 2.0), (b.id, None)] and not rows[1].correct


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="needs nvcc (a real build)")
def test_a_check_only_result_says_where_its_seconds_went(tmp_path):
    from socratic.evaluator.runner import EvalOptions, evaluate

    res = evaluate(EvalOptions(task_dir=resolve_task("rmsnorm"), check_only=True))
    s = res.seconds
    assert s is not None and s.judge == s.comparisons == 0.0
    assert 0.0 <= s.build <= s.total and s.total > 0


def test_a_malformed_row_fails_its_scenario_and_the_worker_goes_on(scripted):
    a, b = scripted
    bad = b'{"type":"row","row":' + json.dumps({**ROW.to_dict(), "id": a.id, "speedup": "fast"}).encode() + b"}"
    ScriptedWorker.script = [_wire(MESSAGES[0]), _wire(p.Start(id=a.id)), bad,
                             _wire(p.Start(id=b.id)), _wire(_row(b.id))]
    rows, _ = runner.run_workers(JOB, scripted, 60.0, None, [])
    assert not rows[0].correct and rows[0].failures == [
        "evaluator error: the worker's message 'row': row.speedup: expected a number, got str 'fast'"]
    assert rows[1].correct


@pytest.mark.parametrize(("script", "says"), [
    ([b'{"type":"ready"}'], "the evaluation worker failed: evaluator error: the worker's message 'ready': gpu: missing"),
    ([_wire(MESSAGES[0]), _wire(p.Start(id="no-such-scenario"))], "which is not one of its pending scenarios"),
    ([_wire(MESSAGES[0]), _wire(p.Fatal(kind="load", id=None, error="the baseline library does not load"))],
     "the evaluation worker failed: the baseline library does not load"),
])
def test_a_worker_that_goes_wrong_before_its_first_scenario_is_one_input_error(scripted, script, says):
    ScriptedWorker.script = script
    with pytest.raises(InputError) as exc:
        runner.run_workers(JOB, scripted, 60.0, None, [])
    assert says in str(exc.value) and "\n" not in str(exc.value)


# recorded evaluations and logs: the same records ------------------------------------------
def _fa3_session() -> list[Path]:
    """The H200 campaign's folder, where it is one (it may be shipped packed)."""
    try:
        found = resolve_session_dir(Path("fa3-h200"))
    except Exception:
        return []
    return [found] if (found / "events.jsonl").is_file() else []


def _eval_files() -> list[Path]:
    return sorted(path for session in (demo_session_dir(), *_fa3_session())
                  for path in (session / "evals").glob("*.json"))


def test_recorded_evaluations_parse_to_the_same_content():
    files = _eval_files()
    assert len(files) >= 6
    for path in files:
        text = path.read_text()
        doc = read_eval(path).to_dict()
        assert doc == json.loads(text), path
        if "fa3-h200" in str(path):   # written by this evaluator's types: the same bytes too
            assert json.dumps(doc, indent=1) == text, path


def test_the_scenario_event_is_the_row_and_back():
    """eval.scenario is written from a row (scenario_fields) and read back as one
    (EvalScenario.row) through the same list of fields: old logs give back what they hold."""
    seen = 0
    for session in (demo_session_dir(), *_fa3_session()):
        for raw in read_jsonl(session / "events.jsonl")[0]:
            if raw.get("type") != "eval.scenario":
                continue
            seen += 1
            ev = c.parse_event(raw)
            assert isinstance(ev, c.EvalScenario)
            again = c.build_event("eval.scenario", seq=ev.seq, t=ev.t, ts=ev.ts, n=ev.n, index=ev.index,
                                  total=ev.total, **c.scenario_fields(ev.row()))
            # (older harnesses wrote unset optional fields as null: absent and null mean the same)
            assert again == ev and again.to_dict() == ev.to_dict() and not ev.extra
    assert seen >= 100


def test_the_tui_row_is_the_evaluators_record_with_the_comparisons_of_eval_end():
    start = {"seq": 1, "t": 0, "ts": "", "type": "campaign.start", "task": "t", "model": "m",
             "goal": {"min_speedup": 1.0, "against": "fa3"}, "scenarios": {"set": "bench", "ids": ["a"]},
             "gpu": None, "host": "h", "versions": {}}
    row = ScenarioResult(**{**ROW.__dict__, "id": "a", "comparisons": {"fa3": c.Comparison(ms=0.01, speedup=1.25)}})
    scenario = c.build_event("eval.scenario", seq=3, t=2, ts="", n=1, index=1, total=1, **c.scenario_fields(row))
    end = c.build_event("eval.end", seq=4, t=3, ts="", n=1, summary={"all_correct": True}, result="evals/0001.json",
                        set="bench", scenario_vs=c.scenario_vs([row]))
    state = fold([start, {"seq": 2, "t": 1, "ts": "", "type": "eval.start", "n": 1, "candidate_sha": "s",
                          "set": "bench"}, scenario.to_dict()])
    assert state.rows["a"].result == c.EvalScenario.from_dict(scenario.to_dict()).row()
    assert state.rows["a"].goal_speedup("fa3") is None          # not timed yet: eval.end brings it
    state.apply(end.to_dict())
    got = state.rows["a"]
    assert got.result is not None and got.result.comparisons == {"fa3": c.Comparison(speedup=1.25)}
    assert got.goal_speedup("fa3") == 1.25 and got.figure("candidate_ms") == 0.008 and got.best == 1.25


# the candidate's process: untrusted replies ----------------------------------------------
class ScriptedLauncher:
    """A CandidateProcess whose replies to each request come from `script(nonce)`."""

    @staticmethod
    def make(script):
        import queue

        from socratic.evaluator.candidate_process import CandidateProcess

        class Fake(CandidateProcess):
            def __init__(self) -> None:   # no process: the replies are scripted
                self.replies = queue.Queue()
                self.sandbox, self.frozen, self.killed = {}, False, False

            def _send(self, msg) -> None:
                assert isinstance(msg, p.PlanRequest) and bytes.fromhex(msg.params) == b"\x01\x02"
                for reply in script(msg.id):
                    self.replies.put(reply)

            def alive(self) -> bool:
                return not self.killed

            def kill(self) -> None:
                self.killed = True

            def freeze(self) -> None:
                pass

            def thaw(self) -> None:
                pass
        return Fake()


def test_the_judge_reads_only_the_reply_it_waits_for():
    forged = {"body": '{"type":"row","row":{"id":"forged"}}', "mac": "00"}
    cand = ScriptedLauncher.make(lambda nonce: [
        forged, {"type": "plan", "id": "another-call", "rc": 0, "plan": "00"},
        {"type": "plan", "id": nonce, "rc": 0, "error": "the entry synchronises\n inside the call"}])
    cap = cand.capture(b"\x01\x02", [(4096, 64)], 5.0)
    assert (cap.rc, cap.plan, cap.error) == (0, None, "the entry synchronises inside the call")


@pytest.mark.parametrize(("reply", "says"), [
    ({"rc": "0", "plan": "00"}, "reply 'plan': rc: expected an integer, got str '0'"),
    ({"rc": True, "plan": "00"}, "reply 'plan': rc: expected an integer, got bool True"),
    ({"plan": "00"}, "reply 'plan': rc: missing"),
    ({"rc": 0, "plan": ["00"]}, "reply 'plan': plan: expected a string, got list ['00']"),
])
def test_a_malformed_plan_reply_fails_the_call_in_one_line(reply, says):
    cand = ScriptedLauncher.make(lambda nonce: [{"type": "plan", "id": nonce, **reply}])
    cap = cand.capture(b"\x01\x02", [], 5.0)
    assert cap.plan is None and cap.rc is None
    assert cap.error == f"the candidate's process sent a malformed reply: {says}"


def test_an_unreadable_plan_and_a_fatal_reply_are_one_line():
    from socratic.evaluator.candidate_process import CandidateProcessError

    cand = ScriptedLauncher.make(lambda nonce: [{"type": "plan", "id": nonce, "rc": 0, "plan": "zz"}])
    assert cand.capture(b"\x01\x02", [], 5.0).error.startswith("the launch plan is unreadable: ")
    for fatal, says in (({"error": "the candidate library does not load:\n undefined symbol: f"},
                         "the candidate library does not load: undefined symbol: f"),
                        ({"error": 3}, "malformed reply: reply 'fatal': error: expected a string, got int 3")):
        cand = ScriptedLauncher.make(lambda nonce, fatal=fatal: [{"type": "fatal", **fatal}])
        with pytest.raises(CandidateProcessError) as exc:
            cand.capture(b"\x01\x02", [], 5.0)
        assert says in str(exc.value) and "\n" not in str(exc.value)


def test_the_launcher_job_and_requests_round_trip():
    job = p.LauncherJob(library="/c/lib.so", entry="rmsnorm_fwd", plan_lib="/c/plan.so")
    req = p.PlanRequest(id="ab12", params="0102", mirror=[[4096, 64]])
    for rec in (job, req):
        assert type(rec).from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    for msg in (p.LauncherReady(sandbox={"landlock": "ABI 4"}), p.LauncherFatal(error="x"),
                p.PlanReply(id="ab12", rc=0, plan="00"), p.PlanReply(id="ab12", rc=None, error="why")):
        assert p.parse_message(json.loads(json.dumps(msg.to_dict())), p.LAUNCHER_REPLIES, "reply") == msg


def test_a_forged_end_of_replies_is_not_the_end():
    """The reader marks the pipe's end with a record of its own; a candidate that writes
    `{"type": "eof"}` itself is not taken for a process that exited (the judge would wait
    on it, thawed, until the runner's timeout killed the judge and not it)."""
    cand = ScriptedLauncher.make(lambda nonce: [{"type": "eof"}, {"type": "plan", "id": nonce, "rc": 7, "error": "x"}])
    cap = cand.capture(b"\x01\x02", [], 5.0)
    assert (cap.rc, cap.error) == (7, "x")



def test_the_table_says_where_the_seconds_went():
    from socratic.contracts import Seconds
    from socratic.evaluator.report import table
    from socratic_doubles.testing import eval_result

    doc = eval_result([{"id": "a", "correct": True, "speedup": 1.1}])
    assert "took" not in table(doc)   # a result from before session 25
    doc.seconds = Seconds(total=58.26, build=0.41, judge=41.0, comparisons=16.2)
    assert "took 58.3 s: build 0.4, judge 41.0, comparisons 16.2" in table(doc).splitlines()
    doc.seconds = Seconds(total=12.0, build=2.0, judge=9.5, comparisons=0.0)
    assert "took 12.0 s: build 2.0, judge 9.5" in table(doc).splitlines()
