"""`socratic run --base-url URL --model M`: a campaign against any Anthropic-compatible
server (vLLM, SGLang, LiteLLM, llama.cpp), here the fake API answering as such a server
does: no prompt-cache fields in `usage`, no key required."""

from __future__ import annotations

import os
import subprocess
import sys

from socratic.eventlog import read_jsonl
from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.testing import FAKE_EVALUATOR, candidate_source, make_task


def run(*args, env):
    return subprocess.run([sys.executable, "-m", "socratic", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_run_against_a_local_server_without_key_or_cache_usage(tmp_path):
    task = make_task(tmp_path)
    script = [{"tools": [("write_file", {"path": "candidate.cu",
                                         "content": candidate_source(1.5)})]},
              {"text": "done"}]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["SOCRATIC_EVALUATOR"] = " ".join(FAKE_EVALUATOR)
    with FakeAnthropic(script, cache_usage=False) as api:
        r = run("run", str(task), "--headless", "--session-dir", str(tmp_path / "s"),
                "--base-url", api.url, "--model", "Qwen/Qwen3-Coder-30B-A3B-Instruct", env=env)
        assert r.returncode == 0, r.stderr
        assert [b["model"] for b in api.requests] == ["Qwen/Qwen3-Coder-30B-A3B-Instruct"] * 2
    events = read_jsonl(tmp_path / "s" / "events.jsonl")[0]
    usage = [e for e in events if e["type"] == "usage"]
    assert len(usage) == 2 and all(u["cache_read"] == 0 and u["cache_write"] == 0
                                   for u in usage)
    assert events[-1]["reason"] == "goal_met"


def test_base_url_must_be_http_and_a_key_is_still_needed_for_anthropic(tmp_path):
    task = make_task(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    r = run("run", str(task), "--headless", "--base-url", "localhost:8000", env=env)
    assert r.returncode == 2 and "not an http:// or https:// URL" in r.stderr
    r = run("run", str(task), "--headless", env=env)
    assert r.returncode == 2 and "ANTHROPIC_API_KEY is not set" in r.stderr
