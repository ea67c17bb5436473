"""Space evaluations in a campaign's record and its report: a campaign by hand on the
attention task records one run here (`hook evaluate --scenarios space:N`) and imports one
made elsewhere (`socratic eval --space N --seed S --json`, here by the fake evaluator), and
`socratic report` shows the last one's coverage: text, Markdown, JSON (`coverage`, null
where there is none) and HTML with its picture (checked in a headless browser)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socratic_doubles.testing import FAKE_EVALUATOR
from tests.test_manual import cli, of

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
# fast everywhere (2x the baseline, 1.1x FA3) but at head dim 192 (0.4 of that)
KERNEL = "// a kernel\n// speedup: 2.0\n// vs-fa3: 1.1\n// slow[head_dim == 192]: 0.4\n"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("space")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOCRATIC_EVALUATOR", " ".join(FAKE_EVALUATOR))
        mp.chdir(root)
        sess = root / "s"
        rc, _, err = cli("attach", "flash_attn_fwd", "--agent", "manual", "--session-dir", str(sess))
        assert rc == 0, err
        cand = sess / "workspace" / "candidate.cu"
        cand.write_text(KERNEL)
        local = cli("hook", "evaluate", "--session", str(sess), "--scenarios", "space:6")
        assert local[0] in (0, 1), local
        made = subprocess.run([*FAKE_EVALUATOR, str(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd"), "--candidate",
                               str(cand), "--space", "40", "--seed", "4", "--json"],
                              capture_output=True, text=True, timeout=120)
        result = root / "space.json"
        result.write_text(made.stdout)
        imported = cli("hook", "evaluate", "--session", str(sess), "--import", str(result))
        assert imported[0] in (0, 1), imported
    return sess, json.loads(made.stdout)


def report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "socratic", "report", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=180)


def test_space_evaluations_are_recorded_like_others(session):
    sess, made = session
    ends = of(sess, "eval.end")
    assert [e["set"] for e in ends] == ["space:6", "space:40@4"]
    assert ends[1]["source"] == "import"
    saved = json.loads((sess / ends[0]["result"]).read_text())
    assert re.fullmatch(r"space:6@\d{6}", saved["set"]) and saved["coverage"]["n"] == 6
    assert json.loads((sess / ends[1]["result"]).read_text())["coverage"] == made["coverage"]
    # a space set never judges the goal: the stop has no goal-set evaluation to judge
    assert cli("hook", "stop", "--session", str(sess))[0] == 2


def test_an_import_whose_draws_do_not_match_its_seed_is_refused(session, tmp_path):
    sess, made = session
    other = dict(made, set="space:40@5")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(other))
    rc, _, err = cli("hook", "evaluate", "--session", str(sess), "--import", str(bad))
    assert rc == 2 and "ran 40 scenario(s), not the" in err


def test_the_text_report_shows_the_last_space_evaluations_table(session):
    sess, _ = session
    r = report(str(sess))
    assert r.returncode == 0, r.stderr
    assert "Coverage of the task's space (evaluation #2, space:40@4)" in r.stdout
    assert re.search(r"space evaluation #2 \(space:40@4\): 40/40 correct; worst cell head_dim 192: "
                     r"min 0\.440x vs fa3", r.stdout)
    assert re.search(r"head_dim\s+64\s+\d+\s+\d+\s+2\.000 / 2\.000\s+1\.100 / 1\.100\n\s+96\s", r.stdout)
    assert re.search(r"\n\s+192\s+\d+\s+\d+\s+0\.800 / 0\.800\s+0\.440 / 0\.440\n", r.stdout)
    assert re.search(r"causal\s+0\s+\d+", r.stdout) and "seqlen_k" in r.stdout
    md = report(str(sess), "--md").stdout
    assert "### Coverage of the task's space (evaluation #2, space:40@4)" in md
    assert re.search(r"\| head_dim \| 192 \| \d+ \| \d+ \| 0\.800x \| 0\.800x \| 0\.440x \| 0\.440x \|", md)


def test_json_carries_coverage_and_null_where_there_is_none(session):
    sess, made = session
    doc = json.loads(report(str(sess), "--json").stdout)
    cov = doc["sessions"][0]["coverage"]
    assert cov["evaluation"] == 2 and cov["set"] == "space:40@4" and cov["seed"] == 4
    assert cov["cells"] == made["coverage"]["cells"] and cov["grid"] == ["head_dim", "causal"]
    demo = json.loads(report("demo", "--json").stdout)
    assert "coverage" in demo["sessions"][0] and demo["sessions"][0]["coverage"] is None


def _svgs(page: Path) -> list[str]:
    return [base64.b64decode(m).decode() for m in
            re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page.read_text())]


def test_html_draws_the_kernel_over_its_space(session, tmp_path):
    sess, _ = session
    page = tmp_path / "r.html"
    r = report(str(sess), "--html", str(page))
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert 'id="coverage"' in text and "space:40@4" in text
    pictures = [s for s in _svgs(page) if "by head_dim x causal" in s]
    assert len(pictures) == 1
    assert "vs fa3 against seqlen_q" in pictures[0] and "vs fa3 against seqlen_k" in pictures[0]
    assert "0.44" in pictures[0]                    # the head dim 192 cells, labelled
    plain = tmp_path / "demo.html"
    assert report("demo", "--html", str(plain)).returncode == 0
    assert 'id="coverage"' not in plain.read_text()


def _browser() -> str | None:
    return next((b for b in ("chromium-headless-shell", "chromium", "google-chrome")
                 if shutil.which(b)), None)


@pytest.mark.skipif(_browser() is None, reason="no headless Chromium (apt-get install "
                    "chromium-headless-shell)")
def test_the_coverage_picture_is_visible_in_a_headless_browser(session, tmp_path):
    import numpy as np
    from PIL import Image

    sess, _ = session
    page, only, shot = tmp_path / "r.html", tmp_path / "cov.html", tmp_path / "cov.png"
    assert report(str(sess), "--html", str(page)).returncode == 0
    picture = next(m for m in re.findall(r'<img class="plot"[^>]+>', page.read_text())
                   if "by head_dim x causal" in base64.b64decode(
                       re.search(r"base64,([^\"]+)", m).group(1)).decode())
    only.write_text(f"<!DOCTYPE html><html><body>{picture}</body></html>")
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu",
                    f"--screenshot={shot}", "--window-size=1400,700", only.as_uri()],
                   capture_output=True, timeout=120, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int32)

    def near(rgb: tuple[int, int, int]) -> int:
        return int((np.abs(pixels - np.array(rgb)).sum(axis=2) < 60).sum())

    assert near((0xa5, 0x00, 0x26)) > 300    # RdYlGn's red: the head dim 192 cells (0.44x FA3)
    assert near((0x1f, 0x6f, 0xb4)) > 100    # the draws against the lengths
