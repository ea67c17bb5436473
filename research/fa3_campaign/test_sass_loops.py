"""research/fa3_campaign/sass_loops.py (a tool of the campaign's workbench, not of socratic) on a small listing in cuobjdump -sass's format: it
finds the key-tile loop (a backward branch over wgmma and a softmax's exponentials), ignores
a loop without exponentials, and takes a masking block that a forward branch skips out of
the plain path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().with_name("sass_loops.py")


def listing(name: str, body: list[str]) -> str:
    lines = [f"\t\tFunction : {name}", '\t.headerflags\t@"EF_CUDA_SM90"']
    for i, ins in enumerate(body):
        lines.append(f"        /*{16 * i:04x}*/                   {ins} ;        /* 0x0000000000000000 */")
        lines.append("                                                          /* 0x000fe20000000800 */")
    return "\n".join(lines) + "\n"


def kernel() -> str:
    body = ["S2R R0, SR_TID.X"]                                   # 0x00
    loop = len(body)
    body += ["HGMMA.64x192x16.F32.BF16 R24, gdesc[UR4], R24"] * 4   # 0x10..
    body += ["@P0 BRA 0x{:x}"]                                    # skip the mask
    mask = len(body)
    body += ["ISETP.GE.AND P1, PT, R2, R3, PT", "FSEL R24, R24, -INF , !P1"] * 3
    after = len(body)
    body += ["MUFU.EX2 R30, R30"] * 16 + ["FFMA R31, R30, R4, R5"] * 2
    body += [f"@!P2 BRA 0x{16 * loop:x}"]                         # the key-tile loop
    tail = len(body)
    body += ["HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24", "FMUL R5, R5, R6"]
    body += [f"@!P3 BRA 0x{16 * tail:x}"]                         # no exponentials: not a main loop
    body += ["EXIT"]
    body[mask - 1] = body[mask - 1].format(16 * after)
    return listing("_ZN3hop11attn_kernelILi64ELi192EE", body)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=60)


def test_the_key_tile_loop_and_its_plain_path(tmp_path):
    f = tmp_path / "k.sass"
    f.write_text(kernel())
    r = run(str(f), "--loops", "5")
    assert r.returncode == 0, r.stderr
    loops = [ln for ln in r.stdout.splitlines() if ln.strip().startswith("loop ")]
    assert len(loops) == 1, r.stdout                      # the tail loop has no MUFU
    assert "loop 0x10-0x1e0: 30 instructions" in loops[0]
    assert "HGMMA=4 MUFU=16 FFMA=2 FSEL=3 ISETP=3 BRA=2" in loops[0]
    assert "skippable 0x60-0xb0: 6  FSEL=3 ISETP=3" in r.stdout
    assert "without the skippable blocks: 24 instructions  HGMMA=4 MUFU=16 FFMA=2 BRA=2" in r.stdout


def test_function_filter_and_bad_input_are_one_line(tmp_path):
    f = tmp_path / "k.sass"
    f.write_text(kernel())
    r = run(str(f), "--function", "no_such_kernel")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no_such_kernel" in r.stderr
    r = run(str(tmp_path / "missing.sass"))
    assert r.returncode == 2 and "missing.sass" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "plain.txt").write_text("not a listing\n")
    r = run(str(tmp_path / "plain.txt"))
    assert r.returncode == 2 and "cuobjdump -sass" in r.stderr


def overlap_kernel(under: int, total: int) -> str:
    """A key-tile loop issuing S and P V, then `under` exponentials between the wait for S
    (depbar 0x1) and the wait for P V (depbar 0x0), the rest after it."""
    body = ["S2R R0, SR_TID.X"]
    body += ["HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24"] * 2          # S
    body += ["HGMMA.64x128x16.F32.BF16 R88, R152, gdesc[UR8].tnspB, R88"] * 2   # P V
    body += ["WARPGROUP.DEPBAR.LE gsb0, 0x1"]
    body += ["MUFU.EX2 R30, R30"] * under
    body += ["WARPGROUP.DEPBAR.LE gsb0, 0x0"]
    body += ["MUFU.EX2 R31, R31"] * (total - under)
    body += ["@!P2 BRA 0x10", "EXIT"]
    return listing("_ZN3hop11attn_kernelILi128ELi128ELb1EE", body)


def test_exponentials_under_p_v(tmp_path):
    """The count that showed v48's softmax waiting for P V before its row max (0 of 66) and
    FA3's issuing 13 of 66 under it."""
    for under, total in ((0, 20), (7, 20)):
        f = tmp_path / f"k{under}.sass"
        f.write_text(overlap_kernel(under, total))
        r = run(str(f))
        assert r.returncode == 0, r.stderr
        assert f"exponentials under P V (between the waits for S and for P V): {under} of {total}" in r.stdout


def test_global_stores_by_width(tmp_path):
    """v96's split epilogue stores (session 11): 4-byte STG where the source writes 16 bytes."""
    body = ["S2R R0, SR_TID.X", "STG.E.128 desc[UR4][R2.64], R8", "STG.E desc[UR4][R2.64], R8",
            "STG.E desc[UR4][R2.64+0x4], R9", "@P0 STG.E.64 desc[UR4][R2.64+0x8], R10", "UTMASTG.4D [UR8], [UR4]", "EXIT"]
    f = tmp_path / "k.sass"
    f.write_text(listing("_ZN3hop11attn_kernelILi64ELi128ELb1EE", body))
    r = run(str(f))
    assert r.returncode == 0, r.stderr
    assert "global stores: 16 B x1, 8 B x1, 4 B x2, TMA x1" in r.stdout
    f.write_text(listing("_ZN3hop11attn_kernelILi64ELi128ELb1EE", ["S2R R0, SR_TID.X", "EXIT"]))
    assert "global stores: none" in run(str(f)).stdout
