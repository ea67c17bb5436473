// FlashAttention forward — the fp32 reference the evaluator trusts.
//
// Plain fp32 CUDA-core math: bf16 inputs are upcast on load, scores, softmax and P·V are all
// fp32 (no tensor cores, no bf16 intermediates, no fast-math intrinsics: expf / logf).
// The softmax is the exact max-subtracted one, computed online over key tiles (the same
// algebra as a two-pass softmax; rounding differences are at fp32 level).
//
// ABI: the task's AttnFwdParams, except that `o` points at an fp32 buffer
// [batch, seqlen_q, heads_q, head_dim] and `lse` at fp32 [batch, heads_q, seqlen_q].
//   extern "C" int attn_fwd_ref(const AttnFwdParams* p, const int* units, int n_units, cudaStream_t s);
// `units` is a device array of n_units unit indices in [0, batch*heads_q); unit u is
// (b = u / heads_q, h = u % heads_q). Only the listed units' O rows and LSE entries are
// written; everything else is left untouched. Out-of-range unit indices are ignored.
// Masking: query i may attend key j iff j < seqlen_k and (!causal or j <= i + seqlen_k - seqlen_q).
// A row with no allowed key gets O = 0 and LSE = -inf.
// Supported head_dim: any multiple of 32 from 32 to 256.
//
// Work decomposition: one CTA of 256 threads per (unit, 64 query rows). Q (64 x D), a K tile
// and a V tile (64 keys each) live in shared memory as fp32. Thread (ty, tx) = (tid/16, tid%16)
// owns query rows ty + 16*i (i < 4), score columns tx + 16*j (j < 4) and output columns
// tx + 16*j (j < D/16): the 16 threads sharing a row are one half-warp, so row max/sum
// reductions are shuffles and the running max / sum / O of a row live in registers.

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

constexpr int kThreads = 256;
constexpr int BM = 64;             // query rows per CTA
constexpr int BK = 64;             // keys per tile
constexpr int RPT = BM / 16;       // rows per thread (4)
constexpr int CPT = BK / 16;       // score columns per thread (4)
constexpr int P_STRIDE = BK + 16;  // P row stride (floats): rows ty and ty+1 land 16 banks apart

template <int D> struct RefSmem {
  static constexpr int QK_STRIDE = D + 4;  // float4-aligned; rows 4 banks apart (conflict-free float4 reads)
  static constexpr int V_STRIDE = D;
  static constexpr size_t bytes =
      sizeof(float) * ((size_t)BM * QK_STRIDE + (size_t)BK * QK_STRIDE + (size_t)BK * V_STRIDE + (size_t)BM * P_STRIDE);
};

// rows x D bf16 (global, row stride `stride` elements) -> fp32 shared; rows >= valid become 0.
template <int D>
__device__ __forceinline__ void load_rows_f32(float* dst, int dst_stride, const __nv_bfloat16* src, int64_t stride,
                                              int rows, int valid) {
  constexpr int PAIRS = D / 2;
  for (int idx = threadIdx.x; idx < rows * PAIRS; idx += kThreads) {
    const int r = idx / PAIRS, c = (idx % PAIRS) * 2;
    float2 f = make_float2(0.f, 0.f);
    if (r < valid) f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + r * stride + c));
    dst[r * dst_stride + c] = f.x;
    dst[r * dst_stride + c + 1] = f.y;
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads, 1) attn_fwd_ref_kernel(const AttnFwdParams p, const int* __restrict__ units,
                                                                int n_units) {
  constexpr int QK = RefSmem<D>::QK_STRIDE;
  constexpr int OPT = D / 16;  // output columns per thread

  const int unit = units[blockIdx.x];
  if (unit < 0 || unit >= p.batch * p.heads_q) return;  // ignore malformed unit indices
  const int b = unit / p.heads_q, h = unit % p.heads_q;
  const int hkv = h / (p.heads_q / p.heads_kv);
  const int m0 = blockIdx.y * BM;
  if (m0 >= p.seqlen_q) return;
  const int diag = p.seqlen_k - p.seqlen_q;

  extern __shared__ __align__(16) float smem[];
  float* sQ = smem;               // [BM][QK]
  float* sK = sQ + BM * QK;       // [BK][QK]
  float* sV = sK + BK * QK;       // [BK][D]
  float* sP = sV + BK * D;        // [BM][P_STRIDE]

  const int64_t q_stride = (int64_t)p.heads_q * D;
  const int64_t kv_stride = (int64_t)p.heads_kv * D;
  const __nv_bfloat16* gQ = static_cast<const __nv_bfloat16*>(p.q) + ((int64_t)b * p.seqlen_q + m0) * q_stride + (int64_t)h * D;
  const __nv_bfloat16* gK = static_cast<const __nv_bfloat16*>(p.k) + (int64_t)b * p.seqlen_k * kv_stride + (int64_t)hkv * D;
  const __nv_bfloat16* gV = static_cast<const __nv_bfloat16*>(p.v) + (int64_t)b * p.seqlen_k * kv_stride + (int64_t)hkv * D;
  float* gO = static_cast<float*>(p.o) + ((int64_t)b * p.seqlen_q + m0) * q_stride + (int64_t)h * D;
  float* gL = p.lse + ((int64_t)b * p.heads_q + h) * p.seqlen_q;

  const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
  const int rows_q = min(BM, p.seqlen_q - m0);

  load_rows_f32<D>(sQ, QK, gQ, q_stride, BM, rows_q);

  // Keys any row of this block may see: [0, n_end).
  int n_end = p.seqlen_k;
  if (p.causal) n_end = min(n_end, m0 + BM + diag);  // row m0+BM-1 sees keys <= m0+BM-1+diag
  const int n_tiles = n_end > 0 ? (n_end + BK - 1) / BK : 0;

  float o[RPT][OPT];
  float m[RPT], l[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < OPT; ++j) o[i][j] = 0.f;
  }

  for (int t = 0; t < n_tiles; ++t) {
    const int n0 = t * BK;
    const int rows_kv = min(BK, p.seqlen_k - n0);
    __syncthreads();  // previous tile's readers of sK / sV / sP are done (and sQ is loaded)
    load_rows_f32<D>(sK, QK, gK + n0 * kv_stride, kv_stride, BK, rows_kv);
    load_rows_f32<D>(sV, D, gV + n0 * kv_stride, kv_stride, BK, rows_kv);
    __syncthreads();

    // ---- scores s[i][j] = scale * q_row . k_col ----
    float s[RPT][CPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i)
#pragma unroll
      for (int j = 0; j < CPT; ++j) s[i][j] = 0.f;
#pragma unroll 2
    for (int d = 0; d < D; d += 4) {
      float4 qv[RPT], kv[CPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i) qv[i] = *reinterpret_cast<const float4*>(sQ + (ty + 16 * i) * QK + d);
#pragma unroll
      for (int j = 0; j < CPT; ++j) kv[j] = *reinterpret_cast<const float4*>(sK + (tx + 16 * j) * QK + d);
#pragma unroll
      for (int i = 0; i < RPT; ++i)
#pragma unroll
        for (int j = 0; j < CPT; ++j) {
          float acc = s[i][j];
          acc = fmaf(qv[i].x, kv[j].x, acc);
          acc = fmaf(qv[i].y, kv[j].y, acc);
          acc = fmaf(qv[i].z, kv[j].z, acc);
          acc = fmaf(qv[i].w, kv[j].w, acc);
          s[i][j] = acc;
        }
    }

    // ---- scale, mask, online softmax (row stats shared by the 16 threads of a half-warp) ----
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      const int row = m0 + ty + 16 * i;
      const int limit = p.causal ? min(p.seqlen_k, row + diag + 1) : p.seqlen_k;  // keys < limit allowed
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < CPT; ++j) {
        const int col = n0 + tx + 16 * j;
        s[i][j] = (col < limit) ? s[i][j] * p.softmax_scale : -INFINITY;
        mx = fmaxf(mx, s[i][j]);
      }
#pragma unroll
      for (int off = 1; off < 16; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[i], mx);
      const float m_use = (m_new == -INFINITY) ? 0.f : m_new;  // all masked so far: avoid (-inf) - (-inf)
      const float alpha = expf(m[i] - m_use);
      m[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < CPT; ++j) {
        const float pv = expf(s[i][j] - m_use);
        sum += pv;
        sP[(ty + 16 * i) * P_STRIDE + tx + 16 * j] = pv;
      }
      l[i] = l[i] * alpha + sum;  // per-thread partial sum; reduced over the half-warp at the end
#pragma unroll
      for (int j = 0; j < OPT; ++j) o[i][j] *= alpha;
    }
    __syncthreads();

    // ---- O += P V ----
#pragma unroll 2
    for (int k = 0; k < BK; k += 4) {
      float4 pv[RPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i) pv[i] = *reinterpret_cast<const float4*>(sP + (ty + 16 * i) * P_STRIDE + k);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
        for (int j = 0; j < OPT; ++j) {
          const float vv = sV[(k + kk) * D + tx + 16 * j];
#pragma unroll
          for (int i = 0; i < RPT; ++i) {
            const float pik = kk == 0 ? pv[i].x : kk == 1 ? pv[i].y : kk == 2 ? pv[i].z : pv[i].w;
            o[i][j] = fmaf(pik, vv, o[i][j]);
          }
        }
      }
    }
  }

  // ---- normalise and write this block's rows ----
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    float sum = l[i];
#pragma unroll
    for (int off = 1; off < 16; off <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const int r = ty + 16 * i;
    if (r < rows_q) {
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
      for (int j = 0; j < OPT; ++j) gO[r * q_stride + tx + 16 * j] = o[i][j] * inv;
      if (tx == 0) gL[m0 + r] = sum > 0.f ? m[i] + logf(sum) : -INFINITY;
    }
  }
}

template <int D>
int launch_ref(const AttnFwdParams& p, const int* units, int n_units, cudaStream_t stream) {
  const size_t smem = RefSmem<D>::bytes;
  cudaError_t err = cudaFuncSetAttribute(attn_fwd_ref_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (err != cudaSuccess) return (int)err;
  const dim3 grid(n_units, (p.seqlen_q + BM - 1) / BM);
  attn_fwd_ref_kernel<D><<<grid, kThreads, smem, stream>>>(p, units, n_units);
  err = cudaGetLastError();
  return err == cudaSuccess ? 0 : (int)err;
}

}  // namespace

extern "C" int attn_fwd_ref(const AttnFwdParams* p, const int* units, int n_units, cudaStream_t stream) {
  if (p == nullptr || n_units < 0) return -1;
  if (!p->q || !p->k || !p->v || !p->o || !p->lse) return -1;
  if (p->batch < 1 || p->seqlen_q < 1 || p->seqlen_k < 1 || p->heads_q < 1 || p->heads_kv < 1) return -1;
  if (p->heads_q % p->heads_kv != 0) return -1;
  if ((long long)p->batch * p->heads_q > 0x7fffffffLL) return -1;
  if ((p->seqlen_q + BM - 1) / BM > 65535) return -1;  // grid.y limit
  if (!(p->softmax_scale == p->softmax_scale) || p->softmax_scale == INFINITY || p->softmax_scale == -INFINITY) return -1;
  if (n_units > p->batch * p->heads_q) return -1;
  if (n_units == 0) return 0;
  if (units == nullptr) return -1;
  switch (p->head_dim) {
    case 32: return launch_ref<32>(*p, units, n_units, stream);
    case 64: return launch_ref<64>(*p, units, n_units, stream);
    case 96: return launch_ref<96>(*p, units, n_units, stream);
    case 128: return launch_ref<128>(*p, units, n_units, stream);
    case 160: return launch_ref<160>(*p, units, n_units, stream);
    case 192: return launch_ref<192>(*p, units, n_units, stream);
    case 224: return launch_ref<224>(*p, units, n_units, stream);
    case 256: return launch_ref<256>(*p, units, n_units, stream);
    default: return -1;
  }
}
