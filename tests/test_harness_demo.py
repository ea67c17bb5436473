"""The demo recording's pieces on CPU: the scripted agent's kernels compile for sm_90a and
pass the ban check (when nvcc is here), and a dry run of benchmarks/record_demo.py with a
stand-in evaluator produces a campaign with every element the demo needs. The GPU test runs
a short scripted campaign on RMSNorm with the real evaluator."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic_doubles.demo import BUG_LINE, FIX_LINE, KERNELS, ScriptedAgent, answer_for, write_kernels

REPO = Path(__file__).resolve().parents[1]


def test_kernel_versions_differ_as_planned():
    v1, v2, v3 = (KERNELS[k]() for k in ("v1", "v2", "v3"))
    assert BUG_LINE in v1 and BUG_LINE not in v2 and FIX_LINE in v2
    assert v1.replace(BUG_LINE, FIX_LINE) == v2
    assert "rmsnorm_warp_kernel" in v3 and "rmsnorm_block_kernel" in v3 and BUG_LINE not in v3
    for v in (v1, v2, v3):
        assert 'extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t stream)' in v


@pytest.mark.skipif(not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()),
                    reason="nvcc not installed")
def test_kernels_build_and_pass_the_ban_check(tmp_path):
    files = write_kernels(tmp_path)
    for name, path in files.items():
        r = subprocess.run([sys.executable, "-m", "socratic.evaluator", "src/socratic/kernels/rmsnorm", "--check-only",
                            "--json", "--candidate", str(path)], cwd=REPO, capture_output=True,
                           text=True, timeout=300)
        doc = json.loads(r.stdout)
        assert doc["build"]["ok"], (name, doc["build"]["log"][-2000:])
        assert doc["bans"]["ok"], (name, doc["bans"])
        assert all(res["spill_stores"] == 0 for res in doc["build"]["resources"]), name


def test_scripted_agent_answers_questions_then_follows_plan():
    a = ScriptedAgent()
    first = a({"messages": [{"role": "user", "content": [{"type": "text", "text": "Begin."}]}]})
    assert [t[0] for t in first["tools"]] == ["read_file", "read_file"]
    q = ("Question from the engineer: How many bytes per row does it move?\n"
         "Answer it with a check, then continue.")
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": q}]}]}
    ans = a(body)
    assert ans["tools"][0][0] == "bash" and "TB/s" in ans["tools"][0][1]["command"]
    nxt = a(body)                    # the same question is not answered twice
    assert nxt["tools"] == [("evaluate", {})]
    assert answer_for("Where are the wrong elements?")[1] != answer_for("which registers?")[1]


def test_record_demo_dry_run(tmp_path):
    sess = tmp_path / "demo"
    r = subprocess.run([sys.executable, "benchmarks/record_demo.py", "--session-dir", str(sess),
                        "--evaluator", f"{sys.executable} -m socratic_doubles.fakeeval --rules demo",
                        "--chunk-delay", "0"], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[ ]" not in r.stdout
    events = [json.loads(x) for x in (sess / "events.jsonl").read_text().splitlines()]
    start = events[0]
    assert start["scenarios"]["set"] == "bench" and start["scenarios"]["ids"][0] == "r1-c4k"
    assert len(start["scenarios"]["ids"]) == 10
    kinds = {e["trigger"] for e in events if e["type"] == "question" and e.get("trigger")}
    assert {"start", "correctness_failure", "declared_done"} <= kinds
    assert (sess / "workspace/candidate.cu").read_text() == KERNELS["v3"]()
    assert "sk-demo" not in (sess / "events.jsonl").read_text()


@pytest.mark.gpu
@pytest.mark.slow
def test_short_campaign_on_rmsnorm_with_the_real_evaluator(tmp_path):
    pytest.importorskip("anthropic")
    from socratic.harness.api.campaign import Campaign
    from socratic.harness.core.config import Config
    from socratic_doubles.fakeapi import FakeAnthropic
    from socratic_doubles.testing import FAKE_KEY

    def write(v):
        return ("write_file", {"path": "candidate.cu", "content": KERNELS[v]()})

    script = [{"text": "Baseline.", "tools": [("evaluate", {"scenarios": "smoke"})]},
              {"text": "Vectorized.", "tools": [write("v1"), ("evaluate", {"scenarios": "smoke"})]},
              {"text": "The reduction only summed half of the warps; using the fast version.",
               "tools": [write("v3")]},
              {"text": "Done."}]
    with FakeAnthropic(script) as api:
        c = Campaign.create(REPO / "src/socratic/kernels/rmsnorm", Config(goal_min_speedup=0.8,
                            scenarios="smoke", retry_base_s=0.1), session_dir=tmp_path / "s",
                            api_key=FAKE_KEY, base_url=api.url, suggester=lambda k, a, t: [])
        reason = c.run()
    events = [json.loads(x) for x in (c.session.dir / "events.jsonl").read_text().splitlines()]
    ends = [e for e in events if e["type"] == "eval.end"]
    assert ends[0]["summary"]["all_correct"] and not ends[1]["summary"]["all_correct"]
    assert any(e["type"] == "trigger" and e["kind"] == "correctness_failure" for e in events)
    hooks = [e for e in events if e["type"] == "stophook"]
    assert hooks[-1]["met"], hooks[-1]
    assert reason == "goal_met"
