"""research/fa3_campaign/ncu_counts.py (a tool of the campaign's workbench, not of socratic) on
two small source pages in ncu's CSV format: it groups instructions by their executed count,
sets the opcodes of one count side by side, and names a file that is not a source page."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().with_name("ncu_counts.py")
HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed",
          "stall_wait", "stall_barrier", "stall_wait (Not Issued)"]


def page(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Kernel Name", "attn_kernel"])
        w.writerow(HEADER)
        for i, (src, n, wait) in enumerate(rows):
            w.writerow([f"{16 * i:x}", src, str(wait + 1), f"{n:,}", str(wait), "1", "0"])
    return path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True)


def test_groups_by_count_and_compares_one_count(tmp_path):
    loop = [("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24", 400, 5)] * 3
    ours = page(tmp_path / "ours.csv", loop + [("IABS R2, R3", 50, 0), ("@P0 ISETP.GE.AND P1, PT, R2, R3, PT", 50, 2),
                                               ("FFMA R1, R2, R3, R4", 50, 0)])
    theirs = page(tmp_path / "theirs.csv", loop + [("ISETP.GT.AND P1, PT, R2, 0x8, PT", 50, 1)])
    out = run(str(ours), str(theirs), "--per", "50")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "ratio 1.0800" in text   # (1200 + 150) / (1200 + 50)
    assert "       400 x     3 =         1200   88.9%" in text
    block = text.split("run 50 times: 3 instructions against 1; opcodes that differ\n")[1].splitlines()
    assert block[:4] == ["  FFMA                             1     0    +1", "  IABS                             1     0    +1",
                         "  ISETP.GE.AND                     1     0    +1", "  ISETP.GT.AND                     0     1    -1"]
    assert "stall samples, share: wait" in text


def test_a_file_that_is_not_a_source_page_is_named(tmp_path):
    bad = tmp_path / "details.txt"
    bad.write_text("    Duration   us   147.42\n")
    out = run(str(bad), str(bad))
    assert out.returncode == 1 and "details.txt: no 'Source' and 'Instructions Executed' columns" in out.stderr
    assert "Traceback" not in out.stderr
