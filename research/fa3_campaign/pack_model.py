"""A model of the attention kernel's work decomposition with packed GQA (v102_pack_gqa.patch)
and the rows no key reaches left out of the work tiles (v103_zero_rows.patch): the same
arithmetic as `hop::decode` and the host's `pack_gqa`, in Python, checked against what the
kernel must do for any shape:

- every (batch, query head, query) is a row of exactly one work tile, or one of the first
  `zero_q` queries that the producer's idle warps write as zeros, which see no key;
- every work tile has a key to see (causal q > k: no tile of zeros alone);
- a work tile's rows belong to one K/V head;
- its key tiles (`n_tiles`) cover every key each of its rows may see (causal masks aligned
  bottom right: query i sees keys <= i + seqlen_k - seqlen_q), and its unmasked tiles
  (`n_plain`) hold no key any of its rows may not see.

    python3 pack_model.py [N]      N random shapes (default 3000); one line, exit 1 at a breach

It checks the decomposition, not the kernel: TMA boxes, swizzles and barriers need a GPU
(research/fa3_campaign/calls/s21c3.sh).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass


def pack_gqa(seqlen_q: int, group: int, bm: int) -> int:
    """FlashAttention-3's rule, as the kernel's host code has it: pack a K/V head's query heads
    into one tile where the query tiles' padding wastes 10% more than the packed rows' would."""
    if group not in (2, 4, 8):
        return 1
    def efficiency(rows: int) -> float:
        return rows / ((rows + bm - 1) // bm * bm)
    return group if efficiency(seqlen_q) < 0.9 * efficiency(seqlen_q * group) else 1


@dataclass(frozen=True)
class Shape:
    batch: int
    seqlen_q: int
    seqlen_k: int
    heads_kv: int
    group: int
    causal: bool
    bm: int      # query rows a work tile (64 a consumer)
    bn: int      # keys a key tile
    sect: int    # causal: heads a section of the heavy-first order
    zero_rows: bool = True   # v103: the rows no key reaches written by the fill, not by tiles


def breaches(s: Shape) -> list[str]:
    """What the decomposition gets wrong for shape s (empty: nothing)."""
    pack = pack_gqa(s.seqlen_q, s.group, s.bm)
    sh, mask = pack.bit_length() - 1, pack - 1
    heads_q = s.heads_kv * s.group
    heads_t = heads_q // pack
    q_tiles = (s.seqlen_q * pack + s.bm - 1) // s.bm
    # v103: the query tiles before the first query that sees a key are nobody's work tiles
    q_first = (s.seqlen_q - s.seqlen_k) * pack // s.bm if s.zero_rows and s.causal and s.seqlen_q > s.seqlen_k else 0
    q_tiles -= q_first
    zero_q = (q_first * s.bm) >> sh
    hb_total = heads_t * s.batch
    diag = s.seqlen_k - s.seqlen_q
    seen: set[tuple[int, int, int]] = set()
    out: list[str] = []
    for batch in range(s.batch):   # the zero rows the fill writes
        for head in range(heads_q):
            for q in range(min(zero_q, s.seqlen_q)):
                seen.add((batch, head, q))
                if q + diag + 1 > 0:
                    out.append(f"query {q} sees a key but is written as zeros")
    for idx in range(q_tiles * hb_total):
        if s.causal:   # heavy first within a section of heads
            per = s.sect * q_tiles
            sec, within = idx // per, idx % per
            n = min(s.sect, hb_total - sec * s.sect)
            r = within // n
            hb, q_tile = sec * s.sect + within - r * n, q_tiles - 1 - r
        else:
            hb, q_tile = idx // q_tiles, idx % q_tiles
        head0, batch, m0 = (hb % heads_t) << sh, hb // heads_t, (q_tile + q_first) * s.bm
        n_end = min(s.seqlen_k, ((m0 + s.bm - 1) >> sh) + 1 + diag) if s.causal else s.seqlen_k
        n_tiles = (n_end + s.bn - 1) // s.bn if n_end > 0 else 0
        if s.zero_rows and n_tiles == 0:
            out.append(f"tile {idx} has no key to see")
        n_plain = s.seqlen_k // s.bn
        if s.causal:
            n_plain = min(n_plain, max(0, ((m0 >> sh) + diag + 1) // s.bn))
        if head0 // s.group != (head0 + mask) // s.group:
            out.append(f"tile {idx} spans two K/V heads")
        for row in range(m0, m0 + s.bm):
            q, head = row >> sh, head0 + (row & mask)
            if q >= s.seqlen_q:
                continue
            if (batch, head, q) in seen:
                out.append(f"(batch {batch}, head {head}, query {q}) in two tiles")
            seen.add((batch, head, q))
            sees = max(0, min(s.seqlen_k, q + diag + 1)) if s.causal else s.seqlen_k
            if n_tiles * s.bn < sees:
                out.append(f"query {q} sees {sees} keys, tile {idx} loads {n_tiles * s.bn}")
            if n_plain * s.bn > sees:
                out.append(f"query {q} sees {sees} keys, tile {idx} leaves {n_plain * s.bn} unmasked")
    if len(seen) != s.batch * heads_q * s.seqlen_q:
        out.append(f"{len(seen)} rows covered of {s.batch * heads_q * s.seqlen_q}")
    return out


def random_shape(rng: random.Random) -> Shape:
    return Shape(batch=rng.randint(1, 3),
                 seqlen_q=rng.choice([1, 17, 95, 127, 128, 129, 183, 493, 664, 1000, rng.randint(1, 3000)]),
                 seqlen_k=rng.choice([1, 17, 70, 112, 195, 1000, rng.randint(1, 3000)]),
                 heads_kv=rng.choice([1, 2, 4]), group=rng.choice([1, 2, 3, 4, 8]),
                 causal=rng.random() < 0.5, bm=rng.choice([128, 192]),
                 bn=rng.choice([64, 80, 112, 128, 176]), sect=rng.randint(1, 4), zero_rows=rng.random() < 0.8)


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 3000
    rng = random.Random(1)
    packed = 0
    for _ in range(n):
        s = random_shape(rng)
        if found := breaches(s):
            print(f"pack_model: {s}: {found[0]}")
            return 1
        packed += pack_gqa(s.seqlen_q, s.group, s.bm) > 1
    print(f"pack_model: {n} shapes, {packed} packed, no breach")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
