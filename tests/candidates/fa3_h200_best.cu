// FlashAttention forward for the H200, written in a socratic campaign (sessions/fa3-h200).
// Every head dim (64, 96, 128, 192, 256) takes the Hopper path (TMA, wgmma, warp-specialized
// producer/consumer warpgroups): issue 42 extended it from 64/128/256 to 96 and 192 (one
// kernel template over the head dim: tiles as panels of 64 columns in 128B swizzle, or of 32
// columns in 64B swizzle where the head dim is no multiple of 64; docs/research/hd96_192.md).
// The FlashAttention-2-style baseline kernel is kept below as namespace fa2: d96/d192 fall
// back to it where TMA cannot describe the tensors, or with HOP_HD_ALL=0 (as shipped before).
#define HOP_PINGPONG 1
#define HOP_BN_256 80
#define HOP_BN_64 128
#define HOP_STAGES_64 4
#define HOP_NC_64 3
#define HOP_RESCALE_EARLY 1
#define HOP_PERSIST 1
#define HOP_PERSIST_256C 0
#define HOP_EPI16 1
#define HOP_D128_NO192 1
#define HOP_PP_CONT 1
#define HOP_CAUSAL_WIDE 0
#define HOP_SECT_MB 32
#define HOP_PP_CONT_MAX_128 16
#define HOP_TILE_LONG_128 0
#define HOP_UNIFORM 1
#define HOP_DESC_ONCE 1
#define HOP_PERSIST_256C_MAXK 2048
#define HOP_PP_CONT_CAUSAL 1
#define HOP_RESCALE_EARLY_64 1
#define HOP_PROD_SLEEP 1
#define HOP_SPLIT_MASK 1
#define HOP_WAIT_V_LATE 1
#define HOP_L2_HINT 1
#define HOP_RESCALE_EARLY_128 0
#define HOP_D128_Q2_FULL_MAXK 4096
#define HOP_REVERSE 1
#define HOP_STAGE_U 1
#define HOP_QDESC_HOIST 2
#define HOP_PLAIN_NOINF 1
#define HOP_EPI_TMA 1
#define HOP_EPI_TMA_64 0
#define HOP_QREL_PEEL 3
#define HOP_K_AHEAD 1
#define HOP_K_AHEAD_64 0
#define HOP_TILE_ARITH 1
// FlashAttention forward — the baseline kernel campaigns start from.
//
// A FlashAttention-2-style kernel for sm_80+ (built for sm_90a), written with plain CUDA and
// inline PTX only (no CUTLASS / CuTe / cuBLAS / cuDNN):
//   * bf16 tensor-core MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//   * ldmatrix (x4) for Q and K fragments, ldmatrix.trans for V fragments
//   * cp.async global->shared with a double-buffered K/V pipeline (tile t+1 loads while
//     tile t is computed); out-of-range K/V/Q rows are zero-filled (cp.async src-size 0)
//   * shared-memory rows padded by 16 bytes so every ldmatrix / cp.async is bank-conflict free
//   * online softmax in fp32 registers, exp2f with the softmax scale folded into log2 space
//   * P is converted to bf16 in registers and reused directly as the A operand of P·V
//   * fp32 O accumulator; O written with 16-byte stores (staged through shared memory), LSE in fp32
//   * masking only on tiles that need it (ragged tail of seqlen_k, causal diagonal);
//     causal tiles above the diagonal are skipped entirely
//
// Work decomposition: one CTA of 4 warps per (64-query-row tile, query head, batch);
// each warp owns 16 query rows. K/V tile size BLOCK_N and the kernel are templated on HEAD_DIM.
// Resources (nvcc 13.0 -O3, sm_90a; 0 spill bytes everywhere; dynamic smem = Q + 2x(K+V) tiles):
//   d=64  BLOCK_N=128: 231 regs,  82944 B      d=96  BLOCK_N=64: 165 regs, 66560 B
//   d=128 BLOCK_N=64 : 170 regs,  87040 B      d=192 BLOCK_N=32: 241 regs, 76800 B
//   d=256 BLOCK_N=32 : 252 regs, 101376 B      -> 2 CTAs (8 warps) per SM (3 at d=96)
// What a Hopper-tuned kernel would do instead (campaign material): wgmma + TMA, warp
// specialization, producer/consumer pipelining, larger M tiles, intra-warpgroup overlap of
// softmax and MMA, persistent scheduling, FP8 ...
//
// ABI (fixed, see docs/ARCHITECTURE.md):
//   q  bf16 [batch, seqlen_q, heads_q,  head_dim]   (contiguous)
//   k  bf16 [batch, seqlen_k, heads_kv, head_dim]
//   v  bf16 [batch, seqlen_k, heads_kv, head_dim]
//   o  bf16 [batch, seqlen_q, heads_q,  head_dim]
//   lse fp32 [batch, heads_q, seqlen_q]  = log(sum_j exp(scale * q·k_j)) over allowed keys
// Query head h reads KV head h / (heads_q / heads_kv). Causal masks are aligned to the
// bottom-right corner: query i may attend key j iff j <= i + seqlen_k - seqlen_q. A query row
// with no allowed key gets O = 0 and LSE = -inf.
// Supported: head_dim in {64, 96, 128, 192, 256}, heads_q % heads_kv == 0, softmax_scale > 0.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

struct AttnFwdParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  void* workspace;
  unsigned long long workspace_bytes;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
  float softmax_scale;
  int causal;
};

namespace fa2 {

typedef __nv_bfloat16 bf16;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int BLOCK_M = kWarps * 16;  // 64 query rows per CTA, 16 per warp

// K/V tile size per head dim: bigger tiles amortise the softmax and barriers, smaller ones
// keep the fp32 O accumulator (HEAD_DIM/2 registers per thread) plus the S tile
// (BLOCK_N/2 registers per thread) inside the 255-register budget without spills.
template <int HEAD_DIM> struct Tile;
template <> struct Tile<64>  { static constexpr int BLOCK_N = 128; };
template <> struct Tile<96>  { static constexpr int BLOCK_N = 64; };
template <> struct Tile<128> { static constexpr int BLOCK_N = 64; };
template <> struct Tile<192> { static constexpr int BLOCK_N = 32; };
template <> struct Tile<256> { static constexpr int BLOCK_N = 32; };

// Shared-memory row stride in elements: HEAD_DIM plus 8 bf16 (16 bytes) of padding. Rows then
// start 4 banks apart (mod 32), so the 8 row addresses of an ldmatrix phase hit disjoint banks.
template <int HEAD_DIM> struct Smem { static constexpr int STRIDE = HEAD_DIM + 8; };

template <int HEAD_DIM>
constexpr size_t smem_bytes() {
  // Q tile + 2 K buffers + 2 V buffers
  return (size_t)(BLOCK_M + 4 * Tile<HEAD_DIM>::BLOCK_N) * Smem<HEAD_DIM>::STRIDE * sizeof(bf16);
}

// ---------------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; when !valid the 16 shared bytes are zero-filled and nothing is read.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// D = A(16x16, row) * B(16x8, col) + D, bf16 inputs, fp32 accumulate.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats -> packed bf16x2 (lo in the low half, i.e. the lower column index).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// ---------------------------------------------------------------------------------------------
// Global -> shared tile copy: ROWS rows of HEAD_DIM bf16, rows >= rows_valid are zero-filled.
// ---------------------------------------------------------------------------------------------
template <int ROWS, int HEAD_DIM>
__device__ __forceinline__ void load_tile_async(bf16* smem, const bf16* gmem, int64_t row_stride, int rows_valid,
                                                int tid) {
  constexpr int CHUNKS = HEAD_DIM / 8;  // 16-byte chunks per row
  constexpr int STRIDE = Smem<HEAD_DIM>::STRIDE;
  static_assert((ROWS * CHUNKS) % kThreads == 0, "tile copy must split evenly over the CTA");
#pragma unroll
  for (int i = 0; i < ROWS * CHUNKS / kThreads; ++i) {
    const int idx = i * kThreads + tid;
    const int r = idx / CHUNKS, c = idx % CHUNKS;
    const bool valid = r < rows_valid;
    const bf16* src = valid ? gmem + r * row_stride + c * 8 : gmem;  // any valid address when zero-filling
    cp_async_16(smem_addr(smem + r * STRIDE + c * 8), src, valid);
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------
template <int HEAD_DIM>
__global__ void __launch_bounds__(kThreads) attn_fwd_kernel(const AttnFwdParams p) {
  constexpr int BLOCK_N = Tile<HEAD_DIM>::BLOCK_N;
  constexpr int STRIDE = Smem<HEAD_DIM>::STRIDE;
  constexpr int S_NB = BLOCK_N / 8;   // n8 blocks of the S tile per warp (16 x BLOCK_N)
  constexpr int O_NB = HEAD_DIM / 8;  // n8 blocks of the O tile per warp (16 x HEAD_DIM)
  constexpr float kLog2e = 1.4426950408889634f;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sQ = reinterpret_cast<bf16*>(smem_raw);  // [BLOCK_M][STRIDE]
  bf16* sK = sQ + BLOCK_M * STRIDE;              // [2][BLOCK_N][STRIDE]
  bf16* sV = sK + 2 * BLOCK_N * STRIDE;          // [2][BLOCK_N][STRIDE]

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  // Causal: the bottom query tiles see the most keys; launch them first for better tail balance.
  const int m_block = p.causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int head_kv = head / (p.heads_q / p.heads_kv);
  const int m_start = m_block * BLOCK_M;
  const int diag = p.seqlen_k - p.seqlen_q;  // query i may see keys j <= i + diag (causal)

  const int64_t q_stride = (int64_t)p.heads_q * HEAD_DIM;    // elements between consecutive tokens
  const int64_t kv_stride = (int64_t)p.heads_kv * HEAD_DIM;
  const bf16* gQ = static_cast<const bf16*>(p.q) + ((int64_t)batch * p.seqlen_q + m_start) * q_stride + head * HEAD_DIM;
  const bf16* gK = static_cast<const bf16*>(p.k) + (int64_t)batch * p.seqlen_k * kv_stride + head_kv * HEAD_DIM;
  const bf16* gV = static_cast<const bf16*>(p.v) + (int64_t)batch * p.seqlen_k * kv_stride + head_kv * HEAD_DIM;
  bf16* gO = static_cast<bf16*>(p.o) + ((int64_t)batch * p.seqlen_q + m_start) * q_stride + head * HEAD_DIM;
  float* gLse = p.lse + ((int64_t)batch * p.heads_q + head) * p.seqlen_q;

  const int rows_q = min(BLOCK_M, p.seqlen_q - m_start);  // valid query rows in this tile

  // Keys this query tile can see: [0, n_end). Causal tiles past the diagonal are skipped.
  int n_end = p.seqlen_k;
  if (p.causal) n_end = min(n_end, m_start + BLOCK_M + diag);
  const int n_tiles = n_end > 0 ? (n_end + BLOCK_N - 1) / BLOCK_N : 0;

  if (n_tiles == 0) {
    // Every row of this tile is fully masked (causal, seqlen_q > seqlen_k): O = 0, LSE = -inf.
    constexpr int CHUNKS = HEAD_DIM / 8;
    for (int idx = tid; idx < rows_q * CHUNKS; idx += kThreads) {
      const int r = idx / CHUNKS, c = idx % CHUNKS;
      *reinterpret_cast<uint4*>(gO + r * q_stride + c * 8) = make_uint4(0, 0, 0, 0);
    }
    for (int r = tid; r < rows_q; r += kThreads) gLse[m_start + r] = -INFINITY;
    return;
  }

  // ---- prologue: Q tile and the first K/V tile in one cp.async group ----
  load_tile_async<BLOCK_M, HEAD_DIM>(sQ, gQ, q_stride, rows_q, tid);
  load_tile_async<BLOCK_N, HEAD_DIM>(sK, gK, kv_stride, min(BLOCK_N, p.seqlen_k), tid);
  load_tile_async<BLOCK_N, HEAD_DIM>(sV, gV, kv_stride, min(BLOCK_N, p.seqlen_k), tid);
  cp_async_commit();

  // Per-lane ldmatrix row/column offsets (see the m16n8k16 fragment layouts in the PTX ISA).
  // A (Q, 16x16 row-major): matrices {rows 0-7, k 0-7}, {rows 8-15, k 0-7}, {rows 0-7, k 8-15}, {rows 8-15, k 8-15}
  const uint32_t q_frag = smem_addr(sQ + (warp * 16 + (lane & 15)) * STRIDE + (lane >> 4) * 8);
  // B (K rows are the n index): {n 0-7, k 0-7}, {n 0-7, k 8-15}, {n 8-15, k 0-7}, {n 8-15, k 8-15}
  const int k_frag = ((lane & 7) + ((lane >> 4) << 3)) * STRIDE + ((lane >> 3) & 1) * 8;
  // B (V rows are the k index, .trans): {k 0-7, n 0-7}, {k 8-15, n 0-7}, {k 0-7, n 8-15}, {k 8-15, n 8-15}
  const int v_frag = ((lane & 7) + (((lane >> 3) & 1) << 3)) * STRIDE + (lane >> 4) * 8;

  // This thread holds rows (lane/4) and (lane/4 + 8) of its warp's 16 rows.
  float acc_o[O_NB][4];
#pragma unroll
  for (int i = 0; i < O_NB; ++i) acc_o[i][0] = acc_o[i][1] = acc_o[i][2] = acc_o[i][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};  // running max of raw scores q·k
  float row_sum[2] = {0.f, 0.f};              // running (per-thread partial) softmax denominator
  const float scale_log2 = p.softmax_scale * kLog2e;
  const int row_base = m_start + warp * 16 + (lane >> 2);

  for (int t = 0; t < n_tiles; ++t) {
    const int buf = t & 1;
    const int n_start = t * BLOCK_N;

    // ---- issue the next K/V tile into the other buffer, then wait for this one ----
    if (t + 1 < n_tiles) {
      const int n_next = n_start + BLOCK_N;
      const int rows_kv = min(BLOCK_N, p.seqlen_k - n_next);
      load_tile_async<BLOCK_N, HEAD_DIM>(sK + (buf ^ 1) * BLOCK_N * STRIDE, gK + n_next * kv_stride, kv_stride, rows_kv, tid);
      load_tile_async<BLOCK_N, HEAD_DIM>(sV + (buf ^ 1) * BLOCK_N * STRIDE, gV + n_next * kv_stride, kv_stride, rows_kv, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    // ---- S = Q K^T (16 x BLOCK_N per warp, fp32) ----
    float s[S_NB][4];
#pragma unroll
    for (int i = 0; i < S_NB; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
    const uint32_t k_base = smem_addr(sK + buf * BLOCK_N * STRIDE + k_frag);
#pragma unroll
    for (int kk = 0; kk < HEAD_DIM / 16; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, q_frag + kk * 16 * sizeof(bf16));
#pragma unroll
      for (int nb = 0; nb < BLOCK_N / 16; ++nb) {
        uint32_t b[4];
        ldmatrix_x4(b, k_base + (nb * 16 * STRIDE + kk * 16) * sizeof(bf16));
        mma_16816(s[2 * nb], a, b[0], b[1]);
        mma_16816(s[2 * nb + 1], a, b[2], b[3]);
      }
    }

    // ---- mask (only the ragged seqlen_k tail and tiles crossing the causal diagonal) ----
    const bool need_mask = (n_start + BLOCK_N > p.seqlen_k) || (p.causal && n_start + BLOCK_N - 1 > m_start + diag);
    if (need_mask) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = row_base + r * 8;
        const int limit = p.causal ? min(p.seqlen_k, row + diag + 1) : p.seqlen_k;  // keys < limit allowed
#pragma unroll
        for (int nb = 0; nb < S_NB; ++nb) {
          const int col = n_start + nb * 8 + (lane & 3) * 2;
          if (col >= limit) s[nb][2 * r] = -INFINITY;
          if (col + 1 >= limit) s[nb][2 * r + 1] = -INFINITY;
        }
      }
    }

    // ---- online softmax (each row's 4 owner threads are one quad: reduce with shfl.xor 1, 2) ----
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[r];
#pragma unroll
      for (int nb = 0; nb < S_NB; ++nb) mx = fmaxf(mx, fmaxf(s[nb][2 * r], s[nb][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with no allowed key so far has mx = -inf: use 0 so that exp2(-inf - 0) = 0, not NaN.
      const float mx_scaled = (mx == -INFINITY) ? 0.f : mx * scale_log2;
      const float alpha = exp2f(row_max[r] * scale_log2 - mx_scaled);  // rescale of the old state
      row_max[r] = mx;
      row_sum[r] *= alpha;
#pragma unroll
      for (int nb = 0; nb < O_NB; ++nb) {
        acc_o[nb][2 * r] *= alpha;
        acc_o[nb][2 * r + 1] *= alpha;
      }
#pragma unroll
      for (int nb = 0; nb < S_NB; ++nb) {
        s[nb][2 * r] = exp2f(fmaf(s[nb][2 * r], scale_log2, -mx_scaled));
        s[nb][2 * r + 1] = exp2f(fmaf(s[nb][2 * r + 1], scale_log2, -mx_scaled));
        row_sum[r] += s[nb][2 * r] + s[nb][2 * r + 1];
      }
    }

    // ---- O += P V: the S accumulator layout is the A-fragment layout, so P stays in registers ----
    const uint32_t v_base = smem_addr(sV + buf * BLOCK_N * STRIDE + v_frag);
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
      uint32_t a[4];
      a[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);          // row g,   keys 2t..2t+1
      a[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);          // row g+8, keys 2t..2t+1
      a[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);  // row g,   keys 2t+8..
      a[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);  // row g+8, keys 2t+8..
#pragma unroll
      for (int nb = 0; nb < HEAD_DIM / 16; ++nb) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, v_base + (kk * 16 * STRIDE + nb * 16) * sizeof(bf16));
        mma_16816(acc_o[2 * nb], a, b[0], b[1]);
        mma_16816(acc_o[2 * nb + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // everyone is done with buffer `buf` before the next iteration refills it
  }

  // ---- epilogue: normalise, write LSE, stage O (bf16) in this warp's Q rows, 16-byte stores ----
  float inv_sum[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    inv_sum[r] = sum > 0.f ? 1.f / sum : 0.f;  // fully masked row: O = 0
    const int row = row_base + r * 8;
    if ((lane & 3) == 0 && row < p.seqlen_q)
      gLse[row] = sum > 0.f ? row_max[r] * p.softmax_scale + logf(sum) : -INFINITY;
  }

  // The warp's 16 rows of sQ are read only by this warp, and the loop ended with a barrier.
  bf16* sO = sQ + warp * 16 * STRIDE;
#pragma unroll
  for (int nb = 0; nb < O_NB; ++nb) {
    const int col = nb * 8 + (lane & 3) * 2;
    *reinterpret_cast<uint32_t*>(sO + (lane >> 2) * STRIDE + col) =
        pack_bf16(acc_o[nb][0] * inv_sum[0], acc_o[nb][1] * inv_sum[0]);
    *reinterpret_cast<uint32_t*>(sO + ((lane >> 2) + 8) * STRIDE + col) =
        pack_bf16(acc_o[nb][2] * inv_sum[1], acc_o[nb][3] * inv_sum[1]);
  }
  __syncwarp();
  constexpr int CHUNKS = HEAD_DIM / 8;
#pragma unroll
  for (int idx = lane; idx < 16 * CHUNKS; idx += 32) {
    const int r = idx / CHUNKS, c = idx % CHUNKS;
    const int row = warp * 16 + r;
    if (row < rows_q)
      *reinterpret_cast<uint4*>(gO + row * q_stride + c * 8) = *reinterpret_cast<const uint4*>(sO + r * STRIDE + c * 8);
  }
}

template <int HEAD_DIM>
int launch(const AttnFwdParams& p, cudaStream_t stream) {
  const size_t smem = smem_bytes<HEAD_DIM>();
  // Above 48 KB of dynamic shared memory the kernel must opt in (cheap; done on every call so
  // that the library keeps no state between calls).
  cudaError_t err = cudaFuncSetAttribute(attn_fwd_kernel<HEAD_DIM>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (err != cudaSuccess) return (int)err;
  const dim3 grid((p.seqlen_q + BLOCK_M - 1) / BLOCK_M, p.heads_q, p.batch);
  attn_fwd_kernel<HEAD_DIM><<<grid, kThreads, smem, stream>>>(p);
  err = cudaGetLastError();
  return err == cudaSuccess ? 0 : (int)err;
}

}  // namespace fa2

// ============================================================================================
// The Hopper path (all head dims; 96 and 192 since issue 42): TMA + wgmma, warp-specialized producer/consumers.
//
// One CTA per (128-query tile, query head, batch); 3 warpgroups: warpgroup 0 produces (one
// thread issues the TMA loads of Q once and K/V per stage), warpgroups 1 and 2 consume: each
// owns 64 query rows and runs the online softmax over the CTA's key range. Within a consumer,
// S(t+1) = Q K(t+1)^T is issued before the softmax of tile t+1 waits on it, and O += P(t) V(t)
// runs while that softmax computes (intra-warpgroup overlap of softmax and GEMMs).
//
// Tiles live in shared memory as 64-column panels (TMA box {64 elements, rows}, 128B swizzle,
// 1024-byte aligned), which is what the wgmma descriptors below describe; at head dim 96 as
// three 32-column panels (box {32, rows}, 64B swizzle, 512-byte aligned: Layout::PW).
// ============================================================================================
#include <cuda.h>
#include <type_traits>

namespace hop {

typedef __nv_bfloat16 bf16;

#ifndef HOP_PINGPONG
#define HOP_PINGPONG 0
#endif
#ifndef HOP_EMU_EVERY
#define HOP_EMU_EVERY 0
#endif
// timing stubs, wrong by design (the gap.free-memory-free-math question; never a candidate):
// 1: no exponentials (P = the scaled, shifted S), 2: no softmax at all (P = S), 3: K/V loaded
// only into the ring's first stages, later tiles handed to the consumers without a copy
#ifndef HOP_STUB
#define HOP_STUB 0
#endif
// the producer loads K(t+1) before V(t), the order the consumers need them in (S(t+1) is
// issued before P(t) V(t)), as FA3's does: K's copy no longer queues behind V's wait for a
// free stage, which comes half a key tile later (session 8: st3 without K/V copies ran 5.8%
// faster at d128-s8k causal, 7.7% at s1k: the copies are on the consumers' path)
#ifndef HOP_K_AHEAD
#define HOP_K_AHEAD 0
#endif
// 2: and the next work tile's first K before this tile's last V (session 8: st4, v87 without
// copies, still 4.9-7.2% faster: a tile's end still serializes them). Refuted in s9c1 (v90):
// short causal d128 -1%, and one of its timed runs came out wrong (7x the baseline's error,
// d128-s4k without a mask): most likely a race in this order (not located), never hit by a
// correctness call
// ... at head dim 64 on its own (s8c4, s8c5: d64 without a mask -1-2% with it; four stages;
// 0 in v89: d64 without a mask +1-3% in s9c1-s9c3, the geomean within noise of v88's)
#ifndef HOP_K_AHEAD_64
#define HOP_K_AHEAD_64 HOP_K_AHEAD
#endif
// a work tile's first S = Q K^T issued by halves of the head dim: Q and the tile's first K load
// as two halves with a full barrier each, and the first half's wgmmas start as soon as it has
// landed (session 9: the consumers wait for the latency of a work tile's first K and Q, not for
// bandwidth, 3-5x what the rate needs being in flight). The other K tiles load whole, so the
// key loop is unchanged. Head dims of two panels or more (d128, d256)
#ifndef HOP_PANEL_SPLIT
#define HOP_PANEL_SPLIT 0
#endif
#ifndef HOP_CAUSAL_WIDE
#define HOP_CAUSAL_WIDE 0
#endif
#ifndef HOP_RESCALE_EARLY
#define HOP_RESCALE_EARLY 0
#endif
#ifndef HOP_BN_64
#define HOP_BN_64 128
#endif
#ifndef HOP_STAGES_64
#define HOP_STAGES_64 4
#endif
#ifndef HOP_BN_256
#define HOP_BN_256 64
#endif


// keys per K/V tile and stages of the ring, per head dim and mask (causal keeps 128 keys at
// d128: a wider tile wastes more of the diagonal)
// wgmma descriptors built once per warpgroup and advanced by a 32-bit add (FA3 does so);
// 0 rebuilds each from its address at every issue: ~80 uniform-datapath instructions per
// key tile more than FA3's loop (sass_loops.py)
#ifndef HOP_DESC_ONCE
#define HOP_DESC_ONCE 0
#endif
// NC: consumer warpgroups of 64 query rows each (the CTA's query tile is 64 * NC rows);
// 3 at d64 is FA3's shape there (HOP_NC_64), 2 elsewhere
#ifndef HOP_NC_64
#define HOP_NC_64 2
#endif
// causal tile order: heavy query tiles first over sections of heads whose K/V fit in this
// many MB of L2 (0: one head at a time, heavy first within it). A section per head left
// the heaviest tiles of the last heads for the end: a tail of one long tile (~5% at s8k)
#ifndef HOP_SECT_MB
#define HOP_SECT_MB 0
#endif
// persistent CTAs (one per SM): the producer loads the next work tile's first K, then its
// Q once the consumers are done with the last one, while they finish this tile; O is
// stored from registers. Causal tiles come from a counter in the workspace (dynamic, in
// the heavy-first order above), full ones by a static stride
#ifndef HOP_PERSIST
#define HOP_PERSIST 0
#endif
// persistent CTAs for causal head dim 256 too (measured slower there than one CTA a tile)
#ifndef HOP_PERSIST_256C
#define HOP_PERSIST_256C 1
#endif
// the persistent epilogue's O stores 16 bytes wide (a 4x4 transpose of words across each
// quad by shuffles) instead of 4: a quarter of the store instructions, whole 32-byte sectors
#ifndef HOP_EPI16
#define HOP_EPI16 0
#endif
// d128 non-causal: leave the 192-key tile out of the cost model's choice (its persistent
// kernel spills 12 bytes)
#ifndef HOP_D128_NO192
#define HOP_D128_NO192 0
#endif
// persistent ping-pong runs on across work tiles: the last consumer's last turn of a tile
// hands the tensor cores to consumer 0 for the next one (0: consumer 0 waits until the last
// consumer has finished its epilogue and reached the next tile); the very last hand-over
// of the CTA is left unanswered at exit, as every turn of a tile is
#ifndef HOP_PP_CONT
#define HOP_PP_CONT 0
#endif
// ... at head dim 128 only where a work tile has at most this many key tiles (measured: +3%
// at s1k, -2% at s8k and s16k without a mask); at 64 and 256 always
#ifndef HOP_PP_CONT_MAX_128
#define HOP_PP_CONT_MAX_128 1000000
#endif
// ... and at head dim 128 on causal work tiles of any length (the limit above was measured
// without a mask)
#ifndef HOP_PP_CONT_CAUSAL
#define HOP_PP_CONT_CAUSAL 0
#endif
// d128 without a mask from this many keys on: one CTA a tile (no persistence), with the
// 192-key tile back in the choice (its non-persistent kernel does not spill: 1-2.5% faster
// at s4k-s16k than the persistent 176); 0: never
#ifndef HOP_D128_NP_MIN
#define HOP_D128_NP_MIN 0
#endif
// d128 with long key ranges (seqlen_k >= 8192, or >= 4096 without a mask) on the
// one-CTA-a-tile kernel of evaluation 36 (hopper_tile.cuh): measured side by side, it is
// 1-6% faster there (s16k causal 0.958x FA3 against 0.899x)
#ifndef HOP_TILE_LONG_128
#define HOP_TILE_LONG_128 0
#endif
// persistent: two Q buffers where shared memory has room (d64, d128 with 128-key tiles), so
// the producer loads the next work tile's Q while the consumers still read this one's (one
// buffer: consumer 0 waits at every tile boundary for the last consumer's last S = Q K^T,
// then for the Q load's latency, with only the last P V on the tensor cores)
#ifndef HOP_Q2
#define HOP_Q2 0
#endif
// ... at head dim 64 on its own (session 10: timed again on v89, after the answer to
// memory.bytes-in-flight put the consumers' wait at a work tile's start)
#ifndef HOP_Q2_64
#define HOP_Q2_64 HOP_Q2
#endif
// a work tile's own arithmetic as FA3 does it (session 10: ncu's instruction counts put the
// difference from FA3 at a work tile, not in the key loop: d128-s1k causal 1080 instructions a
// consumer warp a work tile against FA3's 957, d64-s2k causal 1056 against 818): the tile's
// index decoded by multiply-high divisions (the divisors' magic numbers from the host), the
// epilogue's reciprocal and logarithm by the MUFU unit, the mask compared against the tile's
// own column limits (no column index a element)
#ifndef HOP_TILE_ARITH
#define HOP_TILE_ARITH 0
#endif
// the softmax of tile t kept ahead of the wait for P(t-1) V(t-1): its results are pinned
// (an empty asm on them) before the wait. Without it the compiler sinks the softmax to
// its uses after the wait, and the intra-warpgroup overlap is lost: ncu on d128-s4k causal
// showed the wait for P V as the kernel's most-sampled instruction, right before the
// row max (call s3c1)
#ifndef HOP_PIN_SOFTMAX
#define HOP_PIN_SOFTMAX 0
#endif
// the consumer's warpgroup index and each work tile's index broadcast from lane 0 (as
// CUTLASS does): the compiler then knows them warp-uniform, and the stage index, the
// barriers' addresses and the wgmma descriptors derived from them live in uniform
// registers. Without it, each descriptor is rebuilt per wgmma through R2UR moves (ncu, call
// s3c1: 2.5x FA3's uniform-datapath instructions on d128-s4k causal)
// (2: in the persistent kernels only; measured with 1, d256 causal, which runs one CTA a
// tile, lost 2.5%, while d256 without a mask gained 4%: call s3c2)
#ifndef HOP_UNIFORM
#define HOP_UNIFORM 0
#endif
// HOP_DESC_ONCE's 2 likewise; HOP_RESCALE_EARLY for head dim 64 on its own (late measured
// better at d64, worse at long d128: call s3c2)
// d256 causal up to this many keys on the persistent kernel, although HOP_PERSIST_256C=0
// (measured in call s3c3 with the uniform indices: s2k 0.890 -> 0.928x FA3, s8k 0.945 -> 0.910)
#ifndef HOP_PERSIST_256C_MAXK
#define HOP_PERSIST_256C_MAXK 0
#endif
// the producer's waits for a free stage suspend the thread (try_wait's suspend-time hint)
// instead of spinning: ncu (call s3c3, v41) counted 14 M more branch, try-wait and yield
// instructions than FA3's kernel, nearly all in the producer's loop on V's empty barrier,
// issue slots taken from the consumer warps beside it
#ifndef HOP_PROD_SLEEP
#define HOP_PROD_SLEEP 0
#endif
#ifndef HOP_RESCALE_EARLY_64
#define HOP_RESCALE_EARLY_64 HOP_RESCALE_EARLY
#endif
// likewise at head dim 128 (this kernel only; hopper_tile.cuh keeps HOP_RESCALE_EARLY): once
// the softmax overlaps P V, the rescale after the wait measured 1-1.5% faster at d128 and 1-4%
// slower at d256 (call s4c2, v55)
#ifndef HOP_RESCALE_EARLY_128
#define HOP_RESCALE_EARLY_128 HOP_RESCALE_EARLY
#endif
// d128 without a mask up to this many keys: 128-key tiles (they leave room for two Q
// buffers) instead of the cost model's choice; 0: never
// the key loop in two: tiles that need no mask first, with no branch between the wait for S
// and the wait for P V, then the masked tiles. With the mask behind a branch in one loop,
// ptxas put the wait for P V (WARPGROUP.DEPBAR 0x0) at the start of the softmax, so the
// softmax of tile t waited for P(t-1) V(t-1) and the intra-warpgroup overlap was lost; FA3's
// loop waits for P V after the row max and a share of the exponentials (static SASS of the
// d128 causal kernels, session 4). The Q release of a tile's last S is a predicated arrive
#ifndef HOP_SPLIT_MASK
#define HOP_SPLIT_MASK 0
#endif
// the consumer waits for V(t-1) after issuing S(t) = Q K(t)^T, not before (FA3's order)
#ifndef HOP_WAIT_V_LATE
#define HOP_WAIT_V_LATE 0
#endif
// ... at head dim 64 on its own: with the late rescale there it read 1-2% slower at d64 (calls
// s4c1, s4c2); with the early rescale (v65) the late wait is the faster (v66, call s4c5)
#ifndef HOP_WAIT_V_LATE_64
#define HOP_WAIT_V_LATE_64 HOP_WAIT_V_LATE
#endif
// stages of the K/V ring at head dim 128 with 128-key tiles (causal): 3 fit beside one Q
// buffer (224 KB); more slack for the producer at every work tile's start
#ifndef HOP_STAGES_128
#define HOP_STAGES_128 2
#endif
// L2 cache hints on the TMA loads: K and V evict_last (every query tile of a head reads
// them), Q evict_first (read once); FA3 loads K and V with EVICT_LAST
#ifndef HOP_L2_HINT
#define HOP_L2_HINT 0
#endif
// each row's first masked key column computed once per work tile, so the mask in the key loop
// is plain selects: with `args.causal ? ... : ...` inside it, the compiler made two versions of
// the masked loop and branched between them after the wait for S, and ptxas put the wait for
// P V at the merge again (v65's masked loop: 0 of 66 exponentials under P V). Session 4
// built it and read its SASS; it has not been timed
#ifndef HOP_MASK_LIMITS
#define HOP_MASK_LIMITS 0
#endif
// ... at head dim 64 (s5c1: with the limits d64 lost 1-3%, its plain loop 19 of 66
// exponentials under P V against 26 without them)
#ifndef HOP_MASK_LIMITS_64
#define HOP_MASK_LIMITS_64 HOP_MASK_LIMITS
#endif
#ifndef HOP_D128_Q2_FULL_MAXK
#define HOP_D128_Q2_FULL_MAXK 0
#endif
// key tiles walked from the last down (FA3's order): a causal work tile's masked tiles come
// first, so its first tile (S with no P V under it) is its masked one and one tile a work
// tile runs exposed instead of two; the stage ring still runs by position, only the keys a
// position loads change (session 5)
#ifndef HOP_REVERSE
#define HOP_REVERSE 0
#endif
// session 6: the key loop's issue slots (v65's plain d128 tile 495 instructions, FA3's 455,
// the difference in uniform-datapath integer work, not in the softmax). HOP_STAGE_U: the
// consumers' stage index and parity from unsigned counts (int % and / by 2 cost ~12 signed
// division fix-ups a tile)
#ifndef HOP_STAGE_U
#define HOP_STAGE_U 0
#endif
// HOP_QDESC_HOIST: Q's wgmma descriptors built once a work tile and kept (FA3 keeps them in
// uniform registers across the loop; ours rebuilt all four halves of a pair at each issue);
// 2: K's and V's descriptor bases kept as well
#ifndef HOP_QDESC_HOIST
#define HOP_QDESC_HOIST 0
#endif
// HOP_PLAIN_NOINF: no -inf guard on a plain tile's row max (every column of it is a real key,
// so the max is finite): FA3 checks only on masked tiles
#ifndef HOP_PLAIN_NOINF
#define HOP_PLAIN_NOINF 0
#endif
// persistent: O through its own shared-memory buffer (stmatrix, 8 a thread at d128) and a TMA
// store that runs under the next work tile, FA3's epilogue, where the buffer fits (d64, d128
// with 128-key tiles); else from registers (HOP_EPI16). Session 7
#ifndef HOP_EPI_TMA
#define HOP_EPI_TMA 0
#endif
// ... at head dim 64 on its own (s7c1, s7c2: d128's 128-key kernels +0.5-1%, d64 -0.4 to -0.8%)
#ifndef HOP_EPI_TMA_64
#define HOP_EPI_TMA_64 HOP_EPI_TMA
#endif
// the consumers' ring position (stage, parity) carried from one key tile to the next instead
// of derived from the tile's count at each (session 7: ~19 uniform instructions of index and
// address arithmetic at the loop's top)
#ifndef HOP_STAGE_INC
#define HOP_STAGE_INC 0
#endif
// ... at head dim 256 on its own (s7c2: d256's plain tile 468 -> 453 instructions, d64 lost 3%)
#ifndef HOP_STAGE_INC_256
#define HOP_STAGE_INC_256 HOP_STAGE_INC
#endif
// the ping-pong hand-over counted only where it can be skipped: every issue point but a work
// tile's last hands the tensor cores on, so the key loop arrives unconditionally and keeps no
// count (session 8: 3-4 uniform instructions a key tile)
#ifndef HOP_TURN_FIXED
#define HOP_TURN_FIXED 0
#endif
// ... at head dim 256 on its own (its persistent tile grew 468 -> 478 with it)
#ifndef HOP_TURN_FIXED_256
#define HOP_TURN_FIXED_256 HOP_TURN_FIXED
#endif
// the key loop's last position peeled out of it, with Q's release: the loop itself then tests
// nothing per tile for Q (session 8: 2-3 instructions a key tile, but ptxas then waits for
// P V before the softmax, 0 of 66 exponentials under it at d128: call s8c1, d128 without a
// mask s4k-s8k +0.4-0.7%, causal -0.5-1%, d64 -1.5%; peeled in d128's 128-key kernel for
// the unmasked only, its causal loop was scheduled the same way, v84's SASS); 3: in d128's
// 176-key kernel only (long sequences without a mask)
#ifndef HOP_QREL_PEEL
#define HOP_QREL_PEEL 0
#endif
// head dims 96 and 192 on this path too (issue 42); 0: the FlashAttention-2-style kernel
// (namespace fa2) as before. Their tiles, as d128's and d256's (see docs/research/hd96_192.md):
// d96 two consumers, 128-key tiles, two stages, its panels 32 columns wide (64B swizzle);
// d192 two consumers, 112-key tiles (the most that fit two stages beside Q), 64-column panels
#ifndef HOP_HD_ALL
#define HOP_HD_ALL 1
#endif
#ifndef HOP_BN_96
#define HOP_BN_96 128
#endif
#ifndef HOP_STAGES_96
#define HOP_STAGES_96 2
#endif
#ifndef HOP_NC_96
#define HOP_NC_96 2
#endif
#ifndef HOP_BN_192
#define HOP_BN_192 112
#endif
// d192 causal beyond this many keys on one CTA a tile (the non-persistent kernel, as d256
// causal runs beyond HOP_PERSIST_256C_MAXK); 0: persistent always (untimed either way)
#ifndef HOP_NP_192C_MINK
#define HOP_NP_192C_MINK 0
#endif
template <int HD, int BN_WANTED> struct Cfg;
template <int W> struct Cfg<64, W> { static constexpr int BN = HOP_BN_64, STAGES = HOP_STAGES_64, NC = HOP_NC_64; };
template <int W> struct Cfg<96, W> { static constexpr int BN = HOP_BN_96, STAGES = HOP_STAGES_96, NC = HOP_NC_96; };
template <int W> struct Cfg<128, W> { static constexpr int BN = W, STAGES = W == 128 ? HOP_STAGES_128 : 2, NC = 2; };
template <int W> struct Cfg<192, W> { static constexpr int BN = HOP_BN_192, STAGES = 2, NC = 2; };
template <int W> struct Cfg<256, W> { static constexpr int BN = HOP_BN_256, STAGES = 2, NC = 2; };

constexpr int BM2 = 128;         // the d128 query tile (2 consumers), for the host's cost model

template <int HD, int BN_WANTED> struct Layout {
  static constexpr int BN = Cfg<HD, BN_WANTED>::BN, STAGES = Cfg<HD, BN_WANTED>::STAGES;
  static constexpr int NC = Cfg<HD, BN_WANTED>::NC, BM = 64 * NC, THREADS = 128 * (NC + 1);
  // registers per thread after setmaxnreg: the producer keeps 24, the consumers share the
  // rest of the 64K-register file (multiples of 8)
  static constexpr int CONSUMER_REGS = NC == 2 ? 240 : 160;
  static_assert(24 * 128 + CONSUMER_REGS * 128 * NC <= 65536, "register file");
  // a tile is stored as panels of PW columns: 64 (128-byte rows, 128B swizzle) where the head
  // dim is a multiple of 64, else 32 (64-byte rows, 64B swizzle: d96 as three panels). TMA
  // writes each panel as one box in the swizzle the wgmma descriptors name (SWZ: the
  // descriptor's layout code, 1 = 128B, 2 = 64B); KPP: k16 steps in a panel's row; SBO: bytes
  // between 8-row groups (the K-major stride of Q and K, the K-dimension stride of V)
  static constexpr int PW = HD % 64 == 0 ? 64 : 32, ROWB = 2 * PW, KPP = PW / 16, SBO = 8 * ROWB;
  static constexpr uint32_t SWZ = PW == 64 ? 1u : 2u;
  static_assert(HD % PW == 0 && BN % 16 == 0 && BN <= 256, "tile shape");
  static constexpr int PANELS = HD / PW;
  static constexpr int Q_PANEL = BM * ROWB;           // bytes of one panel of Q
  static constexpr int KV_PANEL = BN * ROWB;
  static constexpr int Q_BYTES = PANELS * Q_PANEL;
  static constexpr int KV_BYTES = PANELS * KV_PANEL;  // one K (or V) tile
  static constexpr bool SPLIT = HOP_PANEL_SPLIT && PANELS >= 2 && PANELS % 2 == 0;   // HOP_PANEL_SPLIT
  // Q full/empty x 2, K/V full/empty per stage; HOP_PANEL_SPLIT: Q's second half per buffer,
  // a first K's second half per stage
  static constexpr int BARS = 4 + 4 * STAGES + (SPLIT ? 2 + STAGES : 0);
  static constexpr int FIXED = 2 * STAGES * KV_BYTES + 8 * BARS + 16 + 1024;   // + the alignment pad
  static constexpr int QBUF = (HD == 64 ? HOP_Q2_64 : HOP_Q2) && 2 * Q_BYTES + FIXED <= 232448 ? 2 : 1;
  static constexpr int OBUF = (HD == 64 ? HOP_EPI_TMA_64 : HOP_EPI_TMA) && PW == 64 && (QBUF + 1) * Q_BYTES + FIXED <= 232448 ? 1 : 0;   // O's buffer (HOP_EPI_TMA)
  static constexpr int Q_OFF = 0;
  static constexpr int O_OFF = QBUF * Q_BYTES;
  static constexpr int K_OFF = O_OFF + OBUF * Q_BYTES;
  static constexpr int V_OFF = K_OFF + STAGES * KV_BYTES;
  static constexpr int BAR_OFF = V_OFF + STAGES * KV_BYTES;
  static constexpr int SLOT_OFF = BAR_OFF + 8 * BARS;   // the work tile's index per Q buffer (persistent)
  // HOP_ZERO_ROWS: the fill's source, zeros then -inf (bulk copies read it): 8 KB where the
  // tiles leave room, else 1 KB (d256)
  static constexpr int Z_OFF = (SLOT_OFF + 16 + 127) / 128 * 128;
  static constexpr int Z_BYTES = Z_OFF + 8192 + 1024 <= 232448 ? 8192 : 1024;
  static constexpr int SMEM = Z_OFF + Z_BYTES + 1024;   // + the alignment pad
  static_assert(SMEM <= 232448, "tiles exceed the 227 KB of shared memory");
};

// ---- PTX wrappers ---------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
// the same wait, the thread suspended in hardware until the phase completes (or ~1 ms)
__device__ __forceinline__ void mbar_wait_sleep(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done) : "r"(bar), "r"(parity), "r"(1000000u) : "memory");
  }
}
// a TMA load into shared memory; with HOP_L2_HINT, under the given L2 cache policy
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int dim0, int head, int row,
                                         int batch, uint32_t bar, uint64_t policy) {
  if constexpr (HOP_L2_HINT)
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
        :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(dim0), "r"(head), "r"(row), "r"(batch), "r"(bar), "l"(policy)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6];"
        :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(dim0), "r"(head), "r"(row), "r"(batch), "r"(bar)
        : "memory");
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, uint32_t src, int dim0, int head, int row, int batch) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
      :: "l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(dim0), "r"(head), "r"(row), "r"(batch)
      : "memory");
}
// shared -> global, bytes a multiple of 16, both addresses 16-byte aligned (HOP_ZERO_ROWS)
__device__ __forceinline__ void bulk_store(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :: "l"(reinterpret_cast<uint64_t>(dst)), "r"(src), "r"(bytes) : "memory");
}
// four 8x8 bf16 matrices from an accumulator fragment into shared memory, a row address a lane
__device__ __forceinline__ void stmatrix4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
__device__ __forceinline__ void named_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(count) : "memory");
}

// wgmma shared-memory descriptor, 128B swizzle, base offset 0
// (swz: the layout code in bits 62-63, 1 = 128B swizzle, 2 = 64B)
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t swz = 1u) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (static_cast<uint64_t>(swz) << 62);
}
// the same as (lo, hi) words: lo holds the address field and the leading offset, so a byte
// offset that is a multiple of 16 and stays inside shared memory is one add of offset >> 4
__device__ __forceinline__ uint32_t desc_lo(uint32_t addr, uint32_t lbo) { return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16); }
__device__ __forceinline__ uint64_t desc_at(uint32_t lo, uint32_t sbo, uint32_t swz = 1u) {
  uint64_t d;
  asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"((sbo >> 4) | (swz << 30)));
  return d;
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// after a wait: the accumulators (or operands) must not be touched before it
template <int R> __device__ __forceinline__ void pin(float* d) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
template <int R> __device__ __forceinline__ void pin_u(uint32_t* d) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i]) :: "memory");
}

template <int N> __device__ __forceinline__ void wgmma_ss(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate);
template <int N> __device__ __forceinline__ void wgmma_rs(float* d, const uint32_t* a, uint64_t desc_b);
template <> __device__ __forceinline__ void wgmma_ss<64>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<64>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<80>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %42, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<80>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %45, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, {%40, %41, %42, %43}, %44, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<128>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<128>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<176>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %90, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<176>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %93, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, {%88, %89, %90, %91}, %92, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<192>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %98, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<192>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %101, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, {%96, %97, %98, %99}, %100, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<256>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<256>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %133, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// head dims 96 and 192 (HOP_HD_ALL): P V at N = 96, S = Q K^T at the key tiles 96, 112, 144
template <> __device__ __forceinline__ void wgmma_ss<96>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %50, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_rs<96>(float* d, const uint32_t* a, uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %53, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, {%48, %49, %50, %51}, %52, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
template <> __device__ __forceinline__ void wgmma_ss<112>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %58, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n112k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, %56, %57, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
template <> __device__ __forceinline__ void wgmma_ss<144>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %74, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n144k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71}, %72, %73, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^x (x <= 0) without the MUFU/conversion pipe (16 per clock per SM, shared by ex2 and
// float<->int conversions): round by the 1.5 * 2^23 magic add, a cubic for 2^f on
// [-0.5, 0.5] (7.5e-5 relative error; bf16 P keeps 3.9e-3), the exponent by integer add.
// Used for a share of head dim 64's exponentials, where the GEMMs are too short to hide them
__device__ __forceinline__ float ex2_fma(float x) {
  const float xc = fmaxf(x, -126.f);
  const float t = __fadd_rn(xc, 12582912.f);
  const float f = __fsub_rn(xc, __fsub_rn(t, 12582912.f));
  const int i = __float_as_int(t) - 0x4B400000;
  const float p = fmaf(fmaf(fmaf(0.0551702986f, f, 0.242608022f), f, 0.693260929f), f, 0.999928273f);
  const float y = __int_as_float(__float_as_int(p) + (i << 23));
  return x < -126.f ? 0.f : y;   // masked (-inf) keys give exactly 0, as ex2 does
}

// the epilogue's 1 / sum and log2(sum), sum >= 1 (a row's largest term is 1): by the MUFU unit
// (HOP_TILE_ARITH, as FA3) or IEEE (a division's slow path, log2f's polynomial)
__device__ __forceinline__ float inv_of(float sum) { return HOP_TILE_ARITH ? __fdividef(1.f, sum) : 1.f / sum; }
__device__ __forceinline__ float log2_of(float sum) { return HOP_TILE_ARITH ? __log2f(sum) : log2f(sum); }

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// n / d for 0 <= n < 2^31 by a multiply-high (Granlund and Montgomery's round-up method): with
// l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1, q = (umulhi(n, m) + n) >> l; for
// n < 2^31 the sum fits 32 bits (HOP_TILE_ARITH)
struct FDiv {
  uint32_t d, m, l;
};
inline FDiv make_fdiv(uint32_t d) {
  uint32_t l = 0;
  while ((1ull << l) < d) ++l;
  return {d, (uint32_t)(((1ull << 32) * ((1ull << l) - d)) / d + 1), l};
}
__device__ __forceinline__ int fdiv(int n, const FDiv& f) {
  return (int)((__umulhi((uint32_t)n, f.m) + (uint32_t)n) >> f.l);
}

// ---- the kernel -----------------------------------------------------------------------------
#ifndef HOP_ZERO_ROWS
#define HOP_ZERO_ROWS 1
#endif
struct Args {
  float* lse;
  bf16* o;
  int* counter;       // persistent causal: the next work tile (zeroed before each launch)
  int seqlen_q, seqlen_k, heads_q, group, q_tiles, causal;
  int total, sect;    // work tiles (q_tiles * heads * batch); heads per causal section
  int pp_cont;        // persistent ping-pong runs on across work tiles (HOP_PP_CONT)
  float scale_log2;   // softmax_scale * log2(e)
  // HOP_TILE_ARITH: heads x batch, and the divisors of decode (a section's tiles, a section's
  // heads and the last section's, query tiles, heads) and of the K/V head (group)
  int hb_total;
  FDiv f_per, f_sect, f_last, f_qt, f_heads, f_group;
  // HOP_PACK_GQA (the kernels instantiated with PACK): a work tile's rows are (query, head)
  // pairs of one K/V head, query-major (packed row r: query r >> pack_shift, head w.head +
  // (r & pack_mask)); heads_t: the work tiles' heads (heads_kv when packed). Last, so the
  // unpacked kernels read every other field where v101's do
  int pack_shift, pack_mask, heads_t;
  // HOP_ZERO_ROWS (causal, seqlen_q > seqlen_k): the first zero_q queries of every (batch, head)
  // see no key. No work tile covers them (the work tiles start at query tile q_first): the
  // producer's idle warps write their O (zeros) and LSE (-inf)
  int q_first, zero_q, batch;
};

// one work tile: a query tile of one head; its key range and how much of it needs no mask
struct Work {
  int head, batch, m0, n_tiles, n_plain;
};
template <int BM, int BN, bool PACK = false, bool ZR = false>
__device__ __forceinline__ Work decode(int idx, const Args& a) {
  const int sh = PACK ? a.pack_shift : 0, heads_t = PACK ? a.heads_t : a.heads_q;   // HOP_PACK_GQA
  int q_tile, hb;
  if constexpr (HOP_TILE_ARITH) {
    Work w;
    if (a.causal) {   // as below, by multiply-high divisions
      const int sec = fdiv(idx, a.f_per), within = idx - sec * a.sect * a.q_tiles;
      const bool last = (sec + 1) * a.sect > a.hb_total;   // the last section may be smaller
      const int n = last ? a.hb_total - sec * a.sect : a.sect;
      const int r = fdiv(within, last ? a.f_last : a.f_sect);
      hb = sec * a.sect + (within - r * n);
      q_tile = a.q_tiles - 1 - r;
    } else {
      hb = fdiv(idx, a.f_qt);
      q_tile = idx - hb * a.q_tiles;
    }
    w.batch = fdiv(hb, a.f_heads);
    w.head = (hb - w.batch * heads_t) << sh;
    w.m0 = (ZR ? q_tile + a.q_first : q_tile) * BM;
    const int diag = a.seqlen_k - a.seqlen_q;
    int n_end = a.seqlen_k;
    if (a.causal) n_end = min(n_end, ((w.m0 + BM - 1) >> sh) + 1 + diag);
    w.n_tiles = n_end > 0 ? (n_end + BN - 1) / BN : 0;
    w.n_plain = a.seqlen_k / BN;
    if (a.causal) w.n_plain = min(w.n_plain, max(0, ((w.m0 >> sh) + diag + 1) / BN));
    return w;
  }
  if (a.causal) {   // heavy first within a section of heads (sect = 1: one head at a time)
    const int per = a.sect * a.q_tiles, sec = idx / per, within = idx - sec * per;
    const int hb_total = a.total / a.q_tiles, n = min(a.sect, hb_total - sec * a.sect);
    const int r = within / n;
    hb = sec * a.sect + (within - r * n);
    q_tile = a.q_tiles - 1 - r;
  } else {          // the query tiles of one head side by side (they share its K/V in L2)
    q_tile = idx % a.q_tiles;
    hb = idx / a.q_tiles;
  }
  Work w;
  w.head = (hb % heads_t) << sh;
  w.batch = hb / heads_t;
  w.m0 = (ZR ? q_tile + a.q_first : q_tile) * BM;
  const int diag = a.seqlen_k - a.seqlen_q;   // query i sees keys <= i + diag
  int n_end = a.seqlen_k;
  if (a.causal) n_end = min(n_end, ((w.m0 + BM - 1) >> sh) + 1 + diag);
  w.n_tiles = n_end > 0 ? (n_end + BN - 1) / BN : 0;
  // tiles before this one need no mask: no key beyond seqlen_k, none above the diagonal
  w.n_plain = a.seqlen_k / BN;
  if (a.causal) w.n_plain = min(w.n_plain, max(0, ((w.m0 >> sh) + diag + 1) / BN));
  return w;
}

// HOP_ZERO_ROWS: the O rows (zeros) and LSE (-inf) of the queries that see no key, as bulk
// copies from a shared buffer (zeros in its first half, -inf in its second): plain stores from
// a few threads left the fill at ~1.5 TB/s, 130 ns a store a thread (s22c1). The units (a
// batch's O in half-buffer chunks, then one LSE row each) go round the CTAs and a warp's lanes:
// one issuing thread a CTA ran ~85 ns a bulk copy (d256's 512 B halves: 0.26x FA3, s23c1).
template <int HD>
__device__ __forceinline__ void zero_rows(const Args& a, uint32_t zbuf, int zbytes, int lane) {
  const uint32_t half = zbytes / 2;
  float* z = reinterpret_cast<float*>(__cvta_shared_to_generic(zbuf));   // (a generic pointer to it)
  for (int i = lane; i < zbytes / 4; i += 32) z[i] = i < zbytes / 8 ? 0.f : -INFINITY;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncwarp();
  const long o_bytes = (long)a.zero_q * a.heads_q * HD * 2, batch_bytes = (long)a.seqlen_q * a.heads_q * HD * 2;
  const int per_batch = (int)((o_bytes + half - 1) / half), units = a.batch * per_batch + a.batch * a.heads_q;
  for (int u = lane * gridDim.x + blockIdx.x; u < units; u += 32 * gridDim.x) {
    if (u < a.batch * per_batch) {   // O: a chunk of one batch's first rows
      const int b = u / per_batch, c = u - b * per_batch;
      const long off = (long)c * half;
      bulk_store(reinterpret_cast<char*>(a.o) + b * batch_bytes + off, zbuf, (uint32_t)min((long)half, o_bytes - off));
    } else {                         // LSE: one (batch, head) row's first zero_q floats
      float* row = a.lse + (long)(u - a.batch * per_batch) * a.seqlen_q;
      const int head = min(a.zero_q, (int)(((16 - (reinterpret_cast<uintptr_t>(row) & 15)) & 15) / 4));
      for (int i = 0; i < head; ++i) row[i] = -INFINITY;
      const int mid = (a.zero_q - head) & ~3;
      for (int i = 0; i < mid; i += half / 4)
        bulk_store(row + head + i, zbuf + half, (uint32_t)min(half / 4, (uint32_t)(mid - i)) * 4u);
      for (int i = head + mid; i < a.zero_q; ++i) row[i] = -INFINITY;
    }
  }
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");   // the buffer outlives its reads
}

template <int HD, int BN_WANTED, bool PERSIST, bool PACK = false, bool ZR = false>
__global__ void __launch_bounds__(Layout<HD, BN_WANTED>::THREADS, 1)
attn_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
            const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o, const Args args) {
  using L = Layout<HD, BN_WANTED>;
  const int pack_shift = PACK ? args.pack_shift : 0, pack_mask = PACK ? args.pack_mask : 0;   // HOP_PACK_GQA
  constexpr int BN = L::BN, STAGES = L::STAGES, NC = L::NC, BM = L::BM, QBUF = PERSIST ? L::QBUF : 1;
  constexpr int S_REGS = BN / 2, O_REGS = HD / 2;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  // Q buffer b's full and empty barriers (b < QBUF)
  auto bar_q = [&](int b) { return base + L::BAR_OFF + (b ? 8u * (2 + 4 * STAGES) : 0u); };
  auto bar_k = [&](int s) { return base + L::BAR_OFF + 8u * (1 + s); };
  auto bar_v = [&](int s) { return base + L::BAR_OFF + 8u * (1 + STAGES + s); };
  // K and V of a stage are released separately: K as soon as S = Q K^T is done, so the
  // producer refills it a whole iteration before V (which P V still reads) is free
  auto bar_k_empty = [&](int s) { return base + L::BAR_OFF + 8u * (1 + 2 * STAGES + s); };
  auto bar_v_empty = [&](int s) { return base + L::BAR_OFF + 8u * (1 + 3 * STAGES + s); };
  auto bar_q_empty = [&](int b) { return base + L::BAR_OFF + 8u * (1 + 4 * STAGES + (b ? 2 : 0)); };   // persistent
  // HOP_PANEL_SPLIT: the second half of Q buffer b's panels, and of a work tile's first K in
  // stage s (one phase per such K: the consumers count them, bit s of khi_par)
  auto bar_q_hi = [&](int b) { return base + L::BAR_OFF + 8u * (4 + 4 * STAGES + b); };
  auto bar_k_hi = [&](int s) { return base + L::BAR_OFF + 8u * (6 + 4 * STAGES + s); };
  constexpr int HALF = L::PANELS / 2;   // panels in a half
  volatile int* slot = reinterpret_cast<volatile int*>(smem_raw + (base - smem_u32(smem_raw)) + L::SLOT_OFF);

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  if (tid == 0) {
    for (int b = 0; b < QBUF; ++b) {
      mbar_init(bar_q(b), 1);
      mbar_init(bar_q_empty(b), 4 * NC);
      if (L::SPLIT) mbar_init(bar_q_hi(b), 1);
    }
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(bar_k(s), 1);
      mbar_init(bar_v(s), 1);
      mbar_init(bar_k_empty(s), 4 * NC);   // lane 0 of each consumer warp
      mbar_init(bar_v_empty(s), 4 * NC);
      if (L::SPLIT) mbar_init(bar_k_hi(s), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // 24 exactly: the CTA starts at 168 a thread, and two consumers at 240 take all that 24
    // frees (HOP_K_AHEAD=2's decode of the next tile spills 18 bytes here; 32 would leave the
    // consumers' setmaxnreg.inc waiting forever)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (ZR && tid >= 32) {   // warp 1: the rows no key reaches, alongside the loads
      if (tid < 64) zero_rows<HD>(args, base + L::Z_OFF, L::Z_BYTES, tid - 32);
      return;
    }
    if (tid == 0) {
      auto prod_wait = [](uint32_t bar, uint32_t parity) {
        if constexpr (HOP_PROD_SLEEP) mbar_wait_sleep(bar, parity);
        else mbar_wait(bar, parity);
      };
      const uint64_t keep = HOP_L2_HINT ? policy_evict_last() : 0, once = HOP_L2_HINT ? policy_evict_first() : 0;
      int idx = blockIdx.x, g = 0;   // g: K/V tiles loaded so far (the ring runs on across work tiles)
      constexpr int K_AHEAD = HD == 64 ? HOP_K_AHEAD_64 : HOP_K_AHEAD;
      bool k0_loaded = false;   // K_AHEAD == 2: this work tile's first K went out with the last tile
      for (int k = 0;; ++k) {
        const int qb = k % QBUF, qn = k / QBUF;   // this work tile's Q buffer, and its use of it
        if (idx >= args.total) {   // no more work: wake the consumers with no tile
          if (PERSIST) {
            if (k >= QBUF) mbar_wait(bar_q_empty(qb), (qn - 1) & 1);
            slot[qb] = -1;
            mbar_arrive(bar_q(qb));
          }
          break;
        }
        // ask for the next tile now: the atomic's latency hides under this tile's loads
        const int next = !PERSIST ? args.total : args.causal ? atomicAdd(args.counter, 1) + (int)gridDim.x
                                                                 : idx + (int)gridDim.x;
        const Work w = decode<BM, BN, PACK, ZR>(idx, args);
        const int head_kv = HOP_TILE_ARITH ? fdiv(w.head, args.f_group) : w.head / args.group;
        // position t of the ring loads key tile kt: see HOP_REVERSE
        auto key_tile = [&](int t) { return HOP_REVERSE ? w.n_tiles - 1 - t : t; };
        // position t of work tile wk's K, at position pos of the ring
        auto load_k_of = [&](const Work& wk, int pos, int t) {
          const int s = pos % STAGES;
          if (pos >= STAGES) prod_wait(bar_k_empty(s), ((pos / STAGES) - 1) & 1);
          const bool split = L::SPLIT && t == 0;   // a work tile's first K (HOP_PANEL_SPLIT)
          if (HOP_STUB == 3 && pos >= STAGES) {
            mbar_arrive(bar_k(s));
            if (split) mbar_arrive(bar_k_hi(s));
            return;
          }
          mbar_expect_tx(bar_k(s), split ? HALF * L::KV_PANEL : L::KV_BYTES);
          if (split) mbar_expect_tx(bar_k_hi(s), HALF * L::KV_PANEL);
          const int kt = HOP_REVERSE ? wk.n_tiles - 1 - t : t;
          for (int p = 0; p < L::PANELS; ++p)
            tma_load(base + L::K_OFF + s * L::KV_BYTES + p * L::KV_PANEL, &tm_k, L::PW * p, HOP_TILE_ARITH ? fdiv(wk.head, args.f_group) : wk.head / args.group, kt * BN, wk.batch,
                     split && p >= HALF ? bar_k_hi(s) : bar_k(s), keep);
        };
        auto load_k = [&](int t) { load_k_of(w, g + t, t); };
        auto load_v = [&](int t) {
          const int s = (g + t) % STAGES;
          if (g + t >= STAGES) prod_wait(bar_v_empty(s), (((g + t) / STAGES) - 1) & 1);
          if (HOP_STUB == 3 && g + t >= STAGES) return mbar_arrive(bar_v(s));
          mbar_expect_tx(bar_v(s), L::KV_BYTES);
          for (int p = 0; p < L::PANELS; ++p)
            tma_load(base + L::V_OFF + s * L::KV_BYTES + p * L::KV_PANEL, &tm_v, L::PW * p, head_kv, key_tile(t) * BN, w.batch, bar_v(s), keep);
        };
        // the first K before Q: its stage frees while the consumers still read the last Q
        if (w.n_tiles > 0 && !k0_loaded) load_k(0);
        k0_loaded = false;
        if (k >= QBUF) mbar_wait(bar_q_empty(qb), (qn - 1) & 1);
        slot[qb] = idx;
        if (w.n_tiles == 0) {   // no key to see (causal, seqlen_q > seqlen_k): no Q to load, the rows are zeros
          mbar_arrive(bar_q(qb));
          if (L::SPLIT) mbar_arrive(bar_q_hi(qb));   // its phase kept in step with bar_q's
        } else {
          mbar_expect_tx(bar_q(qb), L::SPLIT ? HALF * L::Q_PANEL : L::Q_BYTES);
          if (L::SPLIT) mbar_expect_tx(bar_q_hi(qb), HALF * L::Q_PANEL);
          for (int p = 0; p < L::PANELS; ++p)
            tma_load(base + L::Q_OFF + qb * L::Q_BYTES + p * L::Q_PANEL, &tm_q, L::PW * p, w.head, w.m0 >> pack_shift, w.batch,
                     L::SPLIT && p >= HALF ? bar_q_hi(qb) : bar_q(qb), once);
        }
        if (K_AHEAD == 2) {
          for (int t = 0; t < w.n_tiles; ++t) {
            if (t + 1 < w.n_tiles) {
              load_k(t + 1);
            } else if (PERSIST && next < args.total) {   // the next work tile's K(0), at ring position g + n
              const Work wn = decode<BM, BN, PACK, ZR>(next, args);
              if (wn.n_tiles > 0) {
                load_k_of(wn, g + w.n_tiles, 0);
                k0_loaded = true;
              }
            }
            load_v(t);
          }
        } else if (K_AHEAD) {
          for (int t = 0; t < w.n_tiles; ++t) {
            if (t + 1 < w.n_tiles) load_k(t + 1);
            load_v(t);
          }
        } else {
          if (w.n_tiles > 0) load_v(0);
          for (int t = 1; t < w.n_tiles; ++t) {
            load_k(t);
            load_v(t);
          }
        }
        g += w.n_tiles;
        idx = next;
      }
    }
    return;
  }

  if constexpr (L::CONSUMER_REGS == 240) asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
  else asm volatile("setmaxnreg.inc.sync.aligned.u32 160;\n" ::: "memory");
  constexpr bool UNIFORM = HOP_UNIFORM == 1 || (HOP_UNIFORM == 2 && PERSIST);
  constexpr bool DESC_ONCE = HOP_DESC_ONCE == 1 || (HOP_DESC_ONCE == 2 && PERSIST);
  constexpr bool WAIT_V_LATE = HD == 64 ? HOP_WAIT_V_LATE_64 : HOP_WAIT_V_LATE;
  constexpr bool MASK_LIMITS = HD == 64 ? HOP_MASK_LIMITS_64 : HOP_MASK_LIMITS;
  constexpr bool EARLY = HD == 64 ? HOP_RESCALE_EARLY_64 : HD == 128 ? HOP_RESCALE_EARLY_128 : HOP_RESCALE_EARLY;
  const int c = UNIFORM ? __shfl_sync(0xffffffffu, warpgroup - 1, 0) : warpgroup - 1;
  const int wtid = tid % 128, warp = wtid / 32, lane = wtid % 32;
  uint32_t q_smem = base + L::Q_OFF + c * 64 * L::ROWB;   // this work tile's Q buffer, this consumer's rows
  const int diag = args.seqlen_k - args.seqlen_q;

  float o[O_REGS], s_acc[S_REGS];
  uint32_t p_frag[BN / 16][4];
  float row_max[2], row_sum[2];
  int row_base = 0, n_plain = 0, n_cur = 0, g = 0;   // g: K/V tiles consumed so far; n_cur: this work tile's
  int col_limit[2] = {0, 0};   // HOP_MASK_LIMITS: each row's first masked key column

  uint32_t q_lo = desc_lo(q_smem, 16);
  uint64_t q_desc[HD / 16];   // HOP_QDESC_HOIST
  auto make_q_desc = [&]() {
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      q_desc[kk] = desc_at(q_lo + (((kk / L::KPP) * L::Q_PANEL + (kk % L::KPP) * 32) >> 4), L::SBO, L::SWZ);
      asm volatile("" : "+l"(q_desc[kk]));   // opaque: kept, not rebuilt at each issue
    }
  };
  if (HOP_QDESC_HOIST) make_q_desc();
  // stage index and parity of the i-th K/V tile of the ring
  auto stage = [](int i) { return HOP_STAGE_U ? (int)((unsigned)i % STAGES) : i % STAGES; };
  auto parity = [](int i) { return HOP_STAGE_U ? ((unsigned)i / STAGES) & 1u : (uint32_t)((i / STAGES) & 1); };
  uint32_t k_lo = desc_lo(base + L::K_OFF, 16), v_lo = desc_lo(base + L::V_OFF, L::KV_PANEL);
  if (HOP_QDESC_HOIST >= 2) asm volatile("" : "+r"(k_lo), "+r"(v_lo));   // kept too (else rebuilt every tile)
  // HOP_PANEL_SPLIT, a work tile's first S: the second half's wgmmas wait for Q's and K's
  // second halves (barriers q_hi and k_hi, parities q_ph and k_ph); 0: whole tiles, waited for
  auto issue_qk = [&](int s, uint32_t q_hi, uint32_t q_ph, uint32_t k_hi, uint32_t k_ph) {
    const uint32_t k_smem = base + L::K_OFF + s * L::KV_BYTES;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      if (L::SPLIT && kk == HD / 32 && q_hi) {
        mbar_wait(q_hi, q_ph);
        mbar_wait(k_hi, k_ph);
      }
      const uint32_t qo = (kk / L::KPP) * L::Q_PANEL + (kk % L::KPP) * 32, ko = (kk / L::KPP) * L::KV_PANEL + (kk % L::KPP) * 32;
      if constexpr (DESC_ONCE)
        wgmma_ss<BN>(s_acc, HOP_QDESC_HOIST ? q_desc[kk] : desc_at(q_lo + (qo >> 4), L::SBO, L::SWZ), desc_at(k_lo + s * (L::KV_BYTES >> 4) + (ko >> 4), L::SBO, L::SWZ), kk > 0);
      else
        wgmma_ss<BN>(s_acc, smem_desc(q_smem + qo, 16, L::SBO, L::SWZ), smem_desc(k_smem + ko, 16, L::SBO, L::SWZ), kk > 0);
    }
    wgmma_commit();
  };
  auto issue_pv = [&](int s) {
    const uint32_t v_smem = base + L::V_OFF + s * L::KV_BYTES;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
      if constexpr (DESC_ONCE)
        wgmma_rs<HD>(o, p_frag[kk], desc_at(v_lo + s * (L::KV_BYTES >> 4) + kk * ((16 * L::ROWB) >> 4), L::SBO, L::SWZ));
      else
        wgmma_rs<HD>(o, p_frag[kk], smem_desc(v_smem + kk * 16 * L::ROWB, L::KV_PANEL, L::SBO, L::SWZ));
    wgmma_commit();
  };
  // mask (when needed), new row max, exponentials in place of S, running sum; returns the
  // rescale factor of the previous O for each of this thread's two rows
  // masked: an integral_constant, 0 for a plain tile, 1 for a masked one, 2 to decide by t
  auto softmax = [&](int t, float (&corr)[2], auto masked) {
    if constexpr (HOP_STUB == 2) {
      corr[0] = corr[1] = 1.f;
      return;
    }
    const int kt = HOP_REVERSE ? n_cur - 1 - t : t;   // the key tile at position t
    if (HOP_TILE_ARITH && (decltype(masked)::value == 1 || (decltype(masked)::value == 2 && kt >= n_plain))) {
      // each row's limit less this thread's first column: the test a element is then against a
      // constant (8 j + e)
      const int n0 = kt * BN + 2 * (lane % 4);
      int lim[2];
#pragma unroll
      for (int h = 0; h < 2; ++h)
        lim[h] = (MASK_LIMITS ? col_limit[h] : args.causal ? min(args.seqlen_k, ((row_base + 8 * h) >> pack_shift) + diag + 1) : args.seqlen_k) - n0;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (8 * j + e >= lim[h]) s_acc[4 * j + 2 * h + e] = -INFINITY;
    } else if (decltype(masked)::value == 1 || (decltype(masked)::value == 2 && kt >= n_plain)) {
      const int n0 = kt * BN + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = n0 + 8 * j + e;
            const int limit = MASK_LIMITS ? col_limit[h]
                                              : args.causal ? min(args.seqlen_k, ((row_base + 8 * h) >> pack_shift) + diag + 1) : args.seqlen_k;
            if (col >= limit) s_acc[4 * j + 2 * h + e] = -INFINITY;
          }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) mx = fmaxf(mx, fmaxf(s_acc[4 * j + 2 * h], s_acc[4 * j + 2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float new_max = fmaxf(row_max[h], mx * args.scale_log2);
      const float use = HOP_PLAIN_NOINF && decltype(masked)::value == 0 ? new_max : new_max == -INFINITY ? 0.f : new_max;
      corr[h] = ex2(row_max[h] - use);
      row_max[h] = new_max;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float x = fmaf(s_acc[4 * j + 2 * h + e], args.scale_log2, -use);
          float pv;
          if constexpr (HOP_STUB == 1) pv = x;
          else if constexpr (HD == 64 && HOP_EMU_EVERY > 0) pv = (j % (HOP_EMU_EVERY > 0 ? HOP_EMU_EVERY : 1) == 0) ? ex2_fma(x) : ex2(x);
          else pv = ex2(x);
          s_acc[4 * j + 2 * h + e] = pv;
          sum += pv;
        }
      row_sum[h] = row_sum[h] * corr[h] + sum;
    }
  };
  auto to_p = [&]() {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) p_frag[j / 2][(j % 2) * 2 + h] = pack_bf16(s_acc[4 * j + 2 * h], s_acc[4 * j + 2 * h + 1]);
  };
  auto rescale_o = [&](const float (&corr)[2]) {
#pragma unroll
    for (int j = 0; j < HD / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        o[4 * j + 2 * h] *= corr[h];
        o[4 * j + 2 * h + 1] *= corr[h];
      }
  };
  // ping-pong: the two consumers take turns at issuing their GEMMs, so one's softmax runs
  // while the other's GEMMs occupy the tensor cores; consumer 0 goes first on every tile
  int turns_left = 0;
  bool started = false;   // a tile with turns has run
  uint32_t khi_par = 0;   // HOP_PANEL_SPLIT: bit s, the parity of stage s's next first-K second half
  auto turn_begin = [&]() {
    if (HOP_PINGPONG) named_sync(8 + c, 256);
  };
  auto turn_end = [&]() {
    if (HOP_PINGPONG) {
      --turns_left;
      if (c != NC - 1 || turns_left > 0 || (PERSIST && args.pp_cont)) named_arrive(8 + (c + 1) % NC, 256);
    }
  };
  // HOP_TURN_FIXED: a turn with more to come (always hands on), and a work tile's last turn
  auto turn_pass = [&]() {
    if (HOP_PINGPONG) named_arrive(8 + (c + 1) % NC, 256);
  };
  auto turn_last = [&]() {
    if (HOP_PINGPONG && (c != NC - 1 || (PERSIST && args.pp_cont))) named_arrive(8 + (c + 1) % NC, 256);
  };
  auto release = [&](uint32_t bar) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };

  constexpr bool TURN_FIXED = HD == 256 ? HOP_TURN_FIXED_256 : HOP_TURN_FIXED;
  for (int k = 0;; ++k) {
    const int qb = k % QBUF;
    mbar_wait(bar_q(qb), (k / QBUF) & 1);
    const int idx = !PERSIST ? (int)blockIdx.x : UNIFORM ? __shfl_sync(0xffffffffu, slot[qb], 0) : slot[qb];
    if (idx < 0) {   // O's last store reads shared memory: it must finish before the CTA exits
      if (PERSIST && L::OBUF && wtid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      break;
    }
    if constexpr (QBUF > 1) {   // (kept out of the one-buffer kernels: it cost d256 a spill)
      q_smem = base + L::Q_OFF + qb * L::Q_BYTES + c * 64 * L::ROWB;
      q_lo = desc_lo(q_smem, 16);
      if (HOP_QDESC_HOIST) make_q_desc();
    }
    const Work w = decode<BM, BN, PACK, ZR>(idx, args);
    const int n_tiles = w.n_tiles;
    n_plain = w.n_plain;
    n_cur = n_tiles;
    row_base = w.m0 + c * 64 + warp * 16 + lane / 4;   // + 8h
    if (MASK_LIMITS)
      for (int h = 0; h < 2; ++h)
        col_limit[h] = args.causal ? min(args.seqlen_k, ((row_base + 8 * h) >> pack_shift) + diag + 1) : args.seqlen_k;
#pragma unroll
    for (int i = 0; i < O_REGS; ++i) o[i] = 0.f;
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
    turns_left = n_tiles + 1;   // issue points: QK(0), n-1 times QK(t)+PV(t-1), the last PV
    // consumer 0 goes first (continuous persistent ping-pong: once, on the CTA's first tile)
    if (HOP_PINGPONG && c == NC - 1 && n_tiles > 0 && !(PERSIST && args.pp_cont && started)) named_arrive(8, 256);
    started = started || n_tiles > 0;

    if (n_tiles > 0) {
      float corr[2];
      mbar_wait(bar_k(stage(g)), parity(g));
      turn_begin();
      if constexpr (L::SPLIT) {
        const int s0 = stage(g);
        issue_qk(s0, bar_q_hi(qb), (k / QBUF) & 1, bar_k_hi(s0), (khi_par >> s0) & 1u);
        khi_par ^= 1u << s0;
      } else {
        issue_qk(stage(g), 0u, 0u, 0u, 0u);
      }
      if (TURN_FIXED) turn_pass();
      else turn_end();
      wgmma_wait<0>();
      pin<S_REGS>(s_acc);
      release(bar_k_empty(stage(g)));
      if (PERSIST && n_tiles == 1) release(bar_q_empty(qb));
      softmax(0, corr, std::integral_constant<int, 2>{});
      to_p();
      int cur_s = stage(g);   // HOP_STAGE_INC: the ring position of the last tile issued
      uint32_t cur_p = parity(g);
      // one key tile: S(t) and P(t-1) V(t-1) issued, the softmax of S(t) under P V
      // last: an integral_constant: 1 where Q's last read is this step's, -1 where it is not
      // (HOP_QREL_PEEL), 0 to decide by t
      auto step = [&](int t, auto masked, auto last) {
        int s, sp;
        uint32_t ph, php;
        if constexpr (HD == 256 ? HOP_STAGE_INC_256 : HOP_STAGE_INC) {
          sp = cur_s, php = cur_p;
          if (++cur_s == STAGES) cur_s = 0, cur_p ^= 1u;
          s = cur_s, ph = cur_p;
        } else {
          s = stage(g + t), sp = stage(g + t - 1), ph = parity(g + t), php = parity(g + t - 1);
        }
        mbar_wait(bar_k(s), ph);
        if (!WAIT_V_LATE) mbar_wait(bar_v(sp), php);
        turn_begin();
        issue_qk(s, 0u, 0u, 0u, 0u);
        if (EARLY) rescale_o(corr);
        if (WAIT_V_LATE) mbar_wait(bar_v(sp), php);
        issue_pv(sp);
        if (TURN_FIXED) turn_pass();
        else turn_end();
        wgmma_wait<1>();
        pin<S_REGS>(s_acc);
        release(bar_k_empty(s));
        if constexpr (decltype(last)::value == 1) {
          if (PERSIST) release(bar_q_empty(qb));
        } else if constexpr (decltype(last)::value == 0) {
          if (HOP_SPLIT_MASK) {   // no branch here: see HOP_SPLIT_MASK
            if (PERSIST && t == n_tiles - 1 && lane == 0) mbar_arrive(bar_q_empty(qb));
          } else if (PERSIST && t == n_tiles - 1) {
            release(bar_q_empty(qb));   // the last read of Q is done
          }
        }
        softmax(t, corr, masked);
        if constexpr (HOP_PIN_SOFTMAX) {
          pin<S_REGS>(s_acc);
          pin<2>(row_sum);
          pin<2>(row_max);
          pin<2>(corr);
        }
        wgmma_wait<0>();
        pin<O_REGS>(o);
        pin_u<BN / 4>(&p_frag[0][0]);
        release(bar_v_empty(sp));
        if (!EARLY) rescale_o(corr);
        to_p();
      };
      using no = std::integral_constant<int, 0>;
      using never = std::integral_constant<int, -1>;
      using masked_tile = std::integral_constant<int, 1>;
      constexpr bool PEEL = HOP_QREL_PEEL == 1 || (HOP_QREL_PEEL == 3 && HD == 128 && BN == 176);
      if constexpr (PEEL) {   // positions 1 .. n-2 in the loops, n-1 (Q's last) after them
        const int n_loop = n_tiles - 1;
        if constexpr (HOP_SPLIT_MASK && HOP_REVERSE) {
          const int t_masked = min(max(1, n_tiles - n_plain), n_loop);
          for (int t = 1; t < t_masked; ++t) step(t, masked_tile{}, never{});
          for (int t = t_masked; t < n_loop; ++t) step(t, no{}, never{});
        } else {
          for (int t = 1; t < n_loop; ++t) step(t, std::integral_constant<int, 2>{}, never{});
        }
        if (n_tiles > 1) step(n_loop, std::integral_constant<int, 2>{}, std::integral_constant<int, 1>{});
      } else if constexpr (HOP_SPLIT_MASK && HOP_REVERSE) {   // masked positions first, then plain
        const int t_masked = max(1, n_tiles - n_plain);
        for (int t = 1; t < t_masked; ++t) step(t, masked_tile{}, no{});
        for (int t = t_masked; t < n_tiles; ++t) step(t, no{}, no{});
      } else if constexpr (HOP_SPLIT_MASK) {
        const int t_plain = max(1, min(n_plain, n_tiles));
        for (int t = 1; t < t_plain; ++t) step(t, no{}, no{});
        for (int t = t_plain; t < n_tiles; ++t) step(t, masked_tile{}, no{});
      } else {
        for (int t = 1; t < n_tiles; ++t) step(t, std::integral_constant<int, 2>{}, no{});
      }
      const int sl = stage(g + n_tiles - 1);
      mbar_wait(bar_v(sl), parity(g + n_tiles - 1));
      if (EARLY && n_tiles > 1) rescale_o(corr);
      turn_begin();
      issue_pv(sl);
      if (TURN_FIXED) turn_last();
      else turn_end();
      wgmma_wait<0>();
      pin<O_REGS>(o);
      pin_u<BN / 4>(&p_frag[0][0]);
      release(bar_v_empty(sl));
    } else if (PERSIST) {
      release(bar_q_empty(qb));
    }
    g += n_tiles;

    if constexpr (PERSIST && L::OBUF) {
      // epilogue through O's buffer: wait until the last tile's store has read it, write this
      // consumer's 64 rows in the swizzled panels TMA reads, and store them (rows past
      // seqlen_q clipped by the tensor map) while the next tile runs; LSE direct
      static_assert(L::PW == 64, "O's buffer: 128-byte rows");
      const uint32_t o_smem = base + L::O_OFF + c * 64 * 128;
      float inv[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = row_sum[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        inv[h] = sum > 0.f ? inv_of(sum) : 0.f;
        const int prow = row_base + 8 * h, row = prow >> pack_shift, head = w.head + (prow & pack_mask);
        if (lane % 4 == 0 && row < args.seqlen_q)
          args.lse[(static_cast<size_t>(w.batch) * args.heads_q + head) * args.seqlen_q + row] =
              sum > 0.f ? (row_max[h] + log2_of(sum)) * 0.69314718055994531f : -INFINITY;
      }
      if (wtid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      named_sync(1 + c, 128);
      const int m = lane / 8, i = lane % 8;   // this lane addresses row i of matrix m
      const uint32_t row_addr = o_smem + (warp * 16 + 8 * (m % 2) + i) * 128;
#pragma unroll
      for (int jp = 0; jp < HD / 16; ++jp) {
        const int j = 2 * jp, jj = j + m / 2;   // matrices (j, h0) (j, h1) (j+1, h0) (j+1, h1)
        stmatrix4(row_addr + (jj / 8) * L::Q_PANEL + (((jj % 8) ^ i) << 4),
                  pack_bf16(o[4 * j] * inv[0], o[4 * j + 1] * inv[0]), pack_bf16(o[4 * j + 2] * inv[1], o[4 * j + 3] * inv[1]),
                  pack_bf16(o[4 * j + 4] * inv[0], o[4 * j + 5] * inv[0]), pack_bf16(o[4 * j + 6] * inv[1], o[4 * j + 7] * inv[1]));
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      named_sync(1 + c, 128);
      if (wtid == 0) {
        for (int p = 0; p < L::PANELS; ++p) tma_store(&tm_o, o_smem + p * L::Q_PANEL, 64 * p, w.head, (w.m0 + 64 * c) >> pack_shift, w.batch);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
    } else if constexpr (PERSIST) {
      // epilogue straight from registers: Q's buffer already takes the next tile's Q
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = row_sum[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = sum > 0.f ? inv_of(sum) : 0.f;
        const int prow = row_base + 8 * h, row = prow >> pack_shift, head = w.head + (prow & pack_mask);
        if constexpr (HOP_EPI16) {
          // thread q of a quad holds words (8j + 2q) of j = 4g..4g+3; after the transpose it
          // holds the 8 columns of j = 4g + q (two butterfly stages, all lanes take part)
          const int q = lane % 4;
          bf16* out = args.o + ((static_cast<size_t>(w.batch) * args.seqlen_q + row) * args.heads_q + head) * HD;
#pragma unroll
          for (int gq = 0; gq < HD / 32; ++gq) {
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = pack_bf16(o[4 * (4 * gq + i) + 2 * h] * inv, o[4 * (4 * gq + i) + 2 * h + 1] * inv);
#pragma unroll
            for (int m = 1; m <= 2; m *= 2) {
              const bool hi = q & m;
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                if (i & m) continue;
                const uint32_t recv = __shfl_xor_sync(0xffffffffu, hi ? a[i] : a[i ^ m], m);
                if (hi) a[i] = recv;
                else a[i ^ m] = recv;
              }
            }
            if (row < args.seqlen_q) *reinterpret_cast<uint4*>(out + 8 * (4 * gq + q)) = make_uint4(a[0], a[1], a[2], a[3]);
          }
        }
        if (row < args.seqlen_q) {
          bf16* out = args.o + ((static_cast<size_t>(w.batch) * args.seqlen_q + row) * args.heads_q + head) * HD;
          if constexpr (!HOP_EPI16) {
#pragma unroll
            for (int j = 0; j < HD / 8; ++j)
              *reinterpret_cast<uint32_t*>(out + 8 * j + 2 * (lane % 4)) = pack_bf16(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
          }
          if (lane % 4 == 0)
            args.lse[(static_cast<size_t>(w.batch) * args.heads_q + head) * args.seqlen_q + row] =
                sum > 0.f ? (row_max[h] + log2_of(sum)) * 0.69314718055994531f : -INFINITY;
        }
      }
    } else {
      // epilogue: O through this warpgroup's rows of the Q tile (same swizzled panels) and a
      // TMA store, which clips rows beyond seqlen_q; LSE direct
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = row_sum[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = sum > 0.f ? inv_of(sum) : 0.f;
        const int r = warp * 16 + lane / 4 + 8 * h;   // row within this warpgroup's 64
        uint8_t* q_ptr = smem_raw + (q_smem - smem_u32(smem_raw));
#pragma unroll
        for (int j = 0; j < HD / 8; ++j) {
          const int col = 8 * j + 2 * (lane % 4);
          const int panel = col / L::PW, chunk = (col % L::PW) / 8;
          // the 16-byte chunk's swizzle: XOR by address bits 7-9 (128B) or 7-8 (64B)
          const int swz = L::PW == 64 ? r % 8 : (r / 2) % 4;
          const int off = panel * L::Q_PANEL + r * L::ROWB + ((chunk ^ swz) * 16) + (col % 8) * 2;
          *reinterpret_cast<uint32_t*>(q_ptr + off) = pack_bf16(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
        }
        const int prow = row_base + 8 * h, row = prow >> pack_shift, head = w.head + (prow & pack_mask);
        if (lane % 4 == 0 && row < args.seqlen_q)
          args.lse[(static_cast<size_t>(w.batch) * args.heads_q + head) * args.seqlen_q + row] =
              sum > 0.f ? (row_max[h] + log2_of(sum)) * 0.69314718055994531f : -INFINITY;
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      named_sync(1 + c, 128);
      if (wtid == 0) {
        for (int p = 0; p < L::PANELS; ++p) tma_store(&tm_o, q_smem + p * L::Q_PANEL, L::PW * p, w.head, (w.m0 + 64 * c) >> pack_shift, w.batch);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      }
      break;   // one work tile per CTA
    }
  }
}

// ---- host -----------------------------------------------------------------------------------
// a [batch, seq, heads, HD] bf16 tensor read as {pw, 1, rows, 1} boxes: pw = 64 columns in
// 128B swizzle, or 32 in 64B swizzle (a box's row must span its swizzle exactly: Layout::PW)
// (HOP_PACK_GQA: {pw, hbox, rows / hbox, 1}: hbox adjacent heads of rows / hbox tokens, laid out
// as rows rows query-major, the same shared memory image as one {pw, rows} box)
inline bool encode(CUtensorMap* map, const void* ptr, int hd, int batch, int seq, int heads, int rows, int pw = 64, int hbox = 1) {
  const cuuint64_t dims[4] = {(cuuint64_t)hd, (cuuint64_t)heads, (cuuint64_t)seq, (cuuint64_t)batch};
  const cuuint64_t strides[3] = {(cuuint64_t)hd * 2, (cuuint64_t)heads * hd * 2, (cuuint64_t)seq * heads * hd * 2};
  const cuuint32_t box[4] = {(cuuint32_t)pw, (cuuint32_t)hbox, (cuuint32_t)(rows / hbox), 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  return cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(ptr), dims, strides, box,
                                elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                pw == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// HOP_PACK_GQA: the query heads of a K/V head in one work tile (FlashAttention-3's rule: where
// the query tiles' padding wastes 10% more than the packed rows' would), else 1. Packed only
// where the group is 2, 4 or 8 (a power of two dividing a consumer's 64 rows)
#ifndef HOP_PACK_GQA
#define HOP_PACK_GQA 1
#endif
inline int pack_gqa(const AttnFwdParams& p, int bm) {
  const int group = p.heads_q / p.heads_kv;
  if (!HOP_PACK_GQA || (group != 2 && group != 4 && group != 8)) return 1;
  auto efficiency = [bm](long rows) { return (double)rows / (double)((rows + bm - 1) / bm * bm); };
  return efficiency(p.seqlen_q) < 0.9 * efficiency((long)p.seqlen_q * group) ? group : 1;
}

// launch_bn's answer when a tensor map cannot describe the tensors (a pointer or stride TMA
// cannot take): nothing was launched, so the caller may fall back to another kernel
constexpr int kEncodeFailed = 2;

template <int HD, int BN_WANTED, bool MAY_PERSIST = true>
int launch_bn(const AttnFwdParams& p, cudaStream_t stream) {
  using L = Layout<HD, BN_WANTED>;
  CUtensorMap tm_q, tm_k, tm_v, tm_o;
  const int pack = pack_gqa(p, L::BM);
  if (!encode(&tm_q, p.q, HD, p.batch, p.seqlen_q, p.heads_q, L::BM, L::PW, pack) ||
      !encode(&tm_k, p.k, HD, p.batch, p.seqlen_k, p.heads_kv, L::BN, L::PW) ||
      !encode(&tm_v, p.v, HD, p.batch, p.seqlen_k, p.heads_kv, L::BN, L::PW) ||
      !encode(&tm_o, p.o, HD, p.batch, p.seqlen_q, p.heads_q, 64, L::PW, pack))
    return kEncodeFailed;
  cudaError_t err;
  Args args;
  args.lse = p.lse;
  args.o = static_cast<bf16*>(p.o);
  args.counter = static_cast<int*>(p.workspace);
  args.seqlen_q = p.seqlen_q;
  args.seqlen_k = p.seqlen_k;
  args.heads_q = p.heads_q;
  args.group = p.heads_q / p.heads_kv;
  args.pack_shift = pack == 8 ? 3 : pack == 4 ? 2 : pack == 2 ? 1 : 0;
  args.pack_mask = pack - 1;
  args.heads_t = p.heads_q / pack;
  args.q_tiles = (int)(((long)p.seqlen_q * pack + L::BM - 1) / L::BM);
  // HOP_ZERO_ROWS: the query tiles whose rows all come before the first query that sees a key
  args.q_first = HOP_ZERO_ROWS && p.causal && p.seqlen_q > p.seqlen_k ? (int)((long)(p.seqlen_q - p.seqlen_k) * pack / L::BM) : 0;
  args.q_tiles -= args.q_first;
  args.zero_q = (args.q_first * L::BM) >> args.pack_shift;
  if ((long)args.zero_q * p.heads_q * (HD / 8) > 0x7fffffffL || (long)p.batch * p.heads_q > 0x7fffffffL) return -1;
  args.batch = p.batch;
  args.causal = p.causal;
  args.scale_log2 = p.softmax_scale * 1.4426950408889634f;
  const long total = (long)args.q_tiles * args.heads_t * p.batch;
  if (total > 0x7fffffffL) return -1;
  args.total = (int)total;
  // causal sections: as many heads as keep their K/V (shared by a group of query heads) within
  // HOP_SECT_MB of L2
  const long kv_per_head = (long)p.seqlen_k * HD * 2 * 2 / (args.group / pack);
  const long hb_total = (long)args.heads_t * p.batch;
  args.sect = HOP_SECT_MB > 0 ? (int)max(1L, min(hb_total, ((long)HOP_SECT_MB << 20) / max(1L, kv_per_head))) : 1;
  {   // sections of equal size: a small last one brings the tail of heavy tiles back
    const long n = (hb_total + args.sect - 1) / args.sect;
    args.sect = (int)((hb_total + n - 1) / n);
  }
  args.hb_total = (int)hb_total;
  {   // HOP_TILE_ARITH's divisors (all >= 1)
    const int n_sec = (int)((hb_total + args.sect - 1) / args.sect);
    args.f_per = make_fdiv((uint32_t)args.sect * (uint32_t)max(1, args.q_tiles));
    args.f_sect = make_fdiv((uint32_t)args.sect);
    args.f_last = make_fdiv((uint32_t)max(1L, hb_total - (long)(n_sec - 1) * args.sect));
    args.f_qt = make_fdiv((uint32_t)max(1, args.q_tiles));
    args.f_heads = make_fdiv((uint32_t)max(1, args.heads_t));
    args.f_group = make_fdiv((uint32_t)max(1, args.group));
  }
  args.pp_cont = HOP_PP_CONT && (HD != 128 || (p.seqlen_k + L::BN - 1) / L::BN <= HOP_PP_CONT_MAX_128 ||
                                 (HOP_PP_CONT_CAUSAL && p.causal));
  int grid = args.total;
  const bool persist = MAY_PERSIST && HOP_PERSIST &&
                       !(HD == 256 && p.causal && !HOP_PERSIST_256C && p.seqlen_k > HOP_PERSIST_256C_MAXK) &&
                       !(HD == 192 && p.causal && HOP_NP_192C_MINK > 0 && p.seqlen_k > HOP_NP_192C_MINK);
  if (persist) {
    int device = 0, sms = 0;
    if ((err = cudaGetDevice(&device)) != cudaSuccess) return (int)err;
    if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return (int)err;
    grid = min(grid, sms);
    if (args.zero_q > 0) grid = sms;   // HOP_ZERO_ROWS: every SM's idle producer warps write zeros
    if (p.causal) {   // the tile counter, zeroed on the stream before the launch
      if (!p.workspace || p.workspace_bytes < 4) return 3;
      if ((err = cudaMemsetAsync(p.workspace, 0, sizeof(int), stream)) != cudaSuccess) return (int)err;
    }
  }
  // each kernel is instantiated only where some launch takes it
  auto run = [&](auto kernel) {
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM);
    if (e == cudaSuccess) kernel<<<grid, L::THREADS, L::SMEM, stream>>>(tm_q, tm_k, tm_v, tm_o, args);
    return e;
  };
  // HOP_PACK_GQA and HOP_ZERO_ROWS: the packed kernels and those with rows no key reaches are
  // their own instantiations (the others keep v101's code)
  const bool zr = args.zero_q > 0;
  auto run_pack = [&](auto k, auto k_pack, auto k_zr, auto k_pack_zr) {
    return zr ? (pack > 1 ? run(k_pack_zr) : run(k_zr)) : (pack > 1 ? run(k_pack) : run(k));
  };
#define HOP_VARIANTS(P) attn_kernel<HD, BN_WANTED, P>, attn_kernel<HD, BN_WANTED, P, true>, \
                        attn_kernel<HD, BN_WANTED, P, false, true>, attn_kernel<HD, BN_WANTED, P, true, true>
  if constexpr (HOP_PERSIST && MAY_PERSIST && (HD != 256 || HOP_PERSIST_256C) && (HD != 192 || HOP_NP_192C_MINK == 0))
    err = run_pack(HOP_VARIANTS(true));
  else if constexpr (HOP_PERSIST && !MAY_PERSIST) err = run_pack(HOP_VARIANTS(false));
  else if constexpr (HOP_PERSIST) err = persist ? run_pack(HOP_VARIANTS(true)) : run_pack(HOP_VARIANTS(false));
  else err = run_pack(HOP_VARIANTS(false));
#undef HOP_VARIANTS
  if (err != cudaSuccess) return (int)err;
  err = cudaGetLastError();
  return err == cudaSuccess ? 0 : (int)err;
}

// d128: the key tile that minimises tiles * (keys + 38), the per-tile fixed
// cost in key-equivalents fitted on the H200 (s16k: 192 keys 7% faster than 128; s1k: 176
// best, 192 worst, as this predicts). Causal keeps 128 (wider tiles waste the diagonal).
// Causal: the same sum over the query tiles, each with its own key range.
inline int d128_key_tile(const AttnFwdParams& p, bool allow192) {
  const int q_tiles = (p.seqlen_q + BM2 - 1) / BM2, diag = p.seqlen_k - p.seqlen_q;
  int best = 128;
  long best_cost = -1;
  for (int bn : {128, 176, 192}) {
    if (!allow192 && bn == 192) continue;
    long tiles = 0;
    if (!p.causal) {
      tiles = (p.seqlen_k + bn - 1) / bn;
    } else {
      for (int q = 0; q < q_tiles; ++q) {
        const int keys = min(p.seqlen_k, q * BM2 + BM2 + diag);
        if (keys > 0) tiles += (keys + bn - 1) / bn;
      }
    }
    const long cost = tiles * (bn + 38);
    if (best_cost < 0 || cost < best_cost) best = bn, best_cost = cost;
  }
  return best;
}

template <int HD>
int launch(const AttnFwdParams& p, cudaStream_t stream) {
  if constexpr (HD == 128) {
    if constexpr (HOP_D128_NP_MIN > 0)
      if (!p.causal && p.seqlen_k >= HOP_D128_NP_MIN) switch (d128_key_tile(p, true)) {
        case 176: return launch_bn<HD, 176, false>(p, stream);
        case 192: return launch_bn<HD, 192, false>(p, stream);
        default: return launch_bn<HD, 128, false>(p, stream);
      }
    if (!p.causal && p.seqlen_k <= HOP_D128_Q2_FULL_MAXK) return launch_bn<HD, 128>(p, stream);
    if (!p.causal || HOP_CAUSAL_WIDE) switch (d128_key_tile(p, !HOP_D128_NO192)) {
        case 176: return launch_bn<HD, 176>(p, stream);
        case 192: if constexpr (!HOP_D128_NO192) return launch_bn<HD, 192>(p, stream); break;
        default: break;
      }
  }
  return launch_bn<HD, 128>(p, stream);
}

}  // namespace hop

// head dims 96 and 192: the Hopper path (HOP_HD_ALL), or the fa2 kernel where it is off or
// where TMA cannot describe the tensors (nothing launched then); every other failure is returned
template <int HD>
int hop_or_fa2(const AttnFwdParams& p, cudaStream_t stream) {
  if constexpr (HOP_HD_ALL) {
    const int r = hop::launch<HD>(p, stream);
    if (r != hop::kEncodeFailed) return r;
  }
  return fa2::launch<HD>(p, stream);
}

extern "C" int attn_fwd(const AttnFwdParams* p, cudaStream_t stream) {
  if (p == nullptr) return -1;
  if (!p->q || !p->k || !p->v || !p->o || !p->lse) return -1;
  if (p->batch < 1 || p->seqlen_q < 1 || p->seqlen_k < 1 || p->heads_q < 1 || p->heads_kv < 1) return -1;
  if (p->heads_q % p->heads_kv != 0) return -1;
  if (p->batch > 65535 || p->heads_q > 65535) return -1;  // grid.z / grid.y limits
  if (!(p->softmax_scale > 0.f) || p->softmax_scale == INFINITY) return -1;
  switch (p->head_dim) {
    case 64: return hop::launch<64>(*p, stream);
    case 96: return hop_or_fa2<96>(*p, stream);
    case 128:
#if HOP_TILE_LONG_128
      // 2: only causal with 16k keys or more, or 8k or more behind fewer queries (call s3c3: the
      // persistent kernel won at s4k/s8k without a mask and at s8k causal, GQA included)
      if (HOP_TILE_LONG_128 == 2 ? p->causal && (p->seqlen_k >= 16384 || (p->seqlen_k >= 8192 && p->seqlen_q < p->seqlen_k))
                                 : p->seqlen_k >= 8192 || (!p->causal && p->seqlen_k >= 4096))
        switch (hop_tile::d128_key_tile(*p)) {
          case 176: return hop_tile::launch_bn<128, 176>(*p, stream);
          case 192: return hop_tile::launch_bn<128, 192>(*p, stream);
          default: return hop_tile::launch_bn<128, 128>(*p, stream);
        }
#endif
      return hop::launch<128>(*p, stream);
    case 192: return hop_or_fa2<192>(*p, stream);
    case 256: return hop::launch<256>(*p, stream);
    default: return -1;
  }
}
