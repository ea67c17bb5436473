"""A campaign by hand (`socratic attach --agent manual`), driven through the CLI as a person
would: evaluations imported from the demo's real H200 results (sessions/demo/evals, with
the candidates they evaluated), the agent's words, a refused and an accepted stop; then the
session read back by the report, the TUI's reducer and the replay screen. Every refused
input: one line, exit 2, nothing recorded."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from socratic.cli import main
from socratic.contracts import AskCommand, EvalEnd, read_events
from socratic.eventlog import inject, read_jsonl
from socratic.harness.attached.attach import attach
from socratic.harness.attached.attached_campaign import AttachedCampaign
from socratic.resources import demo_session_dir
from socratic_doubles.testing import (
    FAKE_EVALUATOR,
    candidate_source,
    fake_config,
    make_task,
)

pytestmark = pytest.mark.timeout(180)

DEMO = demo_session_dir()
SRC = {n: DEMO / "evals" / f"{n:04d}.json" for n in range(1, 7)}


def cand(n: int) -> Path:
    """The demo candidate that evaluation n evaluated."""
    sha = json.loads(SRC[n].read_text())["candidate"]["sha256"]
    return DEMO / "candidates" / f"{sha[:16]}.cu"


def cli(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(list(argv))
    finally:
        sys.stdin = old_stdin
    return rc, out.getvalue(), err.getvalue()


def events(sess: Path) -> list[dict]:
    return read_jsonl(sess / "events.jsonl")[0]


def of(sess: Path, type_: str) -> list[dict]:
    return [e for e in events(sess) if e["type"] == type_]


def use(sess: Path, n: int) -> None:
    """Put evaluation n's candidate into the workspace (the person's edit)."""
    shutil.copyfile(cand(n), sess / "workspace" / "candidate.cu")


def attach_rmsnorm(root: Path, *extra: str) -> tuple[Path, str]:
    sess = root / "s"
    rc, out, err = cli("attach", "rmsnorm", "--agent", "manual", "--session-dir", str(sess),
                       "--goal-min-speedup", "1.149", *extra)
    assert rc == 0, err
    return sess, err


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """The whole campaign, once: (session, {step: (rc, stdout, stderr)})."""
    root = tmp_path_factory.mktemp("manual")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
        mp.chdir(root)
        sess, attach_err = attach_rmsnorm(root, "--auto-questions")
        s = str(sess)
        steps: dict[str, tuple[int, str, str]] = {"attach": (0, "", attach_err)}
        use(sess, 1)
        steps["import1"] = cli("hook", "evaluate", "--session", s, "--import", str(SRC[1]))
        # the failing one, imported with its own source (not the workspace's)
        steps["import2"] = cli("hook", "evaluate", "--session", s, "--import", str(SRC[2]),
                               "--candidate", str(cand(2)))
        steps["say"] = cli("hook", "say", "--session", s, "-", stdin=(
            "Every scenario is wrong by a similar factor: the error is in the scale, so the "
            "cross-warp reduction must index the wrong partial sums."))
        use(sess, 3)
        steps["import3"] = cli("hook", "evaluate", "--session", s, "--import", str(SRC[3]))
        steps["stop_refused"] = cli("hook", "stop", "--session", s)
        use(sess, 4)
        steps["import4"] = cli("hook", "evaluate", "--session", s, "--import", str(SRC[4]))
        steps["import5"] = cli("hook", "evaluate", "--session", s, "--import", str(SRC[5]))
        steps["stop_met"] = cli("hook", "stop", "--session", s)
        steps["say_after"] = cli("hook", "say", "--session", s, "Done: 1.25x geomean on bench.")
    return sess, steps


def test_attach_manual_writes_no_agent_configuration(campaign):
    sess, steps = campaign
    ws = sess / "workspace"
    assert sorted(p.name for p in ws.iterdir()) == [
        ".socratic-session", "INSTRUCTIONS.md", "NOTES.md", "candidate.cu", "evaluate", "task"]
    assert (ws / "candidate.cu").exists()
    text = (ws / "INSTRUCTIONS.md").read_text()
    assert "socratic hook evaluate --import result.json" in text
    assert "socratic eval rmsnorm --candidate candidate.cu --json" in text
    start = events(sess)[0]
    assert start["type"] == "campaign.start" and start["agent"] == "manual"
    assert start["model"] == "by hand" and start["goal"] == {"min_speedup": 1.149,
                                                             "against": "baseline"}
    config = json.loads((sess / "config.json").read_text())
    assert config["attach"]["agent"] == "manual"
    err = steps["attach"][2]
    assert f"socratic hook evaluate --session {sess} --import result.json" in err
    assert f"socratic hook stop --session {sess} --give-up" in err
    # the agent's first turn is now: the start trigger and its auto question are printed
    assert "socratic: trigger start:" in err and "question [auto @ start]" in err
    assert [e["type"] for e in events(sess)[1:3]] == ["trigger", "question"]


def test_imports_are_recorded_as_local_evaluations_are(campaign):
    sess, steps = campaign
    for k in ("import1", "import2", "import3", "import4", "import5"):
        assert steps[k][0] == 0, steps[k]
    ends = of(sess, "eval.end")
    assert [e["n"] for e in ends] == [1, 2, 3, 4, 5]
    assert [e["source"] for e in ends] == ["import"] * 5
    assert [e["summary"]["all_correct"] for e in ends] == [True, False, True, True, True]
    for e, n in zip(ends, range(1, 6), strict=True):
        doc = json.loads(SRC[n].read_text())
        assert e["candidate_sha"] == doc["candidate"]["sha256"]
        assert e["imported"]["file"] == str(SRC[n].resolve())
        assert e["imported"]["host"]
        saved = json.loads((sess / e["result"]).read_text())
        assert saved == doc  # the evaluator's result, as the GPU node wrote it
        assert len([r for r in of(sess, "eval.scenario") if r["n"] == n]) == len(doc["scenarios"])
    assert [e["set"] for e in ends] == ["bench"] * 4 + ["full"]
    # candidates kept once per source: evaluations 4 and 5 share one
    assert sorted(p.name for p in (sess / "candidates").iterdir()) == sorted(
        cand(n).name for n in (1, 2, 3, 4))
    assert "imported from" in steps["import1"][1] and "evaluation #1" in steps["import1"][1]
    assert "never satisfies the goal" in steps["import5"][1]
    parsed = read_events(sess / "events.jsonl")[0]
    assert parsed.skipped == 0 and parsed.ignored == 0
    seqs = [e.seq for e in parsed.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(isinstance(e.imported.sha256, str) for e in parsed.events
               if isinstance(e, EvalEnd) and e.imported is not None)


def test_triggers_fire_and_auto_questions_are_posed(campaign):
    sess, steps = campaign
    kinds = [t["kind"] for t in of(sess, "trigger")]
    assert kinds == ["start", "correctness_failure", "declared_done", "suspicious_gain"]
    qs = of(sess, "question")
    assert [(q["source"], q["trigger"]) for q in qs] == [
        ("auto", "start"), ("auto", "correctness_failure"), ("auto", "declared_done"),
        ("auto", "suspicious_gain")]
    # each printed by the step that surfaced it
    assert "trigger correctness_failure" in steps["say"][1]
    assert qs[1]["text"] in steps["say"][1]
    assert "trigger suspicious_gain" in steps["import4"][1] and qs[3]["text"] in steps["import4"][1]
    assert "the bank suggests:" in steps["import4"][1]


def test_say_is_the_agents_text(campaign):
    sess, steps = campaign
    texts = [e["text"] for e in of(sess, "agent.text")]
    assert texts[0].startswith("Every scenario is wrong") and texts[-1].startswith("Done: 1.25x")
    assert steps["say"][0] == 0 and "recorded as the agent's text" in steps["say"][1]


def test_stop_refused_then_met(campaign):
    sess, steps = campaign
    rc, out, _ = steps["stop_refused"]
    assert rc == 1
    assert "stop refused" in out and "6 scenario(s) fall short" in out
    assert "- r8k-c5k: correct, speedup 1.108x vs baseline (goal >= 1.149x)" in out
    assert "trigger declared_done" in out
    rc, out, _ = steps["stop_met"]
    assert rc == 0 and "goal is met on evaluation #4" in out and "campaign ended: goal_met" in out
    hooks = of(sess, "stophook")
    assert [(h["met"], h["n"], h["reused"]) for h in hooks] == [(False, 3, True), (True, 4, True)]
    end, = of(sess, "campaign.end")
    assert end["reason"] == "goal_met" and end["n"] == 4 and end["best"]["n"] == 4
    # words after the end are logged; the campaign stays ended
    assert events(sess)[-1]["type"] == "agent.text"
    assert steps["say_after"][0] == 0


def test_report_reads_the_campaign(campaign):
    sess, _ = campaign
    rc, out, err = cli("report", str(sess), "--json")
    assert rc == 0, err
    r, = json.loads(out)["sessions"]
    assert (r["agent"], r["end_reason"], r["goal_met"]) == ("manual", "goal_met", True)
    assert r["evaluations"] == 5 and r["evaluations_incorrect"] == 1
    assert r["best_evaluation"] == 4 and round(r["best_geomean"], 3) == 1.251
    assert r["questions"] == 4 and r["questions_auto"] == 4
    fail, = r["correctness_failures"]
    assert fail["n"] == 2 and fail["explanation"].startswith("Every scenario is wrong")
    rc, out, _ = cli("report", str(sess))
    assert rc == 0 and "agent manual (by hand)" in out


def test_the_tui_reads_the_campaign(campaign):
    from socratic.tui.state import fold
    from socratic.tui.widgets.event_block import render_block

    sess, _ = campaign
    state = fold(events(sess))
    assert state.status == "ended" and state.end_reason == "goal_met"
    assert [p.n for p in state.evals] == [1, 2, 3, 4, 5] and state.n_malformed == 0
    evals = [b for b in state.blocks if b.kind == "eval"]
    line = render_block(evals[3]).plain
    assert "eval #4 (bench, imported)" in line and "geomean 1.25" in line
    assert "(0." not in line  # no duration: it was timed on another machine


async def test_replay_plays_the_campaign(campaign):
    from socratic.tui.app import SocraticApp

    sess, _ = campaign
    app = SocraticApp(sess, "replay", autoplay=False, clock=lambda: 1000.0)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert app.main.state.evals[-1].n == 2 and app.main.state.evals[-1].all_correct is False
        await pilot.press("end")
        assert app.main.state.status == "ended" and app.main.state.end_reason == "goal_met"
        assert len(app.main.state.questions) == 4


# ------------------------------------------------------------------ refusals


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A new campaign by hand with evaluation 1 recorded; the workspace holds candidate 3."""
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess, _ = attach_rmsnorm(tmp_path)
    use(sess, 1)
    assert cli("hook", "evaluate", "--session", str(sess), "--import", str(SRC[1]))[0] == 0
    use(sess, 3)
    return sess


def _doc(n: int) -> dict:
    return json.loads(SRC[n].read_text())


def _write(tmp: Path, name: str, data) -> Path:
    p = tmp / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def _refusals(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (hook arguments after the session, text the one line must hold)."""
    three = _doc(3)
    other_task = {**three, "task": "flash_attn_fwd"}
    check_only = {**three, "scenarios": [], "gpu": None}
    dropped = {**three, "scenarios": three["scenarios"][:-1]}
    no_set = {**three, "set": "huge"}
    broken = {k: v for k, v in three.items() if k != "summary"}
    return {
        "missing file": (["evaluate", "--import", str(tmp / "nope.json")], "nope.json: cannot read"),
        "not json": (["evaluate", "--import", str(_write(tmp, "t.txt", "speedup 1.2x\n"))],
                     "t.txt: not JSON"),
        "wrong schema": (["evaluate", "--import", str(_write(tmp, "w.json",
                                                             {**three, "schema": "x/2"}))],
                         "schema is 'x/2', not 'socratic.eval/1'"),
        "broken result": (["evaluate", "--import", str(_write(tmp, "b.json", broken))],
                          "summary: missing"),
        "check-only": (["evaluate", "--import", str(_write(tmp, "c.json", check_only))],
                       "a --check-only result"),
        "task mismatch": (["evaluate", "--import", str(_write(tmp, "o.json", other_task))],
                          "a result of task 'flash_attn_fwd', not of this session's task 'rmsnorm'"),
        "candidate mismatch": (["evaluate", "--import", str(SRC[4])],
                               f"{str(SRC[4])}: evaluated a candidate with sha256 0735263490b8b41a"),
        "scenarios differ": (["evaluate", "--import", str(_write(tmp, "d.json", dropped))],
                             "set 'bench' ran 9 scenario(s), not the 10"),
        "unknown set": (["evaluate", "--import", str(_write(tmp, "u.json", no_set))],
                        "set 'huge' names no set or scenario of task rmsnorm"),
        "already imported": (["evaluate", "--import", str(SRC[1]), "--candidate", str(cand(1))],
                             "already imported, as evaluation #1"),
        "unreadable candidate": (["evaluate", "--import", str(SRC[3]), "--candidate",
                                  str(tmp / "gone.cu")], "gone.cu: cannot read the candidate"),
        "candidate without import": (["evaluate", "--candidate", str(cand(3))],
                                     "--candidate: only with --import"),
        "scenarios with import": (["evaluate", "--import", str(SRC[3]), "--scenarios", "full"],
                                  "--scenarios: not with --import"),
        "stop with nothing to judge": (["stop"], "no evaluation of it"),
        "say nothing": (["say"], "hook say: no text"),
        "say empty": (["say", "  "], "hook say: empty text"),
        "give up without a reason": (["stop", "--give-up", ""], "--give-up: say why"),
        "text for stop": (["stop", "done"], "hook stop: TEXT ('done') not taken"),
        "a hook event by hand": (["post-tool"], "not a step of a campaign by hand"),
        # the evaluator's refusal was recorded as a failing evaluation, exit 0
        "unknown scenarios": (["evaluate", "--scenarios", "nope"],
                              "--scenarios nope: not a scenario set or id of task rmsnorm"),
        "empty scenarios": (["evaluate", "--scenarios", " "], "--scenarios: empty"),
    }


REFUSALS = ("missing file", "not json", "wrong schema", "broken result", "check-only",
            "task mismatch", "candidate mismatch", "scenarios differ", "unknown set",
            "already imported", "unreadable candidate", "candidate without import",
            "scenarios with import", "stop with nothing to judge", "say nothing", "say empty",
            "give up without a reason", "text for stop", "a hook event by hand",
            "unknown scenarios", "empty scenarios")


@pytest.mark.parametrize("name", REFUSALS)
def test_bad_input_is_one_line_exit_2_and_nothing_recorded(fresh, tmp_path, name):
    cases = _refusals(tmp_path)
    assert set(cases) == set(REFUSALS)
    args, expected = cases[name]
    before = (sess_files(fresh), (fresh / "events.jsonl").read_bytes())
    rc, out, err = cli("hook", args[0], "--session", str(fresh), *args[1:])
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("socratic: error: ") and expected in err, err
    assert (sess_files(fresh), (fresh / "events.jsonl").read_bytes()) == before


@pytest.mark.parametrize("step", [["stop"], ["evaluate"], ["say", "hi"],
                                  ["stop", "--give-up", "why"]])
def test_a_session_that_is_not_there_is_named(tmp_path, step):
    # it read "cannot read the campaign's settings ([Errno 2] ... config.json)", exit 1
    rc, out, err = cli("hook", step[0], "--session", str(tmp_path / "no such"), *step[1:])
    assert rc == 2 and err.count("\n") == 1, err
    assert f"--session {tmp_path / 'no such'}: no campaign session there" in err


def sess_files(sess: Path) -> list[str]:
    return sorted(str(p.relative_to(sess)) for p in sess.rglob("*")
                  if p.is_file() and p.name not in ("attach.json", "state.json"))


def test_the_same_refusals_read_from_the_workspace(fresh, monkeypatch):
    """In the workspace, --session may be left out (the marker names the session)."""
    monkeypatch.chdir(fresh / "workspace")
    rc, _, err = cli("hook", "stop")
    assert rc == 2 and "no evaluation of it" in err
    rc, out, _ = cli("hook", "evaluate", "--import", str(SRC[3]))
    assert rc == 0 and "evaluation #2 imported" in out
    rc, out, _ = cli("hook", "stop")
    assert rc == 1 and "stop refused" in out


# ------------------------------------------------------------------ the end without the goal


def test_give_up_ends_stalled_with_the_verdict_and_the_reason(fresh):
    s = str(fresh)
    assert cli("hook", "evaluate", "--session", s, "--import", str(SRC[3]))[0] == 0
    rc, out, _ = cli("hook", "stop", "--session", s, "--give-up", "r8k-c5k stays at 1.11x: "
                     "the bandwidth bound")
    assert rc == 0 and "campaign ended: stalled" in out
    hook, = of(fresh, "stophook")
    assert hook["met"] is False and hook["n"] == 2  # judged, honestly, before the end
    end = events(fresh)[-1]
    assert end["type"] == "campaign.end" and end["reason"] == "stalled"
    assert end["gave_up"].startswith("r8k-c5k stays") and end["best"]["n"] == 2
    assert of(fresh, "agent.text")[-1]["text"] == end["gave_up"]
    assert of(fresh, "trigger")[-1]["kind"] != "declared_done"  # nothing fires at the end
    rc, out, _ = cli("hook", "stop", "--session", s)
    assert rc == 0 and "has ended (stalled)" in out


def test_give_up_with_the_goal_met_ends_goal_met(fresh):
    use(fresh, 4)
    assert cli("hook", "evaluate", "--session", str(fresh), "--import", str(SRC[4]))[0] == 0
    rc, out, _ = cli("hook", "stop", "--session", str(fresh), "--give-up", "enough")
    assert rc == 0 and "not given up" in out
    assert events(fresh)[-1]["reason"] == "goal_met"


def test_an_import_after_the_end_resumes_the_campaign(fresh):
    s = str(fresh)
    assert cli("hook", "stop", "--session", s, "--give-up", "no evaluation yet")[0] == 0
    rc, out, _ = cli("hook", "evaluate", "--session", s, "--import", str(SRC[3]))
    assert rc == 0 and "campaign resumed (it had ended: stalled)" in out
    types = [e["type"] for e in events(fresh)]
    at = types.index("campaign.resume")
    assert types[at - 1] == "campaign.end" and types[at + 1] == "eval.start"
    assert "campaign.end" not in types[at:]


def test_inbox_questions_and_stop_reach_a_campaign_by_hand(fresh):
    s = str(fresh)
    inject(fresh, AskCommand(text="What does r1-c4k spend its time on?"))
    rc, out, _ = cli("hook", "say", "--session", s, "Measuring the launch overhead first.")
    assert rc == 0 and "question [human]:\n  What does r1-c4k spend its time on?" in out
    q = of(fresh, "question")[-1]
    assert q["source"] == "human" and q["text"] == "What does r1-c4k spend its time on?"
    # injected before the say: logged before the text that answers it
    assert q["seq"] < of(fresh, "agent.text")[-1]["seq"]
    rc, _, err = cli("inject", s, "--pause")
    assert rc == 2 and "nothing to pause" in err
    assert cli("inject", s, "--stop")[0] == 0
    rc, _, err = cli("hook", "evaluate", "--session", s, "--import", str(SRC[3]))
    assert rc == 2 and "stopped from its inbox" in err
    assert events(fresh)[-1]["reason"] == "stopped" and len(of(fresh, "eval.end")) == 1


# ------------------------------------------------------------------ other agents, options


def test_an_outside_agents_session_refuses_imports(tmp_path):
    """An agent with a shell could import a result it wrote itself: in a session its hooks
    drive, the import is refused in one line, the refusal logged, no evaluation recorded,
    and the stop still evaluates the candidate itself."""
    from socratic.harness.attached.hooks import run_hook

    task = make_task(tmp_path)
    a = attach(task, "claude", fake_config(auto_questions=True), session_dir=tmp_path / "c",
               wait_s=0.5)
    sess, ws = a.session.dir, a.session.workspace
    (ws / "candidate.cu").write_text(candidate_source(1.0))
    # a hand-made result claiming 1.5x for this very source
    import subprocess

    fast = tmp_path / "fast.cu"
    fast.write_text(candidate_source(1.5))
    r = subprocess.run([*FAKE_EVALUATOR, str(sess / "task"), "--candidate", str(fast),
                        "--json"], capture_output=True, text=True, check=False)
    doc = json.loads(r.stdout)
    doc["candidate"]["sha256"] = hashlib.sha256((ws / "candidate.cu").read_bytes()).hexdigest()
    forged = _write(tmp_path, "r1.json", json.dumps(doc))
    rc, _, err = cli("hook", "evaluate", "--session", str(sess), "--import", str(forged))
    assert rc == 2 and "imports are for campaigns by hand" in err and len(err.splitlines()) == 1
    assert of(sess, "eval.end") == []
    assert [p["where"] for p in of(sess, "problem")] == ["hook evaluate --import"]
    out = run_hook("stop", {"cwd": str(ws), "hook_event_name": "Stop"}, session_dir=sess)
    assert out["decision"] == "block"
    assert [e["source"] for e in of(sess, "eval.end")] == ["stophook"]
    # what only a person types is refused for a hooked agent's session
    rc, _, err = cli("hook", "say", "--session", str(sess), "hello")
    assert rc == 2 and "driven by claude's hooks" in err


def test_hook_events_are_refused_for_a_campaign_by_hand(fresh):
    from socratic.errors import InputError
    from socratic.harness.attached.hooks import run_hook

    with pytest.raises(InputError, match="a campaign by hand"):
        run_hook("stop", {"cwd": str(fresh / "workspace")}, session_dir=fresh)


def test_attach_and_run_share_the_goal_options():
    import argparse

    from socratic.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    def options(verb: str) -> set[str]:
        return {o for a in sub.choices[verb]._actions for o in a.option_strings}

    goal = {"--auto-questions", "--max-tool-calls", "--max-turns", "--max-minutes",
            "--goal-min-speedup", "--goal-against", "--scenarios"}
    assert goal <= options("run") and goal <= options("attach")


def test_attach_passes_goal_against_and_max_turns(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess = tmp_path / "fa"
    rc, _, err = cli("attach", "flash_attn_fwd", "--agent", "manual", "--session-dir", str(sess),
                     "--goal-against", "baseline", "--goal-min-speedup", "2", "--max-turns", "7")
    assert rc == 0, err
    start = events(sess)[0]
    # the task says fa3 (and hidden = true, kept)
    assert start["goal"] == {"min_speedup": 2.0, "against": "baseline", "hidden": True}
    assert start["limits"]["max_turns"] == 7
    config = json.loads((sess / "config.json").read_text())["config"]
    assert (config["goal_against"], config["max_turns"]) == ("baseline", 7)
    assert AttachedCampaign(sess).goal.against == "baseline"
    rc, _, err = cli("attach", "rmsnorm", "--agent", "manual", "--session-dir",
                     str(tmp_path / "bad"), "--goal-against", "fa3")
    assert rc == 2 and "--goal-against fa3" in err and not (tmp_path / "bad").exists()
    rc, _, err = cli("attach", "rmsnorm", "--agent", "manual", "--max-turns", "0")
    assert rc == 2 and "--max-turns 0: must be positive" in err
    rc, _, err = cli("attach", "rmsnorm", "--agent", "manual", "--launch")
    assert rc == 2 and "no agent to start" in err


def test_an_attached_agent_is_held_to_max_turns(tmp_path):
    from socratic.harness.attached.hooks import run_hook

    task = make_task(tmp_path)
    a = attach(task, "claude", fake_config(max_turns=2), session_dir=tmp_path / "c", wait_s=0.5)
    ws = a.session.workspace
    tr = tmp_path / "t.jsonl"
    usage = {"input_tokens": 1, "output_tokens": 1}
    tr.write_text("".join(json.dumps({"type": "assistant", "message": {
        "id": f"m{i}", "model": "claude-x", "content": [{"type": "text", "text": f"step {i}"}],
        "usage": usage}}) + "\n" for i in range(2)))
    payload = {"session_id": "s", "transcript_path": str(tr), "cwd": str(ws),
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {},
               "tool_use_id": "t1", "tool_response": {"stdout": "", "stderr": ""}}
    out = run_hook("post-tool", payload, session_dir=a.session.dir)
    assert out["continue"] is False and "max_turns" in out["stopReason"]
    assert events(a.session.dir)[-1]["reason"] == "max_turns"


def test_evaluating_here_by_hand_is_the_workspaces_evaluate(fresh):
    """On a GPU node the workspace's ./evaluate records a local evaluation and prints what
    surfaced (the fake evaluator here: every scenario 1.0x, then a failing build)."""
    import os
    import subprocess

    env = dict(os.environ, SOCRATIC_EVALUATOR=" ".join(FAKE_EVALUATOR))
    ws = fresh / "workspace"
    r = subprocess.run([str(ws / "evaluate")], cwd=ws, env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0 and "evaluation #2" in r.stdout and "not met" in r.stdout, r.stderr
    (ws / "candidate.cu").write_text("// build-error\n")
    r = subprocess.run([str(ws / "evaluate")], cwd=ws, env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert "build: FAILED" in r.stdout
    assert [e["source"] for e in of(fresh, "eval.end")] == ["import", "agent", "agent"]
    rc, out, _ = cli("hook", "say", "--session", str(fresh),
                     "The build fails on a stray marker line; removing it.")
    assert "trigger correctness_failure" in out


def test_a_hook_typed_at_a_terminal_says_what_it_needs(tmp_path, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Tty())
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["hook", "stop"])
    assert rc == 1 and "no JSON payload on stdin" in err.getvalue()


def test_the_printed_commands_work_when_pasted_with_a_space_in_the_path(tmp_path, monkeypatch):
    # they read `socratic hook say --session /tmp/x/by hand "..."`: pasted into a shell,
    # the path split in two
    import shlex
    import subprocess

    monkeypatch.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
    sess = tmp_path / "by hand"
    rc, _, err = cli("attach", "rmsnorm", "--agent", "manual", "--session-dir", str(sess),
                     "--auto-questions")
    assert rc == 0, err
    quoted = shlex.quote(str(sess))
    assert f"watch it with `socratic watch {quoted}`" in err
    assert f"pose one with `socratic inject {quoted} --bank ID`" in err
    say = next(ln.strip() for ln in err.splitlines() if "socratic hook say" in ln)
    line = say.split("  ")[0].replace('"..."', '"measured it"')
    shell = line.replace("socratic ", f"{shlex.quote(sys.executable)} -m socratic ", 1)
    r = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (shell, r.stderr)
    assert of(sess, "agent.text")[-1]["text"] == "measured it"


def test_evaluating_by_hand_without_a_gpu_says_where_to_evaluate(tmp_path, monkeypatch):
    # it was recorded as an incorrect evaluation ("needs an NVIDIA GPU"), exit 0
    from socratic.evaluator.runner import gpu_present

    if gpu_present() is None:
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv("SOCRATIC_EVALUATOR", raising=False)   # the real evaluator
    sess, _ = attach_rmsnorm(tmp_path)
    before = (sess / "events.jsonl").read_bytes()
    for argv in (["hook", "evaluate", "--session", str(sess)],
                 ["hook", "evaluate", "--session", str(sess), "--scenarios", "smoke"]):
        rc, out, err = cli(*argv)
        assert rc == 2 and err.count("\n") == 1 and "no GPU here" in err, (out, err)
        assert "socratic hook evaluate --import result.json" in err
    assert (sess / "events.jsonl").read_bytes() == before
    assert not list((sess / "evals").glob("*.json"))
