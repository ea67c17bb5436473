"""The defects a new user met in their first hour (issue 43), each as the user met it."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from tests.test_manual import attach_rmsnorm, cli

pytestmark = pytest.mark.timeout(300)


def _texts(sess: Path) -> list[str]:
    return [json.loads(line).get("text") for line in (sess / "events.jsonl").read_text().splitlines()
            if json.loads(line).get("type") == "agent.text"]


def test_hook_say_on_a_full_disk_records_nothing_and_the_retry_logs_it_once(tmp_path, monkeypatch):
    from socratic.harness.attached import attached_campaign

    sess, _ = attach_rmsnorm(tmp_path)
    before = (sess / "events.jsonl").read_bytes()
    real = attached_campaign.write_json_atomic

    def full(path, data, fsync=True):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(attached_campaign, "write_json_atomic", full)
    (sess / "attach.json").unlink(missing_ok=True)   # the state must be written this time
    for _ in range(2):
        code, out, err = cli("hook", "say", "--session", str(sess), "the loads are uncoalesced")
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert "No space left on device" in err and "attach.json" in err
        assert "nothing was recorded" in err
        assert (sess / "events.jsonl").read_bytes() == before   # the failure is true
    monkeypatch.setattr(attached_campaign, "write_json_atomic", real)
    code, out, err = cli("hook", "say", "--session", str(sess), "the loads are uncoalesced")
    assert code == 0, err
    assert _texts(sess).count("the loads are uncoalesced") == 1   # the retry logs it once


def test_the_md_and_html_reports_keep_vs_fa3_and_the_campaign_time(tmp_path, capsys):
    from socratic.cli import main

    assert main(["report", "fa3-h200", "--md"]) == 0
    md = capsys.readouterr().out
    assert "| best geomean (bench vs fa3) | 0.981x (#273) |" in md
    assert "| best min (bench vs fa3) | 0.956x (#271) |" in md
    assert "| duration | 10 sessions: 1 h 22 min of campaign time over 149 h 15 min |" in md
    pytest.importorskip("matplotlib")
    page = tmp_path / "r.html"
    assert main(["report", "fa3-h200", "--html", str(page)]) == 0
    text = page.read_text()
    assert "best geomean (bench vs fa3)" in text and "0.981x (#273)" in text
    assert "1 h 22 min of campaign time over 149 h 15 min" in text


@pytest.mark.parametrize("steps", [0, 1, 9])   # at the start, one column along, at the end
async def test_at_80x24_no_table_column_is_cut_mid_number(steps):
    from socratic.resources import resolve_session_dir
    from socratic.tui.app import SocraticApp
    from socratic.tui.widgets.scenario_table import ScenarioTable

    app = SocraticApp(resolve_session_dir(Path("fa3-h200")), "replay", autoplay=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        for _ in range(steps):
            await pilot.press("greater_than_sign")
        await pilot.pause()
        await pilot.pause()
        table = app.screen.query_one(ScenarioTable)
        shown = 0
        for y in range(1, min(table.size.height, table.row_count + 1)):
            line = "".join(seg.text for seg in table.render_line(y)).rstrip()
            row = table.get_row_at(y - 1 + round(table.scroll_y))
            whole = {c.plain.strip() for c in row}
            # every word past the scenario is a whole cell (not `5` of `5.9e-04`)
            for word in line.split()[3:]:
                assert word in whole, (word, line)
            shown += 1
        assert shown


RETRY_CAUSES = [
    ("APIConnectionError: Connection error.", "Connection error"),
    ("APITimeoutError: Request timed out.", "Request timed out"),
    ("InternalServerError: Error code: 502 - <html><head><title>502 Bad Gateway</title></head>"
     "<body></body></html>", "502 Bad Gateway"),
    ("OverloadedError: Error code: 529 - {'type': 'error', 'error': {'type': "
     "'overloaded_error', 'message': 'Overloaded'}}", "529 overloaded_error"),
]


@pytest.mark.parametrize("error,cause", RETRY_CAUSES)
async def test_the_retrying_status_line_at_80_columns_says_the_whole_cause(tmp_path, error, cause):
    from tests.test_tui_app import TS, Clock, watch_app
    from tests.test_tui_support import tiny_events, write_events

    write_events(tmp_path / "events.jsonl", tiny_events()[:8] + [
        {"seq": 9, "t": 95.0, "ts": TS, "type": "api.retry", "attempt": 4, "error": error,
         "wait_s": 16.0}])
    clock = Clock()
    app = watch_app(tmp_path, clock=clock)
    async with app.run_test(size=(80, 24)) as pilot:
        clock.t += 100
        app.main._refresh_status()
        await pilot.pause()
        status = app.query_one("#status")
        shown = "".join(seg.text for seg in status.render_line(0))[:80]
        assert "RETRYING" in shown and f"#4 {cause} " in shown, shown


@pytest.mark.parametrize("old,new,line,words", [
    ("{ rows = [1, 3, 1000]", "{ rows = [1, -3, 1000]", "{ rows = [1, -3, 1000]",
     ["set 'full', scenario r-3-c1 (rows = -3)", "not a size", "`buffers[0].shape` at line"]),
    ("{ rows = [1, 3, 1000]", '{ rows = [1, "abc", 1000]', '{ rows = [1, "abc", 1000]',
     ["set 'full' (rows = \"abc\", cols = 1): id template"]),
    ("  { rows = 64, cols = 4096 },", "  { rows = -64, cols = 4096 },", "{ rows = -64, cols = 4096 }",
     ["set 'smoke', scenario r-64-c4k (rows = -64)"]),
])
def test_a_bad_set_value_is_reported_at_its_own_line(tmp_path, capsys, old, new, line, words):
    from socratic.cli import main

    folder = tmp_path / "t"
    assert main(["task", "new", str(folder)]) == 0
    toml = folder / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new))
    capsys.readouterr()
    assert main(["eval", str(folder), "--list"]) == 2
    err = capsys.readouterr().err
    want = next(i for i, text in enumerate(toml.read_text().splitlines(), 1) if line in text)
    assert err.count("\n") == 1 and f"task.toml:{want}: " in err, err
    for w in words:
        assert w in err, err


def test_eval_of_another_file_of_a_task_says_it_is_a_file(tmp_path, capsys):
    from socratic.cli import main

    assert main(["task", "new", str(tmp_path / "t")]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "t" / "task.toml"), "--list"]) == 0
    assert main(["eval", str(tmp_path / "t" / "baseline.cu"), "--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "baseline.cu: a file, not a task directory" in err, err


def test_the_report_says_a_damaged_config_or_evaluation_file(tmp_path, capsys):
    import shutil

    from socratic.cli import main
    from socratic.resources import resolve_session_dir

    sess = tmp_path / "s"
    shutil.copytree(resolve_session_dir(Path("demo")), sess)
    assert main(["report", str(sess), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"][0]["damaged"] == []
    (sess / "config.json").write_text('{"broken')
    (sess / "evals" / "0003.json").write_text("garbage{")
    whole = (sess / "evals" / "0005.json").read_bytes()
    (sess / "evals" / "0005.json").write_bytes(whole[:len(whole) // 2])   # a disk that filled
    assert main(["report", str(sess)]) == 0
    out = capsys.readouterr().out
    for name in ("config.json: not readable JSON", "evals/0003.json: not readable JSON",
                 "evals/0005.json: not readable JSON"):
        assert f"! damaged: {sess}/{name}" in out, out
    assert main(["report", str(sess), "--md"]) == 0
    assert "| damaged files | " in capsys.readouterr().out


def test_the_demo_opens_on_no_failed_tool_call(tmp_path):
    import subprocess

    from socratic.resources import resolve_session_dir
    from socratic_doubles.demo import CHECK_BANDWIDTH, CHECK_TIMING

    events = [json.loads(line) for line in
              (resolve_session_dir(Path("demo")) / "events.jsonl").read_text().splitlines()]
    first_eval = next(i for i, e in enumerate(events) if e["type"] == "eval.start")
    failed = [e["seq"] for e in events[:first_eval] if e["type"] == "tool.result" and not e["ok"]]
    assert failed == []                  # what the replay's first screen shows
    # the scripted agent's checks before any evaluation: no evaluation yet is no failure
    (tmp_path / "ws" / "task").mkdir(parents=True)
    (tmp_path / "ws" / "task" / "task.toml").write_text("seeds = 3\n")
    for check in (CHECK_TIMING, CHECK_BANDWIDTH):
        r = subprocess.run(["bash", "-c", check], cwd=tmp_path / "ws", capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and "no saved evaluation yet" in r.stdout, r


def test_a_build_command_not_found_names_the_task_file_and_line(tmp_path, capsys):
    from socratic.cli import main

    folder = tmp_path / "t"
    assert main(["task", "new", str(folder)]) == 0
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace('command = "nvcc ', 'command = "no-such-nvcc '))
    line = next(i for i, t in enumerate(toml.read_text().splitlines(), 1) if "no-such-nvcc" in t)
    capsys.readouterr()
    assert main(["eval", str(folder), "--check-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{toml}:{line}: build command not found: no-such-nvcc" in err, err


def test_task_new_refuses_a_path_through_dotdot_and_makes_no_folder(tmp_path, capsys, monkeypatch):
    from socratic.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["task", "new", "bad name/../x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad name/../x" in err and "'..'" in err, err
    assert list(tmp_path.iterdir()) == []
    assert main(["task", "new", "my tasks/sm"]) == 0     # a folder with a space: the hint quotes it
    out = capsys.readouterr().out
    assert "socratic eval 'my tasks/sm' --check-only" in out, out
