"""The attention task's FLOP count, which the physical limit divides by the datasheet peak: it
must never exceed the work an exact kernel does, or an honest kernel that skips masked keys
is failed as impossibly fast (seen in session 8: causal q 8148, k 2632 at 0.48 ms against a
0.71 ms 'limit' from q k / 2)."""

from __future__ import annotations

import pytest

from socratic.taskfile import load_task
from tests.evalcli import ROOT

TASK = load_task(ROOT / "src" / "socratic" / "kernels" / "flash_attn_fwd")


def visible_pairs(q: int, k: int) -> int:
    """Query-key pairs a bottom-right-aligned causal mask leaves (row i sees keys <= i + k - q)."""
    return sum(min(k, max(0, i + k - q + 1)) for i in range(q))


def flops(q: int, k: int, causal: int, d: int = 128, b: int = 2, h: int = 4) -> float:
    sc = TASK.scenario({"batch": b, "seqlen_q": q, "seqlen_k": k, "heads_q": h, "heads_kv": h,
                        "head_dim": d, "causal": causal})
    return TASK.metric("flops", sc)


@pytest.mark.parametrize("q,k", [(1, 1), (64, 64), (257, 300), (90, 679), (8148, 2632), (2632, 8148),
                                 (1000, 127), (127, 1000), (4096, 4096), (3000, 1)])
def test_causal_flops_are_the_visible_pairs_never_more(q, k):
    exact = 4 * 2 * 4 * 128 * visible_pairs(q, k)
    got = flops(q, k, 1)
    assert got <= exact   # the physical limit can only be lenient
    m = min(q, k)
    assert exact - got == pytest.approx(4 * 2 * 4 * 128 * m / 2)   # the diagonal's half, no more


def test_square_causal_and_full_counts_are_unchanged():
    assert flops(2048, 2048, 1) == 4 * 2 * 4 * 128 * 2048 * 2048 / 2
    assert flops(512, 8192, 0) == 4 * 2 * 4 * 128 * 512 * 8192


def test_more_queries_than_keys_counts_only_the_keys_triangle():
    # rows 0 .. q-k-1 see no key at all: the work is the k x k triangle, a third of q k / 2 here
    assert flops(8148, 2632, 1) == pytest.approx(4 * 2 * 4 * 128 * 2632 ** 2 / 2)
    assert flops(8148, 2632, 1) < 0.33 * flops(8148, 2632, 0) / 2 * 1.001


def nbytes(q: int, k: int, causal: int, d: int = 128, b: int = 2, h: int = 8, hkv: int = 2) -> float:
    sc = TASK.scenario({"batch": b, "seqlen_q": q, "seqlen_k": k, "heads_q": h, "heads_kv": hkv,
                        "head_dim": d, "causal": causal})
    return TASK.metric("bytes", sc)


def needed_bytes(q: int, k: int, causal: int, d: int = 128, b: int = 2, h: int = 8, hkv: int = 2) -> int:
    """What an exact kernel must move: Q of the rows that see a key, K and V once, O (bf16) and
    LSE (fp32) of every row."""
    rows_q = sum(1 for i in range(q) if not causal or i + k - q >= 0)
    return b * (2 * d * (rows_q + q) * h + 2 * 2 * d * k * hkv + 4 * h * q)


@pytest.mark.parametrize("q,k,causal", [(8973, 776, 1), (8973, 776, 0), (776, 8973, 1), (518, 518, 1),
                                        (5396, 519, 1), (3000, 1, 1), (1, 3000, 1), (64, 64, 0)])
def test_bytes_never_exceed_what_an_exact_kernel_moves(q, k, causal):
    # the rows with no key to see need no Q (v101 and FA3 skip them): counting their Q failed an
    # honest kernel as faster than the DRAM peak (session 22, H100, causal q 8973 k 776)
    assert nbytes(q, k, causal) == needed_bytes(q, k, causal)


def test_bytes_of_q_rows_with_no_key_are_not_counted():
    assert nbytes(8973, 776, 1) < 0.6 * nbytes(8973, 776, 0)
