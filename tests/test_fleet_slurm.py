"""The Slurm executor on a real single-node Slurm (slurmctld + slurmd + munged started
here as root; see tests/slurm_cluster.py), with the fake API and the fake evaluator: a
campaign runs as a Slurm job; the signal Slurm sends before a time limit or a preemption
(USR2) ends the campaign cleanly, submitit requeues the job, and the requeued job resumes
the session to its goal. Skipped, saying why, where Slurm cannot be started."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socratic.eventlog import read_jsonl
from socratic_doubles.fakeapi import FakeAnthropic
from tests.slurm_cluster import Cluster, why_not
from tests.test_fleet import REPO, agent, env_for, fleet_file

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = why_not()
    if why:
        pytest.skip(why)
    c = Cluster(tmp_path_factory.mktemp("slurm")).start()
    yield c
    c.stop()


def events(d: Path) -> list[dict]:
    p = d / "events.jsonl"
    return read_jsonl(p)[0] if p.exists() else []


def wait_for(pred, timeout: float, what: str, p: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        if p is not None and p.poll() is not None:
            raise AssertionError(f"{what}: the fleet runner exited: {p.stderr.read()}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_campaign_on_slurm_resumes_after_preemption(cluster, tmp_path):
    f = fleet_file(tmp_path, """
[fleet]
executor = "slurm"
slurm_time = "00:30:00"
slurm_cpus_per_task = 1

[[campaign]]
task = "TASK"
questions = "auto"
""")
    d = tmp_path / "fleet"
    sess = d / "01-tiny-auto"
    with FakeAnthropic(default=agent(busy_s=60)) as api:
        env = {**env_for(api), "SLURM_CONF": cluster.env["SLURM_CONF"]}
        p = subprocess.Popen([sys.executable, "-m", "socratic", "fleet", "run", str(f),
                              "--session-dir", str(d)], env=env, cwd=REPO, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: any(e["type"] == "tool.call" and e["name"] == "bash"
                                 for e in events(sess)), 120, "the job's campaign to work", p)
            job = json.loads((d / "fleet.json").read_text())["runs"]["01-tiny-auto"]["job"]
            st = subprocess.run([sys.executable, "-m", "socratic", "fleet", "status", str(d),
                                 "--json"], env=env, capture_output=True, text=True, timeout=60)
            row = json.loads(st.stdout)["campaigns"][0]
            assert (row["state"], row["job"]) == ("running", job), row
            api.default = agent(busy_s=0)      # once resumed, it finishes
            # what Slurm sends a job before its time limit or when it is preempted
            cluster.run("scancel", "--signal=USR2", job)
            wait_for(lambda: any(e["type"] == "campaign.end" for e in events(sess)), 60,
                     "the campaign to end cleanly", p)
            assert [e for e in events(sess) if e["type"] == "campaign.end"][0]["reason"] == \
                "interrupted"
            # requeued: Slurm holds a requeued job 120 s; let it start soon
            wait_for(lambda: "PENDING" in cluster.run("squeue", "--noheader", "--format=%T",
                                                      f"--jobs={job}"), 60, "the requeue", p)
            # slurmd revoked the old run's credential with a one-second clock: a relaunch in
            # the same second is refused as "Job credential revoked" (seen in CI), which is
            # why Slurm itself holds requeued jobs; two seconds is enough for the test
            time.sleep(2)
            cluster.run("scontrol", "update", f"jobid={job}", "StartTime=now")
            out, err = p.communicate(timeout=240)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 0, err + "\n" + cluster.log_tail()
    types = [e["type"] for e in events(sess)]
    assert types.count("campaign.start") == 1 and types.count("campaign.resume") == 1
    ends = [e["reason"] for e in events(sess) if e["type"] == "campaign.end"]
    assert ends == ["interrupted", "goal_met"]
    assert f"01-tiny-auto: submitted as Slurm job {job}" in err
    assert "01-tiny-auto: ended: goal_met" in err
    st = subprocess.run([sys.executable, "-m", "socratic", "fleet", "status", str(d), "--json"],
                        env=env, capture_output=True, text=True, timeout=60)
    row = json.loads(st.stdout)["campaigns"][0]
    assert (row["state"], row["reason"], row["job"]) == ("ended", "goal_met", job)
    assert list((d / "slurm").glob("*_log.out"))      # submitit's job logs in the fleet


def test_a_rerun_leaves_ended_campaigns_and_bad_parameters_are_one_line(cluster, tmp_path):
    f = fleet_file(tmp_path, """
[fleet]
executor = "slurm"
slurm_partition = "no-such-partition"

[[campaign]]
task = "TASK"
""")
    with FakeAnthropic(default=agent()) as api:
        env = {**env_for(api), "SLURM_CONF": cluster.env["SLURM_CONF"]}
        r = subprocess.run([sys.executable, "-m", "socratic", "fleet", "run", str(f),
                            "--session-dir", str(tmp_path / "x")], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("socratic: error")]
    assert len(lines) == 1 and "sbatch refused" in lines[0] and "partition" in lines[0].lower()


def test_several_campaigns_go_as_one_job_array(cluster, tmp_path):
    f = fleet_file(tmp_path, """
[fleet]
executor = "slurm"
max_parallel = 2
slurm_cpus_per_task = 1

[[campaign]]
task = "TASK"
questions = "auto"

[[campaign]]
task = "TASK"
questions = "none"
""")
    d = tmp_path / "arr"
    with FakeAnthropic(default=agent(sleep=0.05)) as api:
        env = {**env_for(api), "SLURM_CONF": cluster.env["SLURM_CONF"]}
        r = subprocess.run([sys.executable, "-m", "socratic", "fleet", "run", str(f),
                            "--session-dir", str(d)], env=env, cwd=REPO, capture_output=True,
                           text=True, timeout=240)
    assert r.returncode == 0, r.stderr + "\n" + cluster.log_tail()
    runs = json.loads((d / "fleet.json").read_text())["runs"]
    jobs = [runs[n]["job"] for n in ("01-tiny-auto", "02-tiny-none")]
    assert jobs[0].endswith("_0") and jobs[1].endswith("_1")
    assert jobs[0].split("_")[0] == jobs[1].split("_")[0]          # one array
    assert "#SBATCH --array=0-1%2" in next((d / "slurm").glob("*_submission.sh")).read_text()
    for name in runs:
        assert [e["reason"] for e in events(d / name) if e["type"] == "campaign.end"] == \
            ["goal_met"]
