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

namespace {

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

}  // namespace

extern "C" int attn_fwd(const AttnFwdParams* p, cudaStream_t stream) {
  if (p == nullptr) return -1;
  if (!p->q || !p->k || !p->v || !p->o || !p->lse) return -1;
  if (p->batch < 1 || p->seqlen_q < 1 || p->seqlen_k < 1 || p->heads_q < 1 || p->heads_kv < 1) return -1;
  if (p->heads_q % p->heads_kv != 0) return -1;
  if (p->batch > 65535 || p->heads_q > 65535) return -1;  // grid.z / grid.y limits
  if (!(p->softmax_scale > 0.f) || p->softmax_scale == INFINITY) return -1;
  switch (p->head_dim) {
    case 64: return launch<64>(*p, stream);
    case 96: return launch<96>(*p, stream);
    case 128: return launch<128>(*p, stream);
    case 192: return launch<192>(*p, stream);
    case 256: return launch<256>(*p, stream);
    default: return -1;
  }
}
