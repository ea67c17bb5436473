"""`socratic fleet run` (local executor) and `socratic fleet status` with the fake API and
the fake evaluator: three campaigns (two auto, one none) end in three sessions; GPUs are
spread and queues respected; Ctrl-C ends campaigns cleanly and a rerun continues them;
bad fleet files are one line naming file:line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socratic.cli import main
from socratic.eventlog import read_jsonl
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_EVALUATOR, FAKE_KEY, candidate_source, make_task

REPO = Path(__file__).resolve().parents[1]


def agent(speedup: float = 1.5, sleep: float = 0.2, busy_s: float = 0.0):
    """A stateless scripted agent (any number of campaigns share the server): writes a
    faster candidate, optionally works `busy_s` seconds, then declares it done."""

    def step(body: dict) -> dict:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turns == 0:
            return {"text": "A faster kernel.", "tools": [(
                "write_file", {"path": "candidate.cu",
                               "content": candidate_source(speedup, f"// sleep: {sleep}")})]}
        if turns == 1 and busy_s:
            return {"text": "Measuring.", "tools": [("bash", {"command": f"sleep {busy_s}"})]}
        return {"text": "Done: the goal is met."}
    return step


def env_for(api: FakeAnthropic, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update({"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": api.url,
                "SOCRATIC_EVALUATOR": " ".join(FAKE_EVALUATOR), "ANTHROPIC_MODEL": "claude-test",
                **extra})
    return env


def fleet_file(tmp: Path, body: str, name: str = "fleet.toml") -> Path:
    task = make_task(tmp)
    f = tmp / name
    f.write_text(body.replace("TASK", str(task)))
    return f


THREE = """
[fleet]
executor = "local"
max_parallel = 3
gpus = ["0", "1"]

[[campaign]]
task = "TASK"
questions = "auto"
repeat = 2
max_turns = 10

[[campaign]]
task = "TASK"
questions = "none"
max_tool_calls = 20
"""


def fleet(*args: str, api: FakeAnthropic, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "socratic", "fleet", *args],
                            env=env_for(api), cwd=kw.pop("cwd", REPO), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def events(d: Path) -> list[dict]:
    p = Path(d) / "events.jsonl"
    return read_jsonl(p)[0] if p.exists() else []


def status_json(d: Path, api: FakeAnthropic) -> dict:
    p = fleet("status", str(d), "--json", api=api)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    return json.loads(out)


def test_three_campaigns_two_auto_one_none(tmp_path):
    f = fleet_file(tmp_path, THREE)
    d = tmp_path / "fleet-out"
    with FakeAnthropic(default=agent()) as api:
        p = fleet("run", str(f), "--session-dir", str(d), api=api)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        doc = status_json(d, api)
    names = ["01-tiny-auto", "02-tiny-auto", "03-tiny-none"]
    assert sorted(x.name for x in d.iterdir() if (x / "events.jsonl").exists()) == names
    rows = doc["campaigns"]
    assert [r["name"] for r in rows] == names
    assert all(r["state"] == "ended" and r["reason"] == "goal_met" for r in rows), rows
    assert [r["questions"] for r in rows] == ["auto", "auto", "none"]
    assert all(r["task"] == "tiny" and r["agent"] == "socratic" for r in rows)
    assert all(r["evaluations"] == 1 and r["best_geomean"] == pytest.approx(1.5)
               and r["best_min"] == pytest.approx(1.5) and r["goal"] == 1.2 and r["met"]
               for r in rows)
    assert all(r["cost_usd"] > 0 and r["pending"] == 0 for r in rows)
    # questions mode reached each campaign; GPUs spread over the two given
    for name, auto in zip(names, (True, True, False), strict=False):
        evts = events(d / name)
        assert evts[0]["type"] == "campaign.start" and evts[0]["auto_questions"] is auto
        asked = [e for e in evts if e["type"] == "question" and e["source"] == "auto"]
        assert bool(asked) is auto
    gpus = [r["gpu"] for r in rows]
    assert sorted(gpus) == ["0", "0", "1"]
    for name, gpu in zip(names, gpus, strict=False):
        assert json.loads((d / name / "evals" / "0001.json").read_text())["gpu_lock"] == \
            f"index-{gpu}"
    manifest = json.loads((d / "fleet.json").read_text())
    assert manifest["schema"] == "socratic.fleet/1"
    assert [c["name"] for c in manifest["campaigns"]] == names
    assert (d / "fleet.toml").read_text() == f.read_text()
    assert "01-tiny-auto: ended: goal_met" in err
    # the text table, and a session of the fleet works as any session
    assert main(["fleet", "status", str(d)]) == 0


def test_a_fleet_with_a_task_path_relative_to_its_file_is_continued_from_its_folder(tmp_path):
    # `socratic fleet run DIR` re-read DIR/fleet.toml, whose relative task path then meant
    # DIR/<task>: "no such task directory"
    make_task(tmp_path / "lab")                           # lab/tiny_task
    f = tmp_path / "lab" / "my fleet.toml"
    f.write_text('[fleet]\ngpus = "none"\n[[campaign]]\ntask = "tiny_task"\nmax_turns = 5\n')
    d = tmp_path / "runs" / "out dir"
    with FakeAnthropic(default=agent()) as api:
        p = fleet("run", str(f), "--session-dir", str(d), api=api)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        p = fleet("run", str(d), api=api)
        _, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "Traceback" not in err, err
    assert "0 of 1 campaigns to run" in err
    assert (d / "fleet.toml").read_text() == f.read_text()


def test_max_parallel_queues_the_rest_and_shared_gpus_take_turns(tmp_path):
    f = fleet_file(tmp_path, """
[fleet]
max_parallel = 2
gpus = ["0"]

[[campaign]]
task = "TASK"
repeat = 3
""")
    d = tmp_path / "q"
    with FakeAnthropic(default=agent(sleep=0.4)) as api:
        p = fleet("run", str(f), "--session-dir", str(d), api=api)
        seen_queued = False
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            if (d / "fleet.json").exists():
                rows = status_json(d, api)["campaigns"]
                states = [r["state"] for r in rows]
                assert states.count("running") + states.count("starting") <= 2
                seen_queued |= states[2] == "queued" and states[0] != "queued"
                if seen_queued:
                    break
            time.sleep(0.1)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert seen_queued
    starts = {n: events(d / n)[0]["ts"] for n in ("01-tiny-none", "02-tiny-none", "03-tiny-none")}
    ends = {n: [e for e in events(d / n) if e["type"] == "campaign.end"][0]["ts"] for n in starts}
    assert starts["03-tiny-none"] >= min(ends["01-tiny-none"], ends["02-tiny-none"])
    # both running campaigns evaluated on GPU 0: they took turns, and the wait was logged
    ends_ev = [e for n in starts for e in events(d / n) if e["type"] == "eval.end"]
    waits = [e for n in starts for e in events(d / n) if e["type"] == "eval.wait"]
    assert all("gpu_wait_s" in e for e in ends_ev)
    if waits:  # the two first evaluations overlapped (they usually do)
        assert waits[0]["gpu"] == "index-0" and "fakeeval" in waits[0]["holder"]
        assert max(e["gpu_wait_s"] for e in ends_ev) > 0.2


def test_ctrl_c_ends_campaigns_cleanly_and_a_rerun_continues(tmp_path):
    f = fleet_file(tmp_path, """
[fleet]
gpus = "none"
max_parallel = 1

[[campaign]]
task = "TASK"
questions = "auto"
repeat = 2
""")
    d = tmp_path / "c"
    with FakeAnthropic(default=agent(busy_s=30)) as api:
        p = fleet("run", str(f), "--session-dir", str(d), api=api)
        first = d / "01-tiny-auto"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                e["type"] == "tool.call" and e["name"] == "bash" for e in events(first)):
            time.sleep(0.05)
        rows = status_json(d, api)["campaigns"]
        assert [r["state"] for r in rows] == ["running", "queued"]
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=90)
        assert p.returncode == 130, err
        assert [e for e in events(first) if e["type"] == "campaign.end"][-1]["reason"] == \
            "interrupted"
        assert not events(d / "02-tiny-auto")
        rows = status_json(d, api)["campaigns"]
        assert [(r["state"], r["reason"]) for r in rows] == [
            ("ended", "interrupted"), ("not started", None)]
        # the rerun, on the folder: the interrupted one resumes, the other starts
        api.default = agent(busy_s=0)
        p = fleet("run", str(d), api=api)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert [e["type"] for e in events(first)].count("campaign.resume") == 1
    assert events(first)[-1]["reason"] == "goal_met"
    assert [e for e in events(d / "02-tiny-auto") if e["type"] == "campaign.end"][-1][
        "reason"] == "goal_met"


def test_a_killed_campaign_is_resumed_by_the_rerun(tmp_path):
    f = fleet_file(tmp_path, """
[[campaign]]
task = "TASK"
""")
    d = tmp_path / "k"
    with FakeAnthropic(default=agent(busy_s=30)) as api:
        p = fleet("run", str(f), "--session-dir", str(d), api=api)
        sess = d / "01-tiny-none"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                e["type"] == "tool.call" and e["name"] == "bash" for e in events(sess)):
            time.sleep(0.05)
        pid = json.loads((d / "fleet.json").read_text())["runs"]["01-tiny-none"]["pid"]
        p.kill()               # the runner dies, then its campaign
        p.communicate(timeout=30)
        os.killpg(pid, signal.SIGKILL)
        time.sleep(0.3)
        rows = status_json(d, api)["campaigns"]
        assert rows[0]["state"] == "stopped", rows
        api.default = agent(busy_s=0)
        p = fleet("run", str(d), api=api)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    types = [e["type"] for e in events(sess)]
    assert types.count("campaign.resume") == 1 and events(sess)[-1]["reason"] == "goal_met"


@pytest.mark.parametrize("body, message", [
    ("[fleet]\nexecutor = \"cloud\"\n[[campaign]]\ntask = \"TASK\"\n",
     "fleet.toml:2: `executor` must be one of local, slurm (got 'cloud')"),
    ("[[campaign]]\ntask = \"TASK\"\nquestions = \"sometimes\"\n",
     "fleet.toml:3: `questions` must be one of none, auto, human (got 'sometimes')"),
    ("[[campaign]]\ntask = \"TASK\"\n\n[[campaign]]\ntask = \"TASK\"\nmax_turns = -3\n",
     "fleet.toml:6: `max_turns` must be positive (got -3)"),
    ("[[campaign]]\ntask = \"TASK\"\nmax_turn = 3\n",
     "fleet.toml:3: unknown campaign key `max_turn`"),
    ("[[campaign]]\ntask = \"TASK\"\nauto_questions = true\n",
     "unknown campaign key `auto_questions` (use `questions`)"),
    ("[[campaign]]\ntask = \"no-such-task\"\n",
     "fleet.toml:2: task 'no-such-task': no-such-task: no such task directory or bundled "
     "task (bundled tasks: flash_attn_fwd, rmsnorm)"),
    ("[[campaign]]\ntask = \"rmsnrom\"\n", "did you mean rmsnorm?"),
    ("[[campaign]]\ntask = \"TASK\"\nrepeat = 0\n",
     "fleet.toml:3: `repeat` must be a whole number >= 1 (got 0)"),
    ("[fleet]\ngpus = \"most\"\n[[campaign]]\ntask = \"TASK\"\n",
     "fleet.toml:2: `gpus` must be"),
    ("[fleet]\nmax_parallel = 2\n", "no [[campaign]] table"),
    ("campaign = [1]\n", "fleet.toml: `campaign` must be [[campaign]] tables (got [1])"),   # a traceback
    ("[fleet\n", "fleet.toml: "),
    ("[fleet]\nslurm_partition = \"gpu\"\nexecutor = \"slurm\"\nslurm_colour = 1\n"
     "[[campaign]]\ntask = \"TASK\"\n", "unknown Slurm parameter `slurm_colour`"),
])
def test_bad_fleet_files_are_one_line(tmp_path, capsys, monkeypatch, body, message):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    f = fleet_file(tmp_path, body)
    assert main(["fleet", "run", str(f), "--session-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()          # nothing was created


def test_a_folder_holding_another_fleet_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    from socratic.fleet.folder import open_fleet
    from socratic.fleet.spec import load_fleet

    d = tmp_path / "f"
    open_fleet(load_fleet(fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n")), d)
    other = fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\nmax_turns = 5\n", "other.toml")
    assert main(["fleet", "run", str(other), "--session-dir", str(d)]) == 2
    err = capsys.readouterr().err
    assert "holds another fleet (01-tiny-none" in err and len(err.strip().splitlines()) == 1
    assert main(["fleet", "status", str(tmp_path)]) == 2
    assert "not a fleet folder" in capsys.readouterr().err
    rows = json.loads(_status(d, capsys))["campaigns"]
    assert rows[0]["state"] == "not started"


@pytest.mark.parametrize("damage, message", [
    (lambda d: [1, 2], "not a fleet manifest (a JSON list, not an object)"),
    (lambda d: {**d, "executor": None}, "`executor` is None, not a name"),
    (lambda d: {k: v for k, v in d.items() if k != "campaigns"}, "no `campaigns` list"),
    (lambda d: {**d, "campaigns": "x"}, "`campaigns` is a str, not a list"),
    (lambda d: {**d, "campaigns": [{}]}, "campaigns[0].name is None, not a non-empty string"),
    (lambda d: {**d, "campaigns": [{**d["campaigns"][0], "name": 5}]},
     "campaigns[0].name is 5, not a non-empty string"),
    (lambda d: {**d, "campaigns": [{**d["campaigns"][0], "name": "../elsewhere"}]},
     "campaigns[0].name '../elsewhere' is not a folder name"),
    (lambda d: {**d, "runs": []}, "`runs` is a list, not an object"),
])
def test_a_damaged_manifest_is_one_line_in_words(tmp_path, capsys, monkeypatch, damage, message):
    # the messages were Python's: "('list' object has no attribute 'get')", "('executor')"
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    from socratic.fleet.folder import open_fleet
    from socratic.fleet.spec import load_fleet

    d = tmp_path / "f"
    open_fleet(load_fleet(fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n")), d)
    manifest = d / "fleet.json"
    broken = json.dumps(damage(json.loads(manifest.read_text())))
    manifest.write_text(broken)
    for verb in (["fleet", "status", str(d)], ["fleet", "run", str(d)], ["report", str(d)]):
        code = main(verb)
        err = capsys.readouterr().err
        if verb[0] == "report":        # a folder of sessions: the manifest only labels them
            assert "Traceback" not in err
            continue
        assert code == 2 and err.startswith(f"socratic: error: {manifest}: ") and message in err
        assert len(err.strip().splitlines()) == 1, err
    assert manifest.read_text() == broken              # nothing rewritten


def test_a_fleet_folder_where_one_session_is_expected_names_its_campaigns(tmp_path, capsys,
                                                                        monkeypatch):
    # they said only "no events.jsonl" / "not a fleet folder"
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    from socratic.fleet.folder import open_fleet
    from socratic.fleet.spec import load_fleet

    d = tmp_path / "f"
    open_fleet(load_fleet(fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n")), d)
    (d / "01-tiny-none").mkdir()
    (d / "01-tiny-none" / "events.jsonl").write_text("")
    for argv, needle in (
            (["replay", str(d)], f"e.g. {d / '01-tiny-none'}; `socratic watch {d}` shows them"),
            (["inject", str(d), "--text", "q"], f"e.g. {d / '01-tiny-none'}"),
            (["run", "--resume", str(d), "--headless"], f"`socratic fleet run {d}` continues"),
            (["fleet", "status", str(d / "01-tiny-none")],
             f"a campaign of the fleet {d}: `socratic fleet status {d}`")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, err


def _status(d: Path, capsys) -> str:
    assert main(["fleet", "status", str(d), "--json"]) == 0
    return capsys.readouterr().out


def test_no_api_key_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    f = fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n")
    assert main(["fleet", "run", str(f)]) == 2
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err


def test_a_campaign_another_process_holds_is_left_to_it(tmp_path):
    """Session ownership: a campaign held by a live process (say `socratic run --resume`
    typed by hand) is not started twice; it counts against max_parallel until it lets go."""
    from socratic.fleet.folder import open_fleet
    from socratic.fleet.spec import load_fleet
    from socratic.ownership import SessionOwner

    f = fleet_file(tmp_path, "[fleet]\ngpus = \"none\"\nmax_parallel = 1\n"
                             "[[campaign]]\ntask = \"TASK\"\nrepeat = 2\n")
    d = tmp_path / "h"
    open_fleet(load_fleet(f), d)
    held = d / "01-tiny-none"
    held.mkdir()
    (held / "events.jsonl").write_text(json.dumps(
        {"seq": 1, "t": 0.0, "type": "campaign.start", "task": "tiny",
         "goal": {"min_speedup": 1.2, "against": "baseline"}}) + "\n")
    owner = SessionOwner.claim(held, role="campaign")
    with FakeAnthropic(default=agent()) as api:
        p = fleet("run", str(d), api=api)
        time.sleep(3)
        assert not events(d / "02-tiny-none")      # the one slot is the held campaign's
        with open(held / "events.jsonl", "a") as fh:
            fh.write(json.dumps({"seq": 2, "t": 1.0, "type": "campaign.end",
                                 "reason": "stopped"}) + "\n")
        owner.release()
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert "01-tiny-none: already running in another process; left to it" in err
    assert [e["type"] for e in events(held)] == ["campaign.start", "campaign.end"]
    assert events(d / "02-tiny-none")[-1]["reason"] == "goal_met"


def test_one_runner_per_fleet(tmp_path, capsys, monkeypatch):
    from socratic.fleet.folder import RunnerLock, open_fleet
    from socratic.fleet.spec import load_fleet

    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    d = tmp_path / "one"
    open_fleet(load_fleet(fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n")), d)
    lock = RunnerLock(d)
    try:
        assert main(["fleet", "run", str(d)]) == 2
    finally:
        lock.release()
    err = capsys.readouterr().err
    assert f"{d}: a `socratic fleet run` already drives this fleet (pid {os.getpid()}" in err
    assert len(err.strip().splitlines()) == 1
