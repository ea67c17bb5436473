"""`socratic bank trace`: which bank entries a measured gain followed, on the bundled demo
and on small synthetic sessions whose answers are known; `--write` records them in the bank
file with a minimal, idempotent edit that the loader accepts."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from socratic.bank import load_bank
from socratic.bank.loader import parse_file, shipped_dir
from socratic.bank.record import edit_entry, record
from socratic.cli import build_parser, main
from socratic.report import DEFAULT_MIN_GAIN, bank_traces, build_report
from socratic.resources import demo_session_dir
from tests.test_report import Log

DEMO = demo_session_dir()

BANK = """\
# My questions: hand-written, comments and order must survive an edit.

[[entry]]
id = "user.gain"
group = "gap"
text = "Which part of the loop takes the most cycles in this user scenario?"
triggers = ["plateau"]
level = "scheduling"
provenance = "new"   # not yet seen working
why = "Points at the hottest part."

# a comment between entries

[[entry]]
id = "user.flat"
group = "gap"
text = "Which loop would you unroll first?"
triggers = ["plateau"]
level = "scheduling"
provenance = "new"
why = "Unrolling."

[[entry]]
id = "user.fail"
group = "correctness"
text = "Which lane writes out of bounds?"
triggers = ["correctness_failure"]
level = "numerics"
provenance = "new"
why = "Bounds."

[[entry]]
id = "user.public"
group = "bound"
text = "How far is the kernel from the published roofline?"
triggers = ["plateau"]
level = "memory"
provenance = "public"
source = "A paper, section 3"
why = "Bounds from the literature."
"""


@pytest.fixture(autouse=True)
def _no_user_bank(monkeypatch, tmp_path):
    monkeypatch.setenv("SOCRATIC_BANK_DIR", str(tmp_path / "no-user-bank"))


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["bank", *args])
    out, err = capsys.readouterr()
    return code, out, err


def ask(log: Log, bank_id: str | None, trigger: str = "plateau") -> int:
    e = log.emit("question", text="q?", bank_id=bank_id, trigger=trigger, source="auto")
    return e["seq"]


def save_results(folder: Path, log: Log) -> None:
    """The evals/NNNN.json files the log names (content does not matter here)."""
    (folder / "evals").mkdir(exist_ok=True)
    for e in log.events:
        if e["type"] == "eval.end":
            (folder / e["result"]).write_text("{}")


def session(tmp_path: Path, name: str = "camp") -> tuple[Path, dict[str, int]]:
    """user.gain followed by +10%; user.flat by less than before; user.fail by failing
    evaluations only; an id the bank lacks; a free-text question."""
    log = Log()
    seqs = {}
    log.evaluate(1, 1.00, 0.90)
    seqs["gain"] = ask(log, "user.gain")
    log.evaluate(2, 9.00, 9.00, correct=False)      # failing: never counts
    log.evaluate(3, 1.10, 1.00)
    seqs["flat"] = ask(log, "user.flat")
    log.evaluate(4, 1.05, 1.00)
    log.evaluate(5, 3.00, 3.00, set_="full")         # another set: not the goal's
    seqs["fail"] = ask(log, "user.fail", "correctness_failure")
    log.evaluate(6, 7.00, 7.00, correct=False)
    seqs["unknown"] = ask(log, "no.such-entry")
    ask(log, None)
    log.evaluate(7, 1.08, 1.00)
    folder = log.write(tmp_path / name)
    save_results(folder, log)
    return folder, seqs


def user_bank(tmp_path: Path) -> Path:
    d = tmp_path / "bank"
    d.mkdir(exist_ok=True)
    (d / "mine.toml").write_text(BANK)
    return d


# ---------------------------------------------------------------------------- the demo


def test_demo_table_names_entries_evaluations_and_gains(capsys):
    code, out, err = cli(capsys, "trace", str(DEMO))
    assert code == 0, err
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith(("correctness.",
                                                                            "strategy."))}
    # error-map (84) and special-path (95) were asked in one round, before evaluation 4
    assert rows["strategy.special-path"].split()[1:] == [
        "demo#95", "0003.json", "->", "0004.json", "1.081x", "*"]
    assert "demo#84" in rows["correctness.error-map"] and rows["correctness.error-map"].endswith(
        "*")
    assert "validity.work-skipped      " in out and "0.997x" in out   # no gain: no mark
    assert "2 entries followed by a gain of 1.02x or more" in out
    assert max(len(ln) for ln in out.splitlines()) <= 80


def test_demo_json_matches_the_events(capsys):
    code, out, _ = cli(capsys, "trace", str(DEMO), "--json")
    assert code == 0
    doc = json.loads(out)
    events = [json.loads(ln) for ln in (DEMO / "events.jsonl").read_text().splitlines()]
    asked = [e for e in events if e["type"] == "question" and e.get("bank_id")]
    assert [a["seq"] for a in doc["askings"]] == [e["seq"] for e in asked]
    assert doc["free_text"] == sum(1 for e in events if e["type"] == "question"
                                   and not e.get("bank_id"))
    ends = {e["n"]: e for e in events if e["type"] == "eval.end"}
    (sp,) = [a for a in doc["askings"] if a["id"] == "strategy.special-path"]
    assert (sp["before"]["n"], sp["after"]["n"]) == (3, 4)
    assert sp["gain"] == pytest.approx(ends[4]["summary"]["geomean_speedup"]
                                       / ends[3]["summary"]["geomean_speedup"])
    assert sp["evidence"] == ["demo/evals/0003.json", "demo/evals/0004.json"]
    assert sp["against"] == "baseline" and doc["min_gain"] == DEFAULT_MIN_GAIN
    # evaluation 5 (the full set) never counts; 4 -> 6 is a loss
    (ws,) = [a for a in doc["askings"] if a["id"] == "validity.work-skipped"]
    assert (ws["before"]["n"], ws["after"]["n"], ws["candidate"]) == (4, 6, False)
    assert [a["trace"] for a in doc["askings"] if a["candidate"]] == ["demo#84", "demo#95"]


def test_demo_write_into_a_copy_of_the_shipped_bank(tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(shipped_dir(), copy)
    bank = load_bank([copy], shipped=False, user=False)
    found = bank_traces([DEMO], bank)
    before = {p.name: p.read_text() for p in copy.glob("*.toml")}
    changes = record([(bank.get(a.id), a.trace, a.evidence) for a in found.best()])
    assert [(c.id, c.action) for c in changes] == [("correctness.error-map", "trace"),
                                                   ("strategy.special-path", "trace")]
    after = {p.name: p.read_text() for p in copy.glob("*.toml")}
    assert {n for n in before if before[n] != after[n]} == {"core_correctness.toml",
                                                            "core_strategy.toml"}
    diff = [ln for ln in difflib.unified_diff(before["core_strategy.toml"].splitlines(),
                                              after["core_strategy.toml"].splitlines(),
                                              lineterm="", n=0)
            if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert diff == ['-provenance = "new"', '+provenance = "trace"', '+source = "demo#95"',
                    '+evidence = ["demo/evals/0003.json", "demo/evals/0004.json"]']
    entry = load_bank([copy], shipped=False, user=False).get("strategy.special-path")
    assert (entry.provenance, entry.source, entry.trace) == ("trace", "demo#95", "demo#95")
    assert entry.evidence == ("demo/evals/0003.json", "demo/evals/0004.json")
    for rel in entry.evidence:  # the evidence names files that exist
        assert (DEMO.parent / rel).is_file()


def test_write_leaves_the_demo_and_an_installed_bank_alone(tmp_path, capsys, monkeypatch):
    # `bank trace demo --write` recorded the scripted demo's gains in the shipped bank (the
    # README: they confirm nothing); with a pip install it wrote into site-packages
    shipped = {p: p.read_bytes() for p in shipped_dir().glob("*.toml")}
    for name in ("demo", str(DEMO)):
        code, _, err = cli(capsys, "trace", name, "--write")
        assert code == 2 and err.count("\n") == 1 and "its agent is scripted" in err, err
    copy = tmp_path / "camp"
    shutil.copytree(DEMO, copy)                            # any other campaign with a gain
    from socratic import resources

    shipped_root = shipped_dir().resolve()                 # as with a plain pip install
    monkeypatch.setattr(resources, "installed",
                        lambda path: Path(path).resolve().is_relative_to(shipped_root))
    code, _, err = cli(capsys, "trace", str(copy), "--write")
    assert code == 2 and err.count("\n") == 1, err
    assert "the bank installed with socratic, not written" in err and "nothing recorded" in err
    assert {p: p.read_bytes() for p in shipped_dir().glob("*.toml")} == shipped
    bank_dir = user_bank(tmp_path)                         # a bank of your own still is
    folder, _ = session(tmp_path)
    assert cli(capsys, "trace", str(folder), "--bank-dir", str(bank_dir), "--write")[0] == 0
    assert 'provenance = "trace"' in (bank_dir / "mine.toml").read_text()


# ---------------------------------------------------------------------------- synthetic


def test_gain_no_gain_failing_evaluations_and_unknown_ids(tmp_path):
    folder, seqs = session(tmp_path)
    found = bank_traces([folder], load_bank([user_bank(tmp_path)], shipped=False, user=False))
    by_id = {a.id: a for a in found.askings}
    gain = by_id["user.gain"]
    # the failing evaluation 2 (9.0x) is ignored: best after is evaluation 3
    assert (gain.before.n, gain.after.n) == (1, 3) and gain.gain == pytest.approx(1.10)
    assert gain.candidate and gain.trace == f"camp#{seqs['gain']}"
    flat = by_id["user.flat"]  # 1.05 after a best of 1.10 before; 5 is another set
    assert (flat.before.n, flat.after.n, flat.candidate) == (3, 4, False)
    assert flat.gain == pytest.approx(1.05 / 1.10)
    fail = by_id["user.fail"]  # its round holds only the failing 6: nothing to compare
    assert fail.before.n == 3 and fail.after is None and fail.gain is None
    unknown = by_id["no.such-entry"]
    assert not unknown.in_bank and not unknown.candidate
    assert any("no.such-entry" in n and "not in the loaded bank" in n for n in found.notes)
    assert found.free_text == 1 and [a.id for a in found.best()] == ["user.gain"]


def test_min_gain_and_window(tmp_path):
    folder, _ = session(tmp_path)
    bank = load_bank([user_bank(tmp_path)], shipped=False, user=False)
    assert bank_traces([folder], bank, min_gain=1.2).best() == []
    log = Log()
    log.evaluate(1, 1.00, 1.00)
    ask(log, "user.gain")
    log.evaluate(2, 1.00, 1.00)
    log.evaluate(3, 1.50, 1.50)
    one = log.write(tmp_path / "w")
    assert bank_traces([one], bank, window=1).askings[0].gain == pytest.approx(1.0)
    assert bank_traces([one], bank, window=2).askings[0].gain == pytest.approx(1.5)


def test_a_later_round_of_questions_closes_the_window(tmp_path):
    log = Log()
    log.evaluate(1, 1.00, 1.00)
    ask(log, "user.flat")
    ask(log, "user.gain")          # same round: no evaluation between
    log.evaluate(2, 1.01, 1.01)
    ask(log, "user.fail")          # the next round: what follows is its own
    log.evaluate(3, 1.50, 1.50)
    folder = log.write(tmp_path / "r")
    found = bank_traces([folder], load_bank([user_bank(tmp_path)], shipped=False, user=False))
    gains = {a.id: a.gain for a in found.askings}
    assert gains == {"user.flat": pytest.approx(1.01), "user.gain": pytest.approx(1.01),
                     "user.fail": pytest.approx(1.50 / 1.01)}


def test_against_a_comparison_from_the_goal_or_the_option(tmp_path, capsys):
    log = Log()
    log.events[0]["goal"]["against"] = "fa3"
    vs = iter([{"fa3": 0.50}, {"fa3": 0.60}, {"fa3": 0.59}])
    log.evaluate(1, 1.00, 1.00)
    log.events[-1]["summary"]["geomean_vs"] = next(vs)
    ask(log, "user.gain")
    log.evaluate(2, 1.00, 1.00)                      # flat on the baseline, +20% on fa3
    log.events[-1]["summary"]["geomean_vs"] = next(vs)
    folder = log.write(tmp_path / "fa")
    bank = load_bank([user_bank(tmp_path)], shipped=False, user=False)
    (a,) = bank_traces([folder], bank).askings
    assert a.against == "fa3" and a.gain == pytest.approx(1.2) and a.candidate
    (a,) = bank_traces([folder], bank, against="baseline").askings
    assert a.gain == pytest.approx(1.0) and not a.candidate
    for e in log.events:                           # a goal against fa3 nobody timed:
        if e["type"] == "eval.end":
            e["summary"]["geomean_vs"] = {}
    (a,) = bank_traces([log.write(tmp_path / "nofa")], bank).askings   # noted, no gain
    assert a.gain is None and a.after is None
    assert bank_traces([tmp_path / "nofa"], bank).notes == [
        "nofa: no evaluation has a geomean against fa3 (its goal); use --against"]
    code, _, err = cli(capsys, "trace", str(folder), "--against", "fa4",
                       "--bank-dir", str(tmp_path / "bank"))
    assert code == 2 and err.count("\n") == 1 and "fa4" in err and "fa3" in err


def test_write_edits_only_that_entry_and_is_idempotent(tmp_path, capsys):
    folder, seqs = session(tmp_path)
    bank_dir = user_bank(tmp_path)
    path = bank_dir / "mine.toml"
    code, out, err = cli(capsys, "trace", str(folder), "--bank-dir", str(bank_dir), "--write")
    assert code == 0, err
    trace = f"camp#{seqs['gain']}"
    assert f"user.gain: provenance trace, source {trace}" in out
    written = path.read_text()
    diff = [ln for ln in difflib.unified_diff(BANK.splitlines(), written.splitlines(),
                                              lineterm="", n=0)
            if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert diff == ['-provenance = "new"   # not yet seen working',
                    '+provenance = "trace"   # not yet seen working',
                    f'+source = "{trace}"',
                    '+evidence = ["camp/evals/0001.json", "camp/evals/0003.json"]']
    (entry,) = [e for e in parse_file(path) if e.id == "user.gain"]
    assert entry.provenance == "trace" and entry.source == trace
    # again: nothing changes, byte for byte
    code, out, _ = cli(capsys, "trace", str(folder), "--bank-dir", str(bank_dir), "--write")
    assert code == 0 and "unchanged" in out and path.read_text() == written
    # the bank shows it
    code, out, _ = cli(capsys, "list", "--provenance", "trace", "--bank-dir", str(bank_dir))
    assert code == 0 and "user.gain" in out and f"trace {trace}" in out
    assert "user.flat" not in out and "camp/evals/0003.json" in out
    code, out, _ = cli(capsys, "show", "user.gain", "--bank-dir", str(bank_dir))
    assert code == 0 and f"source:              {trace}" in out
    assert "evidence:            camp/evals/0001.json, camp/evals/0003.json" in out
    code, out, _ = cli(capsys, "stats", "--json", "--bank-dir", str(bank_dir))
    doc = json.loads(out)
    shipped = sum(1 for e in load_bank(user=False).entries if e.provenance == "trace")  # sessions/fa3-h200.socratic's
    assert doc["provenance"]["trace"] == shipped + 1 and doc["traced"] == shipped + 1
    code, out, _ = cli(capsys, "validate", "--bank-dir", str(bank_dir))
    assert code == 0 and out.startswith("ok:")


def test_public_entry_keeps_its_source_and_gets_the_trace_as_evidence(tmp_path):
    log = Log()
    log.evaluate(1, 1.00, 1.00)
    seq = ask(log, "user.public")
    log.evaluate(2, 1.25, 1.25)
    folder = log.write(tmp_path / "p")
    save_results(folder, log)
    bank_dir = user_bank(tmp_path)
    bank = load_bank([bank_dir], shipped=False, user=False)
    (a,) = bank_traces([folder], bank).best()
    (c,) = record([(bank.get(a.id), a.trace, a.evidence)])
    assert c.action == "evidence"
    entry = load_bank([bank_dir], shipped=False, user=False).get("user.public")
    assert (entry.provenance, entry.source) == ("public", "A paper, section 3")
    assert entry.evidence == (f"p#{seq}", "p/evals/0001.json", "p/evals/0002.json")
    assert entry.trace == f"p#{seq}"
    text = (bank_dir / "mine.toml").read_text()
    (c,) = record([(entry, a.trace, a.evidence)])
    assert c.action == "unchanged" and (bank_dir / "mine.toml").read_text() == text


def test_a_recorded_trace_stays(tmp_path):
    folder, _ = session(tmp_path)
    bank_dir = user_bank(tmp_path)
    path = bank_dir / "mine.toml"
    path.write_text(BANK.replace('provenance = "new"   # not yet seen working',
                                 'provenance = "trace"\nsource = "earlier#12"'))
    bank = load_bank([bank_dir], shipped=False, user=False)
    (a,) = bank_traces([folder], bank).best()
    text = path.read_text()
    (c,) = record([(bank.get(a.id), a.trace, a.evidence)])
    assert c.action == "kept" and "earlier#12" in c.detail and path.read_text() == text


# ---------------------------------------------------------------------------- the edit


def test_edit_keeps_layout_crlf_comments_and_replaces_multiline_evidence(tmp_path):
    text = ('[[entry]]\r\nid = "user.x"  # mine\r\ngroup = "gap"\r\n'
            'text = "Why?"\r\ntriggers = ["plateau"]\r\nlevel = "memory"\r\n'
            'provenance = "trace"\r\nsource = "a#1"\r\nevidence = [\r\n  "a/evals/0001.json",'
            '  # first\r\n  "a/evals/0002.json",\r\n]\r\nwhy = "Because."\r\n')
    path = tmp_path / "x.toml"
    path.write_bytes(text.encode())
    (entry,) = parse_file(path)
    lines = edit_entry(text.splitlines(keepends=True), "user.x",
                       {"provenance": "trace", "source": "b#2",
                        "evidence": ["b/evals/0003.json"]}, "\r\n", str(path))
    new = "".join(lines)
    assert new == text.replace('source = "a#1"', 'source = "b#2"').replace(
        'evidence = [\r\n  "a/evals/0001.json",  # first\r\n  "a/evals/0002.json",\r\n]',
        'evidence = ["b/evals/0003.json"]')
    path.write_bytes(new.encode())
    (edited,) = parse_file(path)
    assert edited.evidence == ("b/evals/0003.json",) and edited.why == entry.why


def test_an_entry_that_is_not_a_plain_table_is_one_line(tmp_path):
    path = tmp_path / "inline.toml"
    path.write_text('entry = [{id = "user.i", group = "gap", text = "Why?", triggers = '
                    '["plateau"], level = "memory", provenance = "new", why = "B."}]\n')
    (entry,) = parse_file(path)
    from socratic.bank.model import BankError

    with pytest.raises(BankError, match="user.i.*by hand"):
        record([(entry, "s#1", ["s/evals/0001.json"])])
    assert "provenance = \"new\"" in path.read_text()


# ---------------------------------------------------------------------------- the loader


ENTRY = """\
[[entry]]
id = "user.e"
group = "gap"
text = "Why?"
triggers = ["plateau"]
level = "memory"
{extra}
why = "B."
"""


@pytest.mark.parametrize("extra, words", [
    ('provenance = "new"\nevidence = ["s/evals/0001.json"]', "provenance 'new' takes no evidence"),
    ('provenance = "trace"\nsource = "s#1"\nevidence = []', "non-empty list"),
    ('provenance = "trace"\nsource = "s#1"\nevidence = ["s/../x.json"]', "neither a trace"),
    ('provenance = "trace"\nsource = "s#1"\nevidence = ["no-session-file"]', "neither a trace"),
    ('provenance = "trace"\nsource = "s#1"\nevidence = ["s#1", "s#1"]', "twice"),
    ('provenance = "trace"\nsource = "sessions/demo#1"', "needs source"),
])
def test_evidence_is_validated_one_line(tmp_path, capsys, extra, words):
    (tmp_path / "b").mkdir()
    path = tmp_path / "b" / "e.toml"
    path.write_text(ENTRY.format(extra=extra))
    code, _, err = cli(capsys, "validate", "--bank-dir", str(path))
    assert code == 2 and err.count("\n") == 1 and words in err and "user.e" in err
    assert "e.toml:" in err


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("case", ["missing", "empty", "garbled", "no-start"])
def test_bad_sessions_are_one_line_exit_2(tmp_path, capsys, case):
    target = tmp_path / "s"
    if case != "missing":
        target.mkdir()
        (target / "events.jsonl").write_text({
            "empty": "", "garbled": "{not json\n\x00\x01\n",
            "no-start": '{"seq":1,"t":0,"ts":"2026-12-01T00:00:00+00:00","type":"agent.text",'
                        '"text":"x"}\n'}[case])
    code, out, err = cli(capsys, "trace", str(target))
    assert code == 2 and out == "" and err.count("\n") == 1 and str(target) in err


@pytest.mark.parametrize("value", ["1", "0.9", "abc", "nan", "inf"])
def test_bad_min_gain_is_one_line(capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["bank", "trace", str(DEMO), "--min-gain", value])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and f"'{value}'" in err


def test_bad_provenance_filter_is_one_line(capsys):
    code, _, err = cli(capsys, "list", "--provenance", "rumour")
    assert code == 2 and err.count("\n") == 1 and "trace, public, new" in err


def test_session_name_that_cannot_name_a_trace(tmp_path, capsys):
    folder, _ = session(tmp_path, name="my camp")
    code, _, err = cli(capsys, "trace", str(folder), "--bank-dir", str(user_bank(tmp_path)),
                       "--write")
    assert code == 2 and err.count("\n") == 1 and "rename the folder" in err
    assert (tmp_path / "bank" / "mine.toml").read_text() == BANK


# ---------------------------------------------------------------------------- shared CLI


def _option(verb: list[str], flag: str):
    parser = build_parser()
    for name in verb:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[name]
    return next(a for a in parser._actions if flag in a.option_strings)


def test_bank_and_report_share_one_definition_of_json_and_bank_dir():
    for flag in ("--json", "--bank-dir"):
        mine = [_option(v, flag) for v in (["bank"], ["bank", "trace"], ["report"])]
        assert len({(a.help, a.type, a.metavar, a.nargs) for a in mine}) == 1, flag


def test_min_gain_help_names_the_default():
    assert f"({DEFAULT_MIN_GAIN:g})" in _option(["bank", "trace"], "--min-gain").help


def test_largest_gain_over_sessions_and_fleet_folders(tmp_path):
    fleet = tmp_path / "fleet"
    for name, after in (("a", 1.10), ("b", 1.30), ("c", 1.20)):
        log = Log()
        log.evaluate(1, 1.00, 1.00)
        ask(log, "user.gain")
        log.evaluate(2, after, after)
        log.write(fleet / name)
    found = bank_traces([fleet], load_bank([user_bank(tmp_path)], shipped=False, user=False))
    assert found.sessions == ["a", "b", "c"]
    (best,) = found.best()
    assert best.session == "b" and best.gain == pytest.approx(1.30)


def test_bank_stats_sessions_trace_is_what_trace_would_record(tmp_path, capsys):
    log = Log()
    log.evaluate(1, 1.00, 1.00)
    ask(log, "user.flat")
    log.evaluate(2, 1.00, 1.00)
    seq = ask(log, "user.gain")    # the gain follows this round, not user.flat's
    log.evaluate(3, 1.50, 1.50)
    folder = log.write(tmp_path / "s")
    code, out, _ = cli(capsys, "stats", "--sessions", str(folder), "--json",
                       "--bank-dir", str(user_bank(tmp_path)))
    by_id = {e["id"]: e for e in json.loads(out)["entries"]}
    assert code == 0 and by_id["user.gain"]["trace"] == f"s#{seq}"
    assert by_id["user.flat"]["followed_by_progress"] == 1   # within 5 evaluations: progress
    assert by_id["user.flat"]["trace"] is None               # but not a trace of its own


def test_every_shipped_trace_is_confirmed_by_its_session():
    # a trace resting on evaluations retracted since (fa3-h200 1-12) no longer stands
    from socratic.resources import resolve_session_dir

    bank = load_bank(user=False)
    traced = [e for e in bank.entries if e.provenance == "trace" and e.trace]
    assert traced
    for entry in traced:
        session = entry.trace.split("#")[0]
        found = bank_traces([resolve_session_dir(Path(session))], bank)
        confirmed = {(a.id, a.trace) for a in found.askings if a.candidate}
        assert (entry.id, entry.trace) in confirmed, (entry.id, entry.trace)


def test_a_gain_across_cards_is_read_on_the_card_of_the_evaluation_after(tmp_path):
    # ratios move from one card to the next (the shipped attention kernel read 0.976x FA3 on an
    # H200 and 0.980x on an H100): a question is credited only with what the same card shows
    template = json.loads((DEMO / "evals" / "0001.json").read_text())
    log = Log()
    log.evaluate(1, 1.06, 0.90)   # card A: the best before, on another card
    log.evaluate(2, 1.04, 0.90)   # card B
    ask(log, "user.gain")
    log.evaluate(3, 1.10, 1.00)   # card B: 1.10 / 1.04 on B, not 1.10 / 1.06 across
    ask(log, "user.flat")
    log.evaluate(4, 1.20, 1.00)   # card C: nothing on C before it
    folder = log.write(tmp_path / "camp")
    (folder / "evals").mkdir()
    for n, card in ((1, "A"), (2, "B"), (3, "B"), (4, "C")):
        doc = {**template, "gpu": {**template["gpu"], "name": f"GPU {card}"}}
        (folder / "evals" / f"{n:04d}.json").write_text(json.dumps(doc))
    found = bank_traces([folder], load_bank([user_bank(tmp_path)], shipped=False, user=False))
    by_id = {a.id: a for a in found.askings}
    gain = by_id["user.gain"]
    assert (gain.before.n, gain.after.n) == (2, 3) and gain.gain == pytest.approx(1.10 / 1.04)
    flat = by_id["user.flat"]
    assert flat.before is None and flat.after.n == 4 and flat.gain is None and not flat.candidate
    # the report's gain after each question, the same reading
    (r,) = build_report([folder]).sessions
    by_q = {q.bank_id: q for q in r.question_gains}
    assert by_q["user.gain"].best_geomean_before == pytest.approx(1.04)
    assert by_q["user.gain"].geomean_gain == pytest.approx(1.10 / 1.04 - 1)
    assert by_q["user.flat"].best_geomean_before is None and by_q["user.flat"].geomean_gain is None


def test_a_gain_without_a_readable_result_is_read_as_before(tmp_path):
    # a result file absent or damaged: its card is unknown, and the log's figures still count
    template = json.loads((DEMO / "evals" / "0001.json").read_text())
    log = Log()
    log.evaluate(1, 1.00, 0.90)
    ask(log, "user.gain")
    log.evaluate(2, 1.10, 1.00)   # no result file
    folder = log.write(tmp_path / "camp")
    (folder / "evals").mkdir()
    (folder / "evals" / "0001.json").write_text(json.dumps(template))
    found = bank_traces([folder], load_bank([user_bank(tmp_path)], shipped=False, user=False))
    (gain,) = [a for a in found.askings if a.id == "user.gain"]
    assert (gain.before.n, gain.after.n) == (1, 2) and gain.gain == pytest.approx(1.10)
