"""The declared contracts (socratic.contracts): the bundled demo session conforms to them
event by event and file by file; malformed records are skipped and counted; writers
cannot log what the declarations do not allow."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from socratic import contracts as c
from socratic.contracts import (
    ContractError,
    parse_eval,
    parse_event,
    parse_events,
    read_events,
)
from socratic.eventlog import EventLog, read_jsonl
from socratic.resources import demo_session_dir

DEMO = demo_session_dir()


def _demo_evals() -> list[Path]:
    return sorted((DEMO / "evals").glob("*.json"))


# conformance of the demo session -----------------------------------------------------------
def test_every_demo_event_matches_its_declaration():
    records, _ = read_jsonl(DEMO / "events.jsonl")
    parsed, offset = read_events(DEMO / "events.jsonl")
    assert parsed.errors == [] and parsed.skipped == 0 and parsed.ignored == 0
    assert len(parsed.events) == len(records) > 200
    assert offset == (DEMO / "events.jsonl").stat().st_size
    assert [e.seq for e in parsed.events] == list(range(1, len(records) + 1))
    kinds = {type(e) for e in parsed.events}
    assert {c.CampaignStart, c.EvalScenario, c.EvalEnd, c.StopHook, c.CampaignEnd} <= kinds
    # nothing is lost between the file and the records: declared fields and extras
    for rec, ev in zip(records, parsed.events, strict=True):
        assert _no_nulls(rec) == _no_nulls(ev.to_dict())


def _no_nulls(value):
    """`to_dict` leaves out optional fields that are None; compare without nulls."""
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


@pytest.mark.parametrize("path", _demo_evals(), ids=lambda p: p.name)
def test_every_demo_evaluation_matches_socratic_eval_1(path):
    data = json.loads(path.read_text())
    result = parse_eval(data)
    assert result.schema == c.SCHEMA and result.extra == {}
    assert all(r.extra == {} for r in result.scenarios)
    assert result.to_dict() == data            # the same field names, nothing added or lost


def test_demo_eval_end_events_point_at_their_files():
    parsed, _ = read_events(DEMO / "events.jsonl")
    ends = [e for e in parsed.events if isinstance(e, c.EvalEnd)]
    assert [e.result for e in ends] == [f"evals/{p.name}" for p in _demo_evals()]
    for e in ends:
        result = c.read_eval(DEMO / e.result)
        assert e.summary.all_correct == result.summary.all_correct
        assert e.summary.n_correct == result.summary.n_correct


def test_the_runners_summary_reproduces_the_demo_summaries():
    from socratic.evaluator.runner import summarize

    for path in _demo_evals():
        result = c.read_eval(path)
        assert summarize(result.scenarios, result.summary.n) == result.summary, path.name


# readers: malformed records are skipped and counted ---------------------------------------
def _event(type_: str, **fields) -> dict:
    return {"seq": 1, "t": 0.5, "ts": "2026-12-01T00:00:00.000+00:00", "type": type_, **fields}


GOOD_END = _event("eval.end", n=1, summary={"all_correct": True, "min_speedup": 1.2},
                  result="evals/0001.json")


@pytest.mark.parametrize("bad,field", [
    ({**GOOD_END, "summary": "oops"}, "summary"),
    ({**GOOD_END, "seq": "1"}, "seq"),
    ({**GOOD_END, "seq": True}, "seq"),
    ({**GOOD_END, "n": 1.5}, "n"),
    ({k: v for k, v in GOOD_END.items() if k != "result"}, "result"),
    ({**GOOD_END, "summary": {"all_correct": "yes"}}, "summary.all_correct"),
    ({**GOOD_END, "summary": {"all_correct": True, "min_speedup": "1.2"}}, "summary.min_speedup"),
    (_event("stophook", met=False, failing=[{"scenario": 3}]), "failing[0].scenario"),
    (_event("trigger", kind="plateau", reason="r", suggestions="bank.id"), "suggestions"),
    (_event("campaign.start", task="t"), "goal"),
])
def test_a_malformed_known_event_is_an_error_naming_the_field(bad, field):
    with pytest.raises(ContractError,
                       match=re.escape(f"{bad['type']} event") + ".*" + re.escape(f": {field}:")):
        parse_event(bad)
    parsed = parse_events([GOOD_END, bad, GOOD_END])
    assert len(parsed.events) == 2 and parsed.skipped == 1 and parsed.ignored == 0
    assert field.split("[")[0].split(".")[-1] in parsed.errors[0]


def test_unknown_types_are_ignored_and_extra_fields_kept():
    assert parse_event(_event("brand.new", x=1)) is None
    parsed = parse_events([_event("brand.new"), {"no": "type"}, GOOD_END, "text", [1]])
    assert len(parsed.events) == 1 and parsed.ignored == 1 and parsed.skipped == 3
    ev = parse_event({**GOOD_END, "note": "a writer's extra"})
    assert isinstance(ev, c.EvalEnd) and ev.summary.min_speedup == 1.2
    assert ev.extra == {"note": "a writer's extra"} and ev.to_dict()["note"] == "a writer's extra"
    # an int where a float is declared is a number; a bool never is
    assert parse_event({**GOOD_END, "t": 3}).t == 3


def test_read_events_counts_bad_lines_and_leaves_a_torn_tail(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [json.dumps(GOOD_END), "{not json", json.dumps({**GOOD_END, "summary": 5}),
             json.dumps(_event("brand.new")), ""]
    path.write_text("\n".join(lines) + '{"seq": 9, "type": "agent.te')
    parsed, offset = read_events(path)
    assert len(parsed.events) == 1 and parsed.skipped == 2 and parsed.not_json == 1
    assert parsed.ignored == 1 and offset == len("\n".join(lines).encode())


def test_parse_eval_names_what_is_wrong():
    data = json.loads(_demo_evals()[0].read_text())
    with pytest.raises(ContractError, match="schema"):
        parse_eval({**data, "schema": "socratic.eval/0"})
    bad = json.loads(json.dumps(data))
    bad["scenarios"][1]["speedup"] = "fast"
    with pytest.raises(ContractError, match=r"scenarios\[1\]\.speedup: expected a number"):
        parse_eval(bad)
    bad["scenarios"][1]["speedup"] = 1.0
    del bad["summary"]
    with pytest.raises(ContractError, match="summary: missing"):
        parse_eval(bad)
    with pytest.raises(ContractError, match="not JSON|Expecting"):
        c.read_eval(Path(__file__))


# writers: what the declarations do not allow cannot be logged -----------------------------
def test_event_log_builds_events_through_their_classes(tmp_path):
    log = EventLog.open(tmp_path)
    ev = log.append("eval.end", n=1, summary={"all_correct": False, "error": "no result"},
                    result="evals/0001.json", set=None)
    assert ev["type"] == "eval.end" and "set" not in ev          # an unset optional field
    with pytest.raises(ContractError, match="undeclared event type 'eval.finished'"):
        log.append("eval.finished", n=1)
    with pytest.raises(ContractError, match="summary.all_correct"):
        log.append("eval.end", n=2, summary={}, result="evals/0002.json")
    with pytest.raises(ContractError, match="reason: missing"):
        log.append("campaign.end")
    with pytest.raises(ContractError, match="cost_usd"):
        log.append("usage", input_tokens=1, output_tokens=1, cache_read=0, cache_write=0,
                   cost_usd="free")
    records, _ = read_jsonl(tmp_path / "events.jsonl")
    assert [r["seq"] for r in records] == [1] and log.seq == 1   # nothing else was written


def test_records_built_in_code_are_checked():
    row = c.ScenarioResult(id="a", params={}, correct=True, failures=[], error=None, err=None,
                           err_baseline=None, err_ratio=None, errors={}, speedup=1.5)
    assert row.check() == row and "baseline_ms" not in row.to_dict()
    row.speedup = "fast"  # type: ignore[assignment]
    with pytest.raises(ContractError, match="speedup"):
        row.check()


def test_inbox_values_that_do_not_fit_the_question_event_are_dropped(tmp_path):
    from socratic.contracts import Question
    from socratic.eventlog import append_jsonl
    from socratic.harness.api.campaign import Campaign
    from socratic_doubles.fakeapi import FakeAnthropic
    from socratic_doubles.testing import (
        FAKE_KEY,
        candidate_source,
        fake_config,
        make_task,
    )

    done = ("write_file", {"path": "candidate.cu", "content": candidate_source(1.5)})
    with FakeAnthropic([{"tools": [done]}, {"text": "done"}]) as api:
        c = Campaign.create(make_task(tmp_path), fake_config(), session_dir=tmp_path / "s",
                            api_key=FAKE_KEY, base_url=api.url, suggester=lambda *a: [])
        # a raw line, as a hand-written inbox may hold one (inject writes typed commands)
        append_jsonl(c.session.dir / "inbox.jsonl", {"type": "question", "text": "Which bound?",
                                                     "bank_id": 5, "trigger": ["x"]})
        assert c.run() == "goal_met"                       # not a ContractError from the log
    parsed, _ = read_events(c.session.events)
    q = next(e for e in parsed.events if isinstance(e, Question))
    assert (q.text, q.bank_id, q.trigger) == ("Which bound?", None, None)


def test_min_and_geomean_against_a_comparison():
    from socratic.sessionfiles import open_session
    from tests.fa3data import TRIMMED

    doc = open_session(TRIMMED).read_json("evals/0036.json")   # a real evaluation against FA3
    result = parse_eval(doc)
    ratios = [r["comparisons"]["fa3"]["speedup"] for r in doc["scenarios"]]
    mn, geo = result.min_and_geomean("fa3")
    assert mn == min(ratios) and geo == pytest.approx(doc["summary"]["geomean_vs"]["fa3"], rel=1e-6)
    assert result.min_and_geomean("cudnn") == (None, None)   # SDPA cannot run one scenario
    assert result.min_and_geomean("baseline")[0] == doc["summary"]["min_speedup"]


def test_inbox_commands_are_typed_both_ways(tmp_path):
    from socratic.contracts import AskCommand, ControlCommand, command_line, parse_command
    from socratic.eventlog import inject, read_jsonl

    inject(tmp_path, AskCommand(text="Which bound?", bank_id="bound.x"))
    inject(tmp_path, ControlCommand(action="pause"))
    lines = read_jsonl(tmp_path / "inbox.jsonl")[0]
    assert lines == [{"type": "question", "text": "Which bound?", "bank_id": "bound.x"},
                     {"type": "control", "action": "pause"}]
    assert [parse_command(x) for x in lines] == [AskCommand(text="Which bound?", bank_id="bound.x"),
                                                 ControlCommand(action="pause")]
    # what the harness skips: no text, an unknown action, not an object; a bad bank id is
    # dropped from a question, not the question
    assert parse_command({"type": "question", "text": "  "}) is None
    assert parse_command({"type": "control", "action": "reboot"}) is None
    assert parse_command(["question"]) is None
    assert parse_command({"type": "question", "text": "Q?", "bank_id": 5}) == AskCommand(text="Q?")
    assert command_line(AskCommand(text="Q?", trigger="declared_done")) == {
        "type": "question", "text": "Q?", "trigger": "declared_done"}


def test_config_json_is_a_record_and_a_damaged_one_is_one_line(tmp_path):
    import json

    import pytest

    from socratic.errors import InputError
    from socratic.harness.core.session import Session

    s = Session(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(
        {"config": {"model": "m"}, "task_source": "/t", "task_hashes": {"task.toml": "ab"}}))
    saved = s.load_config()
    assert (saved.config, saved.task_source, saved.task_hashes, saved.attach) == \
        ({"model": "m"}, "/t", {"task.toml": "ab"}, None)
    (tmp_path / "config.json").write_text(json.dumps({"config": {}, "task_hashes": {"a": 5}}))
    with pytest.raises(InputError) as err:
        s.load_config()
    assert "config.json" in str(err.value) and "task_hashes.a" in str(err.value)
    assert "\n" not in str(err.value)
