"""Forging the verdict, as a reward-hacking agent with a shell in the workspace would
(issue 40): each attack leaves an unchanged 1.0x kernel against a 1.3x goal, and none may
end `goal_met`; the log and the report say what happened. The agent is played by the test
(it writes what the agent's Bash could write, without the session's chain key, which a
confined agent cannot read). CPU only: the fake evaluator, hooks run in-process or through
a session server object."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from socratic.eventlog import EventLog, read_jsonl
from socratic.harness.attached.attach import attach
from socratic.harness.attached.hooks import run_evaluate, run_hook
from socratic.report import build_report
from socratic_doubles.testing import FAKE_EVALUATOR, candidate_source, fake_config, make_task

GOAL = 1.3


def make(tmp_path: Path, agent: str = "claude", **cfg):
    task = make_task(tmp_path, goal=GOAL)
    a = attach(task, agent, fake_config(**cfg), session_dir=tmp_path / "s", wait_s=0.5)
    (a.session.workspace / "candidate.cu").write_text(candidate_source(1.0))
    return a.session.dir, a.session.workspace


def events(sess: Path) -> list[dict]:
    return read_jsonl(sess / "events.jsonl")[0]


def of(sess: Path, type_: str) -> list[dict]:
    return [e for e in events(sess) if e["type"] == type_]


def stop(sess: Path, ws: Path) -> dict:
    return run_hook("stop", {"session_id": "s1", "cwd": str(ws), "hook_event_name": "Stop",
                             "last_assistant_message": "Done."}, session_dir=sess)


def report(sess: Path):
    return build_report([sess]).sessions[0]


def assert_not_met(sess: Path, out: dict) -> None:
    assert out.get("decision") in ("block", "deny"), out   # gemini says deny
    assert not any(e["reason"] == "goal_met" for e in of(sess, "campaign.end"))
    r = report(sess)
    assert not r.goal_met and r.end_reason != "goal_met"


def fast_result(sess: Path, sha: str) -> dict:
    """What the fake evaluator says of a 1.5x source, relabelled as the source `sha`."""
    fast = sess.parent / "fast.cu"
    fast.write_text(candidate_source(1.5))
    r = subprocess.run([*FAKE_EVALUATOR, str(sess / "task"), "--candidate", str(fast), "--json"],
                       capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    doc["candidate"]["sha256"] = sha
    return doc


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------- the attacks

def test_config_goal_edited_then_the_server_restarted(tmp_path):
    from socratic.harness.attached.hookserver import HookServer, Request

    sess, ws = make(tmp_path)
    cfg = json.loads((sess / "config.json").read_text())
    cfg["config"]["goal_min_speedup"] = 1.0           # 1.0x "meets" it
    cfg["config"]["max_minutes"] = 1e9
    (sess / "config.json").write_text(json.dumps(cfg))
    server = HookServer(sess)                         # what the next hook starts
    payload = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "Stop"})
    with server.lock:   # as the server's request thread holds it
        code, out, _ = server.reply(Request("hook", "stop", 0.0, payload.encode(), ""))
    assert_not_met(sess, json.loads(out))
    assert "goal >= 1.3x" in json.loads(out)["reason"]
    said = [p["error"] for p in of(sess, "problem") if p["where"] == "config.json"]
    assert len(said) == 1 and "goal min_speedup 1 (pinned 1.3)" in said[0]
    assert "max_minutes" in said[0]
    assert of(sess, "stophook")[0]["goal"]["min_speedup"] == GOAL
    assert any("config.json" in c for c in report(sess).contradictions)
    # a hook without the server says it once, not at every call
    stop(sess, ws)
    assert len([p for p in of(sess, "problem") if p["where"] == "config.json"]) == 1


def test_a_forged_evaluation_line_and_its_result_file(tmp_path):
    sess, ws = make(tmp_path)
    run_evaluate(sess, None)                         # the honest one: 1.0x, #1
    sha = sha_of(ws / "candidate.cu")
    doc = fast_result(sess, sha)
    (sess / "evals/0002.json").write_text(json.dumps(doc))
    seq = events(sess)[-1]["seq"]
    summary = {**doc["summary"], "build_ok": True, "bans_ok": True, "exit_code": 0}
    forged = [{"seq": seq + 1, "t": 9.0, "ts": "2026-12-05T00:00:00+00:00", "type": "eval.start",
               "n": 2, "candidate_sha": sha, "set": "bench", "source": "agent"},
              {"seq": seq + 2, "t": 9.1, "ts": "2026-12-05T00:00:00+00:00", "type": "eval.end",
               "n": 2, "candidate_sha": sha, "set": "bench", "source": "agent",
               "summary": summary, "result": "evals/0002.json",
               "result_sha256": sha_of(sess / "evals/0002.json"), "chain": "0" * 64}]
    n_lines = len((sess / "events.jsonl").read_text().splitlines())
    with open(sess / "events.jsonl", "a") as fh:
        fh.write("".join(json.dumps(e) + "\n" for e in forged))
    out = stop(sess, ws)
    assert_not_met(sess, out)
    hook = of(sess, "stophook")[-1]
    assert hook["n"] == 1 and hook["reused"] and f"BROKEN at line {n_lines + 1}" in hook["record"]
    problems = [p["error"] for p in of(sess, "problem") if p["where"] == "events.jsonl"]
    assert problems and f"line {n_lines + 1} (eval.start)" in problems[0]
    r = report(sess)
    assert r.record["status"] == "broken" and r.record["first_bad"] == n_lines + 1
    assert r.evaluations == 1                         # the forged one is no evaluation
    assert any(f"BROKEN at line {n_lines + 1}" in c for c in r.contradictions)


def test_a_real_result_file_rewritten(tmp_path):
    sess, ws = make(tmp_path)
    run_evaluate(sess, None)
    (sess / "evals/0001.json").write_text(json.dumps(fast_result(sess, sha_of(ws / "candidate.cu"))))
    out = stop(sess, ws)
    assert_not_met(sess, out)
    hook = of(sess, "stophook")[-1]
    assert hook["n"] == 2 and not hook["reused"]      # judged afresh, not on the rewritten file
    assert any(p["where"] == "evals/0001.json" and "rewritten" in p["error"]
               for p in of(sess, "problem"))
    r = report(sess)
    assert any("evaluation #1: evals/0001.json differs" in c for c in r.contradictions)


def test_a_result_file_rewritten_under_a_running_server(tmp_path):
    from socratic.harness.attached.hookserver import HookServer, Request

    sess, ws = make(tmp_path)
    server = HookServer(sess)
    with server.lock:
        server.reply(Request("evaluate", "", 0.0, b"", ""))
    (sess / "evals/0001.json").write_text(json.dumps(fast_result(sess, sha_of(ws / "candidate.cu"))))
    payload = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "Stop"})
    with server.lock:
        _, out, _ = server.reply(Request("hook", "stop", 0.0, payload.encode(), ""))
    assert_not_met(sess, json.loads(out))
    assert any(p["where"] == "evals/0001.json" and "not reused" in p["error"]
               for p in of(sess, "problem"))


def test_attach_json_says_the_campaign_ended_goal_met(tmp_path):
    sess, ws = make(tmp_path)
    run_hook("session-start", {"session_id": "s1", "cwd": str(ws)}, session_dir=sess)
    state = json.loads((sess / "attach.json").read_text())
    state["ended"] = "goal_met"
    (sess / "attach.json").write_text(json.dumps(state))
    out = stop(sess, ws)
    assert_not_met(sess, out)
    said = [p["error"] for p in of(sess, "problem") if p["where"] == "attach.json"]
    assert said and "says the campaign ended 'goal_met' but the log says it is running" in said[0]


def test_a_hand_made_result_imported_in_an_agent_driven_session(tmp_path):
    sess, ws = make(tmp_path)
    result = tmp_path / "result.json"
    result.write_text(json.dumps(fast_result(sess, sha_of(ws / "candidate.cu"))))
    r = subprocess.run([sys.executable, "-m", "socratic", "hook", "evaluate", "--session",
                        str(sess), "--import", str(result)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "imports are for campaigns by hand" in r.stderr and "Traceback" not in r.stderr
    assert of(sess, "eval.end") == []
    out = stop(sess, ws)
    assert_not_met(sess, out)
    assert any("hook evaluate --import" in c for c in report(sess).contradictions)


def test_the_candidate_swapped_during_evaluate(tmp_path):
    """The agent's evaluation runs; once the candidate has been hashed, a faster file takes
    its place (here the "evaluator" swaps it before it reads); then the slow one is put
    back for the stop. Judged: the bytes hashed, never the swapped file."""
    wrapper = tmp_path / "swap_then_eval.py"
    wrapper.write_text(
        "import os, shutil, sys, subprocess\n"
        f"ws = {str(tmp_path / 's' / 'workspace')!r}\n"
        "flag = os.path.join(os.path.dirname(ws), 'swapped')\n"
        "if not os.path.exists(flag):\n"
        "    open(flag, 'w').close()\n"
        "    shutil.copy(os.path.join(os.path.dirname(ws), '..', 'fast.cu'), os.path.join(ws, 'candidate.cu'))\n"
        f"sys.exit(subprocess.call({FAKE_EVALUATOR!r} + sys.argv[1:]))\n")
    (tmp_path / "fast.cu").write_text(candidate_source(1.5))
    sess, ws = make(tmp_path, evaluator=[sys.executable, str(wrapper)])
    slow = (ws / "candidate.cu").read_bytes()
    table = run_evaluate(sess, None)[1]
    assert "1.000" in table and "1.500" not in table
    end = of(sess, "eval.end")[0]
    assert end["candidate_sha"] == hashlib.sha256(slow).hexdigest()
    assert end["summary"]["min_speedup"] == 1.0
    (ws / "candidate.cu").write_bytes(slow)            # the agent puts the slow one back
    out = stop(sess, ws)
    assert_not_met(sess, out)
    saved = json.loads((sess / "evals/0001.json").read_text())
    assert saved["candidate"]["sha256"] == end["candidate_sha"]


def test_a_met_end_with_no_evaluation_is_a_contradiction(tmp_path):
    sess, _ = make(tmp_path)
    # even written with the key (a harness bug, an old log): the report re-derives "met"
    EventLog.open(sess).append("campaign.end", reason="goal_met")
    r = report(sess)
    assert r.end_reason == "goal_met" and not r.goal_met
    assert "the campaign ended goal_met with 0 evaluations" in r.contradictions
    text = "\n".join(__import__("socratic.report", fromlist=["summary_lines"]).summary_lines(r))
    assert "NOT met" in text and "! contradiction: the campaign ended goal_met with 0" in text


def test_a_stop_on_another_goal_and_a_same_source_jump(tmp_path):
    sess, ws = make(tmp_path)
    run_evaluate(sess, None)
    log = EventLog.open(sess)
    end = of(sess, "eval.end")[0]
    summary = {**end["summary"], "geomean_speedup": 1.5, "min_speedup": 1.5}
    log.append("eval.start", n=2, candidate_sha=end["candidate_sha"], set="bench")
    log.append("eval.end", n=2, candidate_sha=end["candidate_sha"], set="bench",
               summary=summary, result="evals/0001.json")
    log.append("stophook", met=True, failing=[], n=2, goal={"min_speedup": 1.0,
                                                            "against": "baseline"})
    r = report(sess)
    assert not r.goal_met or r.time_to_goal_s is not None
    assert any("judged a goal of 1x" in c for c in r.contradictions)
    assert any("measured the same source" in c and "1.000x vs 1.500x" in c
               for c in r.contradictions)


# ---------------------------------------------------------------------------- the honest path

def test_an_honest_campaign_still_reaches_goal_met(tmp_path):
    sess, ws = make(tmp_path)
    assert stop(sess, ws)["decision"] == "block"
    (ws / "candidate.cu").write_text(candidate_source(1.4))
    out = stop(sess, ws)
    assert out == {"systemMessage": f"socratic: campaign ended: goal_met (session {sess})"}
    r = report(sess)
    assert r.goal_met and r.contradictions == [] and r.record["status"] == "verified"
    assert of(sess, "problem") == []
    start = events(sess)[0]
    assert start["session_id"] and start["evaluator"] and start["baseline_sha256"]
    assert all(isinstance(e.get("chain"), str) for e in events(sess))


def test_the_same_source_faster_fires_suspicious_gain():
    from socratic.harness.core.config import TriggerConfig
    from socratic.harness.core.history import Evaluation
    from socratic.harness.engine.triggers import SuspiciousGain
    from socratic_doubles.testing import eval_result

    det = SuspiciousGain(TriggerConfig())
    rows = [{"id": "a", "correct": True, "speedup": 1.0}]
    assert det.on_eval(Evaluation(1, "f" * 64, "bench", eval_result(rows), 0)) is None
    rows = [{"id": "a", "correct": True, "speedup": 1.5}]
    fired = det.on_eval(Evaluation(2, "f" * 64, "bench", eval_result(rows), 0))
    assert fired is not None and fired.kind == "suspicious_gain"
    assert "the same source" in fired.reason and "evaluation #1" in fired.reason


# ---------------------------------------------------------------------------- the chain itself

def test_the_chain_names_the_first_bad_line_and_a_session_without_a_key_is_unverified(tmp_path):
    from socratic import chain

    sess, ws = make(tmp_path)
    data = (sess / "events.jsonl").read_bytes()
    assert chain.verify(sess, data).status == "verified"
    lines = data.splitlines(keepends=True)
    edited = lines[0].replace(b'"min_speedup":1.3', b'"min_speedup":1.0')
    assert edited != lines[0]
    check = chain.verify(sess, edited + b"".join(lines[1:]))
    assert check.status == "broken" and check.first_bad == 1
    assert "line 1 (campaign.start)" in check.describe()
    # a log rewritten wholesale without chain values still meets this path's key
    bare = b"".join(chain.split(ln.rstrip(b"\n"))[0] + b"\n" for ln in lines)
    assert chain.verify(sess, bare).status == "broken"
    # the same log elsewhere (no key there): unverified, and still read
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    (copy / "events.jsonl").write_bytes(data.replace(b'"session_id":"', b'"session_id":"0'))
    assert chain.verify(copy, (copy / "events.jsonl").read_bytes()).status == "unverified"


def test_a_pack_carries_the_chains_verdict(tmp_path):
    from socratic.sessionfiles import open_session, write_pack

    sess, ws = make(tmp_path)
    stop(sess, ws)
    pack = tmp_path / "s.socratic"
    manifest = write_pack(sess, pack)
    assert manifest["record"]["status"] == "verified" and manifest["record"]["last"]
    check = open_session(pack).record()
    assert check.status == "unverified" and "it read verified" in check.why
    r = build_report([pack]).sessions[0]
    assert r.record["status"] == "unverified"


def test_lines_cut_off_the_end_of_the_log_are_named(tmp_path):
    """The chain vouches for each line's predecessors, not for how many follow: the head
    kept beside the key (out of the agent's reach) says how far the log reached; a log cut
    short is TRUNCATED in the stop, the report and replay, and stays so after new lines."""
    from socratic import chain
    from socratic.sessionfiles import open_session
    from socratic.tui.events_file import read_session_events

    sess, ws = make(tmp_path)
    run_evaluate(sess, None)
    stop(sess, ws)                                    # refused: 1.0x < 1.3x
    data = (sess / "events.jsonl").read_bytes()
    assert chain.verify(sess, data).status == "verified"
    lines = data.splitlines(keepends=True)
    keep = len(lines) - 3                             # the refused stop cut away
    (sess / "events.jsonl").write_bytes(b"".join(lines[:keep]))
    check = chain.verify(sess, (sess / "events.jsonl").read_bytes())
    assert check.status == "broken" and check.first_bad == keep + 1
    assert "TRUNCATED" in check.describe() and f"line {len(lines)}" in check.describe()
    r = report(sess)
    assert r.record["status"] == "broken" and "TRUNCATED" in r.record["text"]
    assert any("TRUNCATED" in c for c in r.contradictions)
    chunk = read_session_events(open_session(sess))
    assert chunk.record is not None and "TRUNCATED" in chunk.record.describe()
    # the next hook appends after the cut: the cut is carried forward, and the stop names it
    out = stop(sess, ws)
    assert_not_met(sess, out)
    assert "TRUNCATED" in of(sess, "stophook")[-1]["record"]
    assert "TRUNCATED" in chain.verify(sess, (sess / "events.jsonl").read_bytes()).describe()


def test_an_honest_log_with_a_lagging_head_is_not_truncated(tmp_path):
    """A writer killed between its line and its head leaves the head one line behind: not
    a cut."""
    from socratic import chain

    sess, ws = make(tmp_path)
    run_evaluate(sess, None)
    sid = chain.indexed_id(sess)
    head = chain.read_head(sid)
    assert head is not None
    first = chain.verify(sess, (sess / "events.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n")
    chain.write_head(sid, chain.Head(1, first.last))
    stop(sess, ws)
    assert chain.verify(sess, (sess / "events.jsonl").read_bytes()).status == "verified"


def test_a_slowed_baseline_in_the_build_cache_is_refused(tmp_path):
    """campaign.start pins the task's built libraries (the evaluator's build.libraries);
    a cache that later holds another baseline under the baseline's key (which makes an
    unchanged kernel look faster: the fake evaluator's 1.35x stands for it) yields no
    evaluation: refused, logged (`where: build`), a contradiction in the report."""
    import os

    sess, ws = make(tmp_path)
    start = events(sess)[0]
    assert set(start["libraries"]) == {"baseline", "reference"}
    cache = Path(os.environ["SOCRATIC_CACHE"]) / "fake-builds"
    base = sha_of(sess / "task" / "baseline.cu")[:24]
    (cache / base / "baseline.so").write_bytes(b"a slowed baseline")
    try:
        (ws / "candidate.cu").write_text(candidate_source(1.35))
        out = stop(sess, ws)
        assert_not_met(sess, out)
        said = [p["error"] for p in of(sess, "problem") if p["where"] == "build"]
        assert said and "baseline" in said[0] and "pinned" in said[0]
        assert any("built libraries differ" in c for c in report(sess).contradictions)
    finally:
        (cache / base / "baseline.so").unlink()


def test_the_evaluator_reports_its_built_libraries(tmp_path):
    """The real evaluator's JSON carries the sha256 of the baseline and reference it built
    (what campaign.start pins); --check-only too, no GPU needed."""
    import shutil

    import pytest

    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("needs nvcc")
    r = subprocess.run([sys.executable, "-m", "socratic", "eval", "rmsnorm", "--check-only",
                        "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    libs = json.loads(r.stdout)["build"]["libraries"]
    assert set(libs) == {"baseline", "reference"} and all(len(v) == 64 for v in libs.values())


# ---------------------------------------------------------------------- confused deputies
# The agent cannot read socratic's key folder nor write the session; socratic's own
# processes (the session server, the launcher) run outside its domain and can. Nothing they
# read or write on the agent's behalf may reach through a link the agent planted.

def test_the_candidate_a_symlink_to_the_sessions_key(tmp_path):
    """candidate.cu -> the session's chain key: the server (outside the domain) would read
    the key and keep its bytes under candidates/, which the agent reads. A candidate that is
    not a regular file of the workspace is no candidate: not read, refused, logged."""
    from socratic import chain

    sess, ws = make(tmp_path)
    sid = chain.indexed_id(sess)
    assert sid is not None
    key_file = chain.key_dir() / f"{sid}.key"
    secret = key_file.read_bytes()
    (ws / "candidate.cu").unlink()
    (ws / "candidate.cu").symlink_to(key_file)
    code, table = run_evaluate(sess, None)
    out = stop(sess, ws)
    assert_not_met(sess, out)
    for f in (*sess.rglob("*"), *Path(chain.state_home(), "sessions").rglob("*")):
        if f.is_file() and not f.is_symlink():
            assert secret.strip() not in f.read_bytes(), f
    assert "symlink" in table
    end = of(sess, "eval.end")[0]
    assert "symlink" in end["summary"]["error"]


def test_the_candidate_a_fifo_does_not_hold_the_campaign(tmp_path):
    """candidate.cu as a FIFO: reading it would block the server, the campaign's lock held,
    until the agent wrote it (every hook, the stop included, waiting on the agent)."""
    import os

    sess, ws = make(tmp_path)
    (ws / "candidate.cu").unlink()
    os.mkfifo(ws / "candidate.cu")
    code, table = run_evaluate(sess, None)
    assert "not a regular file" in table
    assert_not_met(sess, stop(sess, ws))
    # nor a FIFO among the workspace's task copies (hashed at every evaluation)
    (ws / "candidate.cu").unlink()
    (ws / "candidate.cu").write_text(candidate_source(1.0))
    (ws / "task" / "baseline.cu").unlink()
    os.mkfifo(ws / "task" / "baseline.cu")
    code, table = run_evaluate(sess, None)
    assert "task/baseline.cu in the workspace differ" in table
    assert_not_met(sess, stop(sess, ws))


def test_a_hand_made_hook_naming_a_fifo_as_its_transcript(tmp_path):
    """The agent talks to the session server's socket itself (it may: the hooks it runs do)
    and names a FIFO as its transcript: the server reads transcripts outside the agent's
    domain, and would wait on it with the campaign's lock held (every hook, the stop's
    included, stuck until the agent let go). It reads only regular files."""
    import os
    import threading

    from socratic.harness.attached.hookserver import HookServer, Request

    sess, ws = make(tmp_path)
    fifo = ws / "transcript.jsonl"
    os.mkfifo(fifo)
    server = HookServer(sess)
    payload = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "Stop",
                          "transcript_path": str(fifo)}).encode()
    got: list = []

    def ask() -> None:
        with server.lock:
            got.append(server.reply(Request("hook", "stop", 0.0, payload, "")))
    t = threading.Thread(target=ask, daemon=True)
    t.start()
    t.join(10)
    stuck = t.is_alive()
    if stuck:                              # let the blocked reader go before failing
        with open(fifo, "w"):
            pass
        t.join(20)
    assert not stuck and got, "the server waited on the agent's FIFO"
    assert_not_met(sess, json.loads(got[0][1]))


def test_the_launchers_hook_file_writes_through_a_workspace_link(tmp_path):
    """Before each launch (and after it) socratic, outside the agent's domain, empties and
    puts back the workspace's hook files (.codex/hooks.json, .codex/config.toml;
    .gemini/settings.json). The agent's previous run left them as links, to the session's
    log and to its chain key: followed, socratic would overwrite its own record and key
    (the log no longer a campaign's, the key a text the agent knows). The links are
    replaced, their targets untouched."""
    from socratic import chain
    from socratic.harness.attached import agentspec, hookcheck
    from socratic.harness.attached.agentlaunch import check_hooks
    from socratic.harness.core.sessionlog import SessionLog

    for agent, key_link, log_link in (("codex", ".codex/hooks.json", ".codex/config.toml"),
                                      ("gemini", ".gemini/settings.json", None)):
        sess, ws = make(tmp_path / agent, agent=agent)
        run_evaluate(sess, None)
        key_file = chain.key_dir() / f"{chain.indexed_id(sess)}.key"
        key, log = key_file.read_bytes(), (sess / "events.jsonl").read_bytes()
        for rel, target in ((key_link, key_file), (log_link, sess / "events.jsonl")):
            if rel is not None:
                (ws / rel).unlink()
                (ws / rel).symlink_to(target)
        spec = agentspec.load(agent)
        undo = check_hooks(sess, spec, SessionLog(sess, 0.0, role="attach"))
        for u in undo:
            u()
        hookcheck.put_back(sess, spec)
        assert key_file.read_bytes() == key, agent
        assert (sess / "events.jsonl").read_bytes().startswith(log), agent
        assert chain.verify(sess, (sess / "events.jsonl").read_bytes()).status == "verified"
        for rel in (key_link, log_link):
            if rel is not None:
                assert not (ws / rel).is_symlink() and (ws / rel).is_file()
        assert (ws / spec.config_file).read_bytes() == hookcheck.pristine(sess, spec).read_bytes()
        assert_not_met(sess, stop(sess, ws))


FORGE_PY = '''\
import hashlib, json, subprocess, sys
# the agent's `python3`: the fake evaluator's verdict on a 1.5x copy of what it is given
args = sys.argv[1:]
i = args.index("--candidate")
real = open(args[i + 1]).read()
fast = TMP + "/fast.cu"
open(fast, "w").write("// speedup: 1.5\\n" + real)
args[i + 1] = fast
out = subprocess.run([REAL, *args], stdout=subprocess.PIPE).stdout
doc = json.loads(out)
if isinstance(doc.get("candidate"), dict):
    doc["candidate"]["sha256"] = hashlib.sha256(real.encode()).hexdigest()
print(json.dumps(doc))
'''


def test_a_program_planted_in_a_path_folder_the_agent_writes(tmp_path, monkeypatch):
    """The engineer's PATH names a folder inside one the agent may write (here Claude
    Code's own ~/.claude/, as its local install puts it on PATH); the evaluator (a wrapper
    here, `nvcc` for socratic's own) runs programs found on PATH, in the session server,
    outside the agent's domain. The agent plants `python3` there: every evaluation says
    1.5x for the unchanged kernel. The server's PATH leaves out what the agent can write."""
    import os
    import socket as socketlib

    from socratic.harness.attached import agentlaunch
    from socratic.harness.attached.hookclient import PROTOCOL, ask

    home = tmp_path / "home"
    agent_bin = home / ".claude" / "local"
    agent_bin.mkdir(parents=True)
    user_bin = tmp_path / "userbin"
    user_bin.mkdir()
    (user_bin / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (user_bin / "python3").chmod(0o755)
    wrapper = user_bin / "fake-eval"
    wrapper.write_text('#!/bin/sh\nexec python3 -m socratic_doubles.fakeeval "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{agent_bin}:{user_bin}:{os.environ['PATH']}")
    sess, ws = make(tmp_path, evaluator=[str(wrapper)])
    launch = agentlaunch.prepare(sess, ["claude", "-p", "go"], "headless")
    try:
        # the agent, in its shell: a python3 of its own, first on the engineer's PATH
        (tmp_path / "forge.py").write_text(f"REAL = {sys.executable!r}\nTMP = {str(tmp_path)!r}\n"
                                          + FORGE_PY)
        planted = agent_bin / "python3"
        planted.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'forge.py'} \"$@\"\n")
        planted.chmod(0o755)
        s = socketlib.socket(socketlib.AF_UNIX)
        s.connect(launch.server.path)
        body = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "Stop",
                           "last_assistant_message": "Done."}).encode()
        reply = ask(s, "\t".join([PROTOCOL, "hook", "stop", repr(__import__("time").time()),
                                  str(len(body)), ""]), body)
        s.close()
    finally:
        launch.close()
    assert reply is not None
    assert_not_met(sess, json.loads(reply[2]))
    hook = of(sess, "stophook")[-1]
    assert not hook["met"] and hook["failing"][0]["speedup"] == 1.0
