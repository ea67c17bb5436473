# CPU only: python3 benchmarks/hd_layout_model.py (issue 42; see docs/research/hd96_192.md)
# Model check of fa3_hd_all.cu's smem layout arithmetic: TMA boxes written in swizzle, read back
# through the kernel's wgmma descriptors (canonical layouts per PTX ISA / CUTLASS GMMA docs).
import itertools
def swz(addr, R):  # address-based swizzle: 16B chunk bits [4..] ^= bits [7..]
    mask = {128: 7, 64: 3}[R]
    return addr ^ (((addr >> 7) & mask) << 4)

def check(HD, BM, BN, STAGES, NC):
    PW = 64 if HD % 64 == 0 else 32; ROWB = 2*PW; KPP = PW//16; SBO = 8*ROWB
    PANELS = HD//PW; Q_PANEL = BM*ROWB; KV_PANEL = BN*ROWB
    Q_BYTES = PANELS*Q_PANEL; KV_BYTES = PANELS*KV_PANEL
    base = 1024*37; Q_OFF = 0; K_OFF = Q_BYTES; V_OFF = K_OFF + STAGES*KV_BYTES
    mem = {}
    def tma(dst, tensor, col0, row0, rows):  # box {PW, rows}: row r, columns col0..col0+PW
        assert dst % (8*ROWB) == 0, "panel not aligned to the swizzle atom"
        for r in range(rows):
            for cbyte in range(0, ROWB, 2):
                a = swz(dst + r*ROWB + cbyte, ROWB)
                mem[a] = (tensor, row0 + r, col0 + cbyte//2)
    # Q tile (one buffer), K and V in stage s
    for p in range(PANELS): tma(base + Q_OFF + p*Q_PANEL, 'Q', PW*p, 0, BM)
    for s in range(STAGES):
        for p in range(PANELS):
            tma(base + K_OFF + s*KV_BYTES + p*KV_PANEL, 'K%d' % s, PW*p, 0, BN)
            tma(base + V_OFF + s*KV_BYTES + p*KV_PANEL, 'V%d' % s, PW*p, 0, BN)
    def desc_lo(addr, lbo): return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16)
    def dec(lo):  # start address, lbo from a lo word
        return (lo & 0x3FFF) << 4, ((lo >> 16) & 0x3FFF) << 4
    def kmajor(lo, sbo, m, k):  # element (m, k), k < 16 of one instruction
        start, _ = dec(lo)
        return swz(start + (m % 8)*ROWB + (m // 8)*sbo + 2*k, ROWB)
    def mnmajor(lo, sbo, k, n):  # element (k, n): k < 16 keys, n < N
        start, lbo = dec(lo)
        W = ROWB // 2
        return swz(start + 2*(n % W) + (n // W)*lbo + (k % 8)*ROWB + (k // 8)*sbo, ROWB)
    errs = 0
    for c in range(NC):
        q_smem = base + Q_OFF + c*64*ROWB
        q_lo = desc_lo(q_smem, 16)
        for kk in range(HD//16):
            lo = q_lo + (((kk // KPP)*Q_PANEL + (kk % KPP)*32) >> 4)   # make_q_desc
            for m, k in itertools.product(range(64), range(16)):
                if mem.get(kmajor(lo, SBO, m, k)) != ('Q', c*64 + m, 16*kk + k): errs += 1
    k_lo = desc_lo(base + K_OFF, 16); v_lo = desc_lo(base + V_OFF, KV_PANEL)
    for s in range(STAGES):
        for kk in range(HD//16):
            ko = (kk // KPP)*KV_PANEL + (kk % KPP)*32
            lo = k_lo + s*(KV_BYTES >> 4) + (ko >> 4)                   # issue_qk's B
            for n, k in itertools.product(range(BN), range(16)):
                if mem.get(kmajor(lo, SBO, n, k)) != ('K%d' % s, n, 16*kk + k): errs += 1
        for kk in range(BN//16):
            lo = v_lo + s*(KV_BYTES >> 4) + kk*((16*ROWB) >> 4)          # issue_pv's B
            for k, n in itertools.product(range(16), range(HD)):
                if mem.get(mnmajor(lo, SBO, k, n)) != ('V%d' % s, 16*kk + k, n): errs += 1
    print(f"d{HD} BN{BN}: {'ok' if errs == 0 else f'{errs} MISMATCHES'}")
for args in [(64,192,128,4,3),(128,128,128,2,2),(256,128,80,2,2),(96,128,128,2,2),(192,128,112,2,2),(96,192,96,2,3)]:
    check(*args)
