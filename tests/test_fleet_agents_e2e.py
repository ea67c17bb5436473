"""Fleets of the real outside agents (issue 25), end to end against socratic's fake APIs and
the fake evaluator, on the bundled rmsnorm task:

- `socratic fleet run` of a fleet file with one campaign per agent (Claude Code, Codex CLI,
  Gemini CLI), each run headless by `socratic attach --headless`: all three reach
  goal_met, and `socratic report FLEET` compares them by agent;
- a Claude Code campaign on a real single-node Slurm (tests/slurm_cluster.py), preempted
  while it works (the USR2 Slurm sends), requeued, and resumed on the same session by
  `socratic attach DIR --resume --headless` to goal_met.

Needs the pinned agents (.ci/run installs them), found as $SOCRATIC_CLAUDE, $SOCRATIC_CODEX,
$SOCRATIC_GEMINI or on PATH, and `socratic attach --headless`; skipped, saying why, without
them (the Slurm test also without root and Slurm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.fakegemini import FakeGemini
from socratic_doubles.fakeopenai import FakeResponses
from socratic_doubles.testing import FAKE_EVALUATOR
from tests.test_attach_codex import PROVIDER as CODEX_PROVIDER
from tests.test_fleet_slurm import cluster, events, wait_for  # noqa: F401 - cluster: a fixture

REPO = Path(__file__).resolve().parents[1]
BINARIES = {name: shutil.which(os.environ.get(f"SOCRATIC_{name.upper()}") or name)
            for name in ("claude", "codex", "gemini")}
EDIT = "echo '// speedup: 1.35' >> candidate.cu"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _headless() -> bool:
    out = subprocess.run([sys.executable, "-m", "socratic", "attach", "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    return "--headless" in out


def need(*agents: str) -> None:
    missing = [a for a in agents if BINARIES[a] is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (npm install the versions .ci/run "
                    f"pins; put their bin on PATH or in $SOCRATIC_<NAME>)")
    if not _headless():
        pytest.skip("`socratic attach --headless` is not in this checkout")


def finisher(tool: str, key: str, extra: dict | None = None):
    """A stateless agent: the faster candidate written once, then done (the stop hook
    evaluates it: goal met)."""
    def step(body: dict) -> dict:
        if "speedup: 1.35" in json.dumps(body):
            return {"text": "Done: the candidate meets the goal."}
        return {"text": "A faster version.", "tools": [(tool, {key: EDIT, **(extra or {})})]}
    return step


CLAUDE_STEP = ("Bash", "command", {"description": "faster"})


def agents_env(tmp: Path, claude_url: str | None = None) -> dict[str, str]:
    """The environment every campaign inherits: the agents' binaries on PATH, a home of
    the test's own, the fake evaluator."""
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    dirs = [str(Path(b).parent) for b in BINARIES.values() if b]
    env.update(PATH=os.pathsep.join([*dict.fromkeys(dirs), env.get("PATH", "")]),
               HOME=str(tmp), SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR),
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")
    if claude_url:
        env.update(ANTHROPIC_BASE_URL=claude_url, ANTHROPIC_API_KEY="sk-test-fleet-claude")
    return env


THREE = """
[fleet]
executor = "local"
max_parallel = 3
gpus = "none"

[[campaign]]
task = "rmsnorm"
agent = "claude"
questions = "auto"
goal_min_speedup = 1.3
max_minutes = 10

[[campaign]]
task = "rmsnorm"
agent = "codex"
questions = "human"
goal_min_speedup = 1.3
max_minutes = 10

[[campaign]]
task = "rmsnorm"
agent = "gemini"
model = "gemini-2.5-flash"
goal_min_speedup = 1.3
max_minutes = 10
"""


def test_a_fleet_of_claude_codex_and_gemini_meets_the_goal(tmp_path):
    need("claude", "codex", "gemini")
    f = tmp_path / "agents.toml"
    f.write_text(THREE)
    d = tmp_path / "fleet"
    names = ["01-rmsnorm-claude-auto", "02-rmsnorm-codex-human", "03-rmsnorm-gemini-none"]
    # the user's side of Gemini: API-key auth and the workspace trusted
    user = tmp_path / ".gemini"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    ws = (d / names[2] / "workspace").resolve()
    (user / "trustedFolders.json").write_text(json.dumps({str(ws): "TRUST_FOLDER"}))
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    with FakeAnthropic(default=finisher(*CLAUDE_STEP)) as claude, \
            FakeResponses(default=finisher("exec_command", "cmd")) as codex, \
            FakeGemini(default=finisher("run_shell_command", "command")) as gemini:
        (codex_home / "config.toml").write_text(CODEX_PROVIDER.format(url=codex.url))
        env = agents_env(tmp_path, claude.url)
        env.update(CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-test-fleet-codex",
                   GEMINI_API_KEY="gm-test-fleet-key", GOOGLE_GEMINI_BASE_URL=gemini.url)
        r = subprocess.run([sys.executable, "-m", "socratic", "fleet", "run", str(f),
                            "--session-dir", str(d)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=840)
        logs = "\n".join(f"--- {n}: " + (d / n / "campaign.log").read_text(errors="replace")[-1500:]
                         for n in names if (d / n / "campaign.log").exists())
        assert r.returncode == 0, r.stderr[-3000:] + logs
        assert claude.requests and codex.requests and gemini.requests
    for name, agent in zip(names, ("claude", "codex", "gemini"), strict=True):
        evts = events(d / name)
        assert evts[0]["type"] == "campaign.start" and evts[0]["agent"].startswith(agent)
        assert evts[-1]["type"] == "campaign.end" and evts[-1]["reason"] == "goal_met", \
            (name, evts[-1], logs)
        assert [h["met"] for h in evts if h["type"] == "stophook"][-1] is True
        assert any(e["type"] == "tool.call" for e in evts)   # its hooks reported its work
        assert f"{name}: ended: goal_met" in r.stderr
    st = subprocess.run([sys.executable, "-m", "socratic", "fleet", "status", str(d), "--json"],
                        env=env, capture_output=True, text=True, timeout=60)
    rows = json.loads(st.stdout)["campaigns"]
    assert [(x["agent"], x["questions"], x["reason"], x["met"]) for x in rows] == [
        ("claude", "auto", "goal_met", True), ("codex", "human", "goal_met", True),
        ("gemini", "none", "goal_met", True)]
    assert any(e["type"] == "question" and e["source"] == "auto"
               for e in events(d / names[0]))        # auto: the bank's question was posed
    rep = subprocess.run([sys.executable, "-m", "socratic", "report", str(d), "--json"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    by_agent = json.loads(rep.stdout)["by"]["agent"]
    assert [g["agent"].split()[0] for g in by_agent] == ["claude", "codex", "gemini"]
    assert all(g["n"] == 1 and g["goal_met"] == 1 and g["no_result"] == 0 for g in by_agent)
    assert all(g["best"]["best_min"] == pytest.approx(1.35) for g in by_agent)
    by_mode = json.loads(rep.stdout)["by"]["questions_mode"]
    assert [(g["questions_mode"], g["n"]) for g in by_mode] == [("auto", 1), ("human", 1),
                                                                 ("none", 1)]
    words = subprocess.run([sys.executable, "-m", "socratic", "report", str(d)], env=env,
                           capture_output=True, text=True, timeout=120).stdout
    assert "by agent (medians" in words
    for agent in ("claude", "codex", "gemini"):
        assert f"rmsnorm / {agent}" in words


def test_a_preempted_claude_code_campaign_on_slurm_resumes_to_its_goal(tmp_path, request):
    need("claude")
    slurm = request.getfixturevalue("cluster")   # not a parameter: skip first, then start
    f = tmp_path / "slurm.toml"
    f.write_text("""
[fleet]
executor = "slurm"
slurm_time = "00:30:00"
slurm_cpus_per_task = 1

[[campaign]]
task = "rmsnorm"
agent = "claude"
goal_min_speedup = 1.3
""")
    d = tmp_path / "fleet"
    name = "01-rmsnorm-claude-none"
    sess = d / name
    busy = {"text": "Measuring first.",
            # a bare `sleep 120` Claude Code refuses to run
            "tools": [("Bash", {"command": "python3 -c 'import time; time.sleep(120)'",
                                "description": "measure", "timeout": 300000})]}
    with FakeAnthropic([busy], default=finisher(*CLAUDE_STEP)) as api:
        env = {**agents_env(tmp_path, api.url), "SLURM_CONF": slurm.env["SLURM_CONF"]}
        p = subprocess.Popen([sys.executable, "-m", "socratic", "fleet", "run", str(f),
                              "--session-dir", str(d)], env=env, cwd=REPO, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # the agent is working: its tool call runs (its output shows it)
            log = sess / "agent.log"
            wait_for(lambda: log.exists() and b"time.sleep(120)" in log.read_bytes(), 180,
                     "the agent to work", p)
            time.sleep(3)
            assert not any(e["type"] == "campaign.end" for e in events(sess))
            job = json.loads((d / "fleet.json").read_text())["runs"][name]["job"]
            # what Slurm sends a job before its time limit or when it is preempted
            slurm.run("scancel", "--signal=USR2", job)
            wait_for(lambda: any(e["type"] == "campaign.end" for e in events(sess)), 120,
                     "the campaign to end cleanly", p)
            ends = [e for e in events(sess) if e["type"] == "campaign.end"]
            assert ends[0]["reason"] == "interrupted", ends
            wait_for(lambda: "PENDING" in slurm.run("squeue", "--noheader", "--format=%T",
                                                      f"--jobs={job}"), 60, "the requeue", p)
            time.sleep(2)   # see tests/test_fleet_slurm.py: a relaunch in the same second fails
            slurm.run("scontrol", "update", f"jobid={job}", "StartTime=now")
            out, err = p.communicate(timeout=420)
        finally:
            if p.poll() is None:
                p.kill()
        logs = (sess / "campaign.log").read_text(errors="replace")[-3000:] \
            if (sess / "campaign.log").exists() else ""
        assert p.returncode == 0, err[-3000:] + "\n" + logs + "\n" + slurm.log_tail()
    evts = events(sess)
    types = [e["type"] for e in evts]
    assert types.count("campaign.start") == 1 and types.count("campaign.resume") >= 1
    assert [e["reason"] for e in evts if e["type"] == "campaign.end"] == \
        ["interrupted", "goal_met"], logs
    assert evts[0]["agent"].startswith("claude")
    assert [e["seq"] for e in evts] == list(range(1, len(evts) + 1))   # one session, one log
    assert f"{name}: ended: goal_met" in err
    st = subprocess.run([sys.executable, "-m", "socratic", "fleet", "status", str(d), "--json"],
                        env=env, capture_output=True, text=True, timeout=60)
    row = json.loads(st.stdout)["campaigns"][0]
    assert (row["agent"], row["state"], row["reason"], row["job"]) == \
        ("claude", "ended", "goal_met", job)
