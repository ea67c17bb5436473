"""Fleets of outside agents (issue 25), without the agents: a fleet file's `agent =
"claude" | "codex" | "gemini"` takes only `socratic attach`'s options; a campaign starts as
`socratic attach TASK --agent A --headless ...` and resumes as `socratic attach DIR
--resume --headless`; the ends that are no result (hooks_silent, agent_exited) are shown
apart from goal_met in fleet status, the fleet screen, the transcript and the report; the
report compares a fleet by questions mode and by agent. The real agents' runs are in
tests/test_fleet_agents_e2e.py."""

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
from socratic.errors import InputError
from socratic.fleet.folder import open_fleet
from socratic.fleet.spec import load_fleet
from socratic_doubles.testing import make_task
from tests.test_report import Log

MIXED = """
[fleet]
gpus = "none"

[[campaign]]
task = "TASK"
agent = "claude"
questions = "auto"
goal_min_speedup = 1.3
max_tool_calls = 40

[[campaign]]
task = "TASK"
agent = "codex"
questions = "human"
model = "gpt-test"

[[campaign]]
task = "TASK"
agent = "gemini"

[[campaign]]
task = "TASK"
max_turns = 5
"""


def fleet_file(tmp: Path, body: str) -> Path:
    task = make_task(tmp)
    f = tmp / "fleet.toml"
    f.write_text(body.replace("TASK", str(task)))
    return f


def test_agents_parse_with_attach_options_and_their_own_names(tmp_path):
    spec = load_fleet(fleet_file(tmp_path, MIXED))
    c = spec.campaigns
    assert [x.agent for x in c] == ["claude", "codex", "gemini", "socratic"]
    assert [x.name for x in c] == ["01-tiny-claude-auto", "02-tiny-codex-human",
                                   "03-tiny-gemini-none", "04-tiny-none"]
    assert [x.attached for x in c] == [True, True, True, False]
    assert c[0].args == ["--goal-min-speedup", "1.3", "--max-tool-calls", "40"]
    assert c[1].args == ["--model", "gpt-test"]


def test_start_and_resume_argv(tmp_path):
    from socratic.fleet.launch import campaign_argv

    spec = load_fleet(fleet_file(tmp_path, MIXED))
    claude, codex, gemini, own = spec.campaigns
    d = tmp_path / "s"
    assert claude.argv(d, resume=False) == [
        "attach", claude.task, "--agent", "claude", "--headless", "--session-dir", str(d),
        "--goal-min-speedup", "1.3", "--max-tool-calls", "40", "--auto-questions"]
    assert codex.argv(d, resume=False)[-3:] == ["--model", "gpt-test", "--wait-for-human"]
    assert gemini.argv(d, resume=False)[-1] == str(d)           # questions none: no flag
    for c in (claude, codex, gemini):   # settings and agent come from the session
        assert c.argv(d, resume=True) == ["attach", str(d), "--resume", "--headless"]
    assert own.argv(d, resume=False) == ["run", own.task, "--headless", "--session-dir",
                                         str(d), "--max-turns", "5"]
    assert own.argv(d, resume=True)[-1] == "--resume"
    # the launcher picks start or resume from the session's log
    assert campaign_argv(claude, d, "py")[:4] == ["py", "-m", "socratic", "attach"]
    assert campaign_argv(claude, d, "py")[4] == claude.task
    Log(agent="claude").write(d)
    assert campaign_argv(claude, d, "py")[3:] == ["attach", str(d), "--resume", "--headless"]


@pytest.mark.parametrize("body, message", [
    ("agent = \"claude\"\nbase_url = \"http://x\"\n",
     "fleet.toml:4: `base_url` is a `socratic run` option; agent claude takes goal_against, goal_hidden, "
     "goal_min_speedup, max_minutes, max_tool_calls, max_turns, model, scenarios"),
    ("agent = \"gemini\"\nwait_for_human = true\n", "fleet.toml:4: unknown campaign key"),
    ("agent = \"aider\"\n", "fleet.toml:3: `agent` must be one of socratic, claude, codex, "
     "gemini (got 'aider')"),
])
def test_bad_agent_options_are_one_line(tmp_path, capsys, monkeypatch, body, message):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    f = fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\n" + body)
    assert main(["fleet", "run", str(f), "--session-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_outside_agents_need_no_anthropic_key(tmp_path, monkeypatch):
    from socratic.fleet.cli import _api_key

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    only = load_fleet(fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\nagent = \"codex\"\n"))
    _api_key(only)                       # may be logged in: only the agent can tell
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        _api_key(load_fleet(fleet_file(tmp_path, MIXED)))   # socratic's loop needs it


SILENT = {"reason": "hooks_silent", "tools_reported": 5, "tools_logged": 0, "stop_consulted": 0}


def ended_fleet(tmp_path: Path) -> tuple[Path, list[str]]:
    """Three ended campaigns: claude goal_met, codex hooks_silent (after a stop hook that
    said met: still no result), gemini agent_exited."""
    f = open_fleet(load_fleet(fleet_file(tmp_path, MIXED.rsplit("[[campaign]]", 1)[0])),
                   tmp_path / "fleet")
    names = [c.name for c in f.campaigns]
    ends = [{"reason": "goal_met", "n": 1}, SILENT, {"reason": "agent_exited", "exit_code": 3}]
    for name, agent, end in zip(names, ("claude", "codex", "gemini"), ends, strict=True):
        log = Log(agent=agent)
        log.evaluate(1, 1.5, 1.4)
        log.emit("usage", input_tokens=10, output_tokens=5, cache_read=0, cache_write=0,
                 cost_usd=0.01, dt=30.0)
        if agent == "codex":
            log.emit("stophook", met=True, failing=[])
        log.emit("campaign.end", **end)
        log.write(f.session(name))
    return f.dir, names


def test_status_shows_the_agent_and_ends_that_are_no_result(tmp_path, capsys):
    from socratic.fleet import fleet_rows

    d, names = ended_fleet(tmp_path)
    rows = fleet_rows(d)
    assert [(r.agent, r.state, r.reason, r.met) for r in rows] == [
        ("claude", "ended", "goal_met", True), ("codex", "ended", "hooks_silent", False),
        ("gemini", "ended", "agent_exited", False)]
    assert rows[0].detail == ""
    assert rows[1].detail == ("hooks silent: the agent ran 5 tool calls, its hooks reported "
                              "0; stop hook consulted 0 times (not goal met)")
    assert rows[2].detail == ("the agent process exited with code 3 while the campaign ran "
                              "(not goal met)")
    assert main(["fleet", "status", str(d)]) == 0
    out = capsys.readouterr().out
    assert "ended: hooks_silent (NOT goal met)" in out and "ended: goal_met " in out
    assert f"{names[1]}: hooks silent: the agent ran 5" in out
    assert f"{names[2]}: the agent process exited with code 3" in out
    assert main(["fleet", "status", str(d), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(r["agent"], r["met"], bool(r["detail"])) for r in doc["campaigns"]] == [
        ("claude", True, False), ("codex", False, True), ("gemini", False, True)]


def test_fleet_table_and_transcript_say_no_result():
    from types import SimpleNamespace

    from socratic.tui.state import CampaignState
    from socratic.tui.widgets.event_block import render_block
    from socratic.tui.widgets.fleet_table import COLUMNS, cells, state_text

    row = SimpleNamespace(name="02", state="ended", reason="hooks_silent", detail="hooks silent",
                          gpu_waiting=False, goal=1.2, met=False, best_min=1.4,
                          best_geomean=1.5, evaluations=1, pending=0, questions="none",
                          last_trigger=None, agent="codex", task="tiny", cost_usd=0.0,
                          gpu=None, job=None)
    text = state_text(row)
    assert text.plain == "! ended: hooks_silent (not met)" and "red" in str(text.style)
    met = state_text(SimpleNamespace(**(row.__dict__ | {"reason": "goal_met", "detail": ""})))
    assert met.plain == "■ ended: goal_met" and str(met.style) == "green"
    keys = [k for k, _ in COLUMNS]
    assert cells(row)[keys.index("agent")] == "codex"
    assert keys.index("agent") == keys.index("questions") + 1
    st = CampaignState().apply_all([{"ts": "2026-12-01T00:00:00+00:00", "seq": 1, "t": 1.0,
                                     "type": "campaign.end", **SILENT}])
    assert st.end_reason == "hooks_silent"
    plain = render_block(st.blocks[-1]).plain
    assert "campaign end: hooks_silent" in plain and "its hooks reported 0" in plain


async def test_fleet_screen_title_counts_ends_that_are_no_result(tmp_path, monkeypatch):
    from socratic.tui.app import SocraticApp

    d, names = ended_fleet(tmp_path)
    app = SocraticApp(d, "fleet", clock=lambda: 1000.0, watch_files=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        title = str(app.screen.query_one("#fleet-title").render())
        assert "goal met 1/3 · ! 1 agent_exited · ! 1 hooks_silent" in title
        await pilot.press("down")
        await pilot.pause()
        detail = str(app.screen.query_one("#fleet-detail").render())
        assert "ended: hooks_silent: hooks silent: the agent ran 5 tool calls" in detail


def test_report_compares_by_agent_and_by_questions_mode(tmp_path):
    from socratic.report import build_report
    from socratic.report.text import markdown, text

    d, names = ended_fleet(tmp_path)
    extra = Log(agent="claude", questions="none")     # a second claude: not met, no usage
    extra.evaluate(1, 1.1, 1.05)
    extra.emit("campaign.end", reason="stalled")
    extra.write(d / "04-tiny-claude-none")
    rep = build_report([d])
    by_agent = {g["agent"]: g for g in rep.by["agent"]}
    assert sorted(by_agent) == ["claude", "codex", "gemini"]
    c = by_agent["claude"]
    assert (c["n"], c["goal_met"], c["no_result"], c["cost_known"]) == (2, 1, 0, 1)
    assert c["best"] == {"session": names[0], "best_min": 1.4, "best_geomean": 1.5,
                         "goal_met": True}
    assert c["medians"]["tool_calls_to_goal"] == 1 and c["medians"]["cost_usd"] == 0.01
    assert (by_agent["codex"]["goal_met"], by_agent["codex"]["no_result"]) == (0, 1)
    assert by_agent["codex"]["medians"]["tool_calls_to_goal"] is None   # its met stands not
    assert by_agent["codex"]["best"] is None          # no result is never the best
    by_mode = {g["questions_mode"]: g for g in rep.by["questions_mode"]}
    assert {k: g["n"] for k, g in by_mode.items()} == {"auto": 1, "human": 1, "none": 2}
    codex = next(s for s in rep.sessions if s.agent == "codex")
    assert not codex.goal_met and codex.time_to_goal_s is None
    assert codex.end_detail.startswith("hooks silent")
    unpriced = next(s for s in rep.sessions if s.session == "04-tiny-claude-none")
    assert not unpriced.cost_known
    words = text(rep)
    assert "by agent (medians" in words and "by questions mode (medians" in words
    assert f"rmsnorm / claude: 2 sessions, goal met 1; best {names[0]} (min 1.400x" in words
    assert "rmsnorm / codex: 1 sessions, goal met 0, no result 1 (hooks silent or agent exited); best none (no correct evaluation of a campaign that counts)" in words
    assert "cost $0.01 (1 of 2 priced)" in words
    assert "! hooks silent: the agent ran 5 tool calls" in words
    assert "cost unknown (no priced model turns)" in words
    md = markdown(rep)
    assert "## By agent" in md and "## By questions mode" in md
    assert json.loads(json.dumps(rep.to_dict()))["by"]["agent"][0]["agent"] == "claude"


def test_an_attached_campaign_is_interrupted_through_its_attach_process_alone(tmp_path):
    """SIGTERM goes to `socratic attach` (which stops its agent itself), not to the
    agent's process group as well; kill() ends the whole group."""
    from socratic.fleet.launch import interrupt, kill

    child = tmp_path / "child"
    proc = subprocess.Popen(["sh", "-c", f"sleep 60 & echo $! > {child}; wait"],
                            start_new_session=True)
    while not child.exists() or not child.read_text().strip():
        time.sleep(0.05)
    pid = int(child.read_text())
    interrupt(proc, attached=True)
    assert proc.wait(timeout=10) == -signal.SIGTERM
    os.kill(pid, 0)                                   # the group's other process lives on
    kill(proc)                                        # already ended: nothing
    os.kill(pid, signal.SIGKILL)
    proc2 = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)
    kill(proc2)
    assert proc2.wait(timeout=10) == -signal.SIGKILL


def test_an_agent_not_on_path_is_one_line_before_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    f = fleet_file(tmp_path, "[[campaign]]\ntask = \"TASK\"\nagent = \"gemini\"\n")
    assert main(["fleet", "run", str(f), "--session-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "agent gemini: `gemini` is not on PATH" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
