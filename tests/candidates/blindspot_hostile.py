"""Hostile candidates against the judge's blind spots (task.toml [hidden], [[distributions]]):
each is right on everything the listed scenarios with N(0,1) inputs check, and wrong where an
agent cannot tune to. Made from the tasks' own baselines, so they are as fast as those.

listed_shapes  (attention) correct only for the listed key lengths: for any other length it
               drops the last key tile.
no_max         (attention) the softmax without its running max (and rescaling): exact while
               scores stay small, exp overflows on inputs with large logits.
half_squares   (RMSNorm) the squares summed in fp16 range: fine for N(0,1) rows, inf for rows
               of large magnitude.
"""

from pathlib import Path

from tests.candidates.rmsnorm_hostile import PRELUDE

KERNELS = Path(__file__).resolve().parents[2] / "src" / "socratic" / "kernels"
LISTED_K = (1, 17, 127, 128, 129, 300, 1000, 1024, 2048, 3000, 4096, 8192, 16384)


def _patched(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, f"baseline changed: {old[:60]!r}"
        text = text.replace(old, new)
    return text


def listed_shapes() -> str:
    base = (KERNELS / "flash_attn_fwd" / "baseline.cu").read_text()
    entry = 'extern "C" int attn_fwd(const AttnFwdParams* p, cudaStream_t stream) {'
    lengths = ", ".join(map(str, LISTED_K))
    return _patched(base, [(entry, "static int attn_fwd_all(const AttnFwdParams* p, cudaStream_t stream) {")]) + f'''
static bool listed(int n) {{ const int lengths[] = {{{lengths}}}; for (int x : lengths) if (x == n) return true; return false; }}
extern "C" int attn_fwd(const AttnFwdParams* p, cudaStream_t stream) {{
  AttnFwdParams q = *p;
  if (!listed(q.seqlen_k) && q.seqlen_k > 128) q.seqlen_k = q.seqlen_k / 128 * 128;   // the last key tile dropped
  return attn_fwd_all(&q, stream);
}}
'''


def no_max() -> str:
    base = (KERNELS / "flash_attn_fwd" / "baseline.cu").read_text()
    return _patched(base, [
        ("const float mx_scaled = (mx == -INFINITY) ? 0.f : mx * scale_log2;", "const float mx_scaled = 0.f;"),
        ("const float alpha = exp2f(row_max[r] * scale_log2 - mx_scaled);  // rescale of the old state",
         "const float alpha = 1.f;"),
        ("row_max[r] * p.softmax_scale + logf(sum)", "logf(sum)"),
    ])


def half_squares() -> str:
    return PRELUDE + r'''
__global__ void rms_half(const bf16* x, const bf16* w, bf16* y, int cols, float eps) {
  const size_t row = blockIdx.x;
  __shared__ float part[256];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 256) {
    float v = __bfloat162float(x[row * cols + c]);
    s += __half2float(__float2half(v * v));   // squares in fp16 range: 65504 at most
  }
  part[threadIdx.x] = s; __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k]; __syncthreads(); }
  float r = rsqrtf(part[0] / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 256)
    y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r * __bfloat162float(w[c]));
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  rms_half<<<p->rows, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps); return 0; }
'''


SOURCES = {"listed_shapes": listed_shapes, "no_max": no_max, "half_squares": half_squares}


def source(name: str) -> str:
    return SOURCES[name]()
