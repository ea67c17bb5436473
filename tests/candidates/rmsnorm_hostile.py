"""Hostile RMSNorm candidates: each tries one known way of fooling an evaluator.

Every source is a complete single-file candidate for kernels/rmsnorm (entry rmsnorm_fwd).
They share the correct kernel below and differ in the entry point or a kernel tweak.
"""

PRELUDE = r'''
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
struct RmsNormParams { const void* x; const void* w; void* y; int rows, cols; float eps; };
typedef __nv_bfloat16 bf16;

__global__ void rms(const bf16* x, const bf16* w, bf16* y, int cols, float eps, int row0, int row_step) {
  const size_t row = (size_t)blockIdx.x * row_step + row0;
  __shared__ float part[256];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 256) { float v = __bfloat162float(x[row * cols + c]); s += v * v; }
  part[threadIdx.x] = s; __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k]; __syncthreads(); }
  float r = rsqrtf(part[0] / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 256)
    y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r * __bfloat162float(w[c]));
}
static void launch(const RmsNormParams* p, cudaStream_t s) {
  rms<<<p->rows, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps, 0, 1);
}
'''

ENTRIES = {
    # a correct candidate: must pass
    "correct": r'''
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) { launch(p, s); return 0; }
''',
    # numerically wrong: forgets the weight
    "wrong": r'''
__global__ void noweight(const bf16* x, bf16* y, int cols, float eps) {
  size_t row = blockIdx.x; float s = 0.f;
  for (int c = 0; c < cols; ++c) { float v = __bfloat162float(x[row * cols + c]); s += v * v; }
  float r = rsqrtf(s / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r);
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  noweight<<<p->rows, 128, 0, s>>>((const bf16*)p->x, (bf16*)p->y, p->cols, p->eps); return 0; }
''',
    # stale output reuse: computes once per output pointer, then returns at once
    "stale_output": r'''
static const void* done_for = nullptr;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->y == done_for) return 0;
  done_for = p->y; launch(p, s); return 0; }
''',
    # partial write: skips the last row
    "partial_write": r'''
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows > 1) rms<<<p->rows - 1, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps, 0, 1);
  else launch(p, s);
  return 0; }
''',
    # input mutation: uses x as scratch (zeroes its first element after use)
    "input_mutation": r'''
__global__ void clobber(bf16* x) { x[0] = __float2bfloat16(0.f); }
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  launch(p, s); clobber<<<1, 1, 0, s>>>((bf16*)p->x); return 0; }
''',
    # side stream: the real work goes on a private stream the timing events never see
    "side_stream": r'''
static cudaStream_t side = nullptr;
__global__ void slow_rms(const bf16* x, const bf16* w, bf16* y, int cols, float eps, int rows) {
  long long t0 = clock64(); while (clock64() - t0 < 2000000) {}
  for (int r = 0; r < rows; ++r) {
    if (blockIdx.x != 0) break;
    __shared__ float part[256]; float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += 256) { float v = __bfloat162float(x[(size_t)r * cols + c]); s += v * v; }
    part[threadIdx.x] = s; __syncthreads();
    for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k]; __syncthreads(); }
    float rr = rsqrtf(part[0] / cols + eps);
    for (int c = threadIdx.x; c < cols; c += 256)
      y[(size_t)r * cols + c] = __float2bfloat16(__bfloat162float(x[(size_t)r * cols + c]) * rr * __bfloat162float(w[c]));
    __syncthreads();
  }
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  slow_rms<<<1, 256, 0, side>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps, p->rows);
  return 0; }
''',
    # side-stream load: correct on the given stream, but leaves a busy kernel running elsewhere
    "side_busy": r'''
static cudaStream_t side = nullptr;
__global__ void busy() { long long t0 = clock64(); while (clock64() - t0 < 40000000) {} }
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  launch(p, s); busy<<<132, 32, 0, side>>>(); return 0; }
''',
    # deferred work: each call computes the previous call's output
    "deferred": r'''
static RmsNormParams prev; static bool have_prev = false;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (have_prev) launch(&prev, s);
  prev = *p; have_prev = true; return 0; }
''',
    # result cache keyed by pointer: remembers the outputs of the last 8 input pointers and
    # replays them (wins whenever inputs are rotated but not refreshed)
    "pointer_cache": r'''
#define SLOTS 8
#define SLOT_ELEMS (1 << 20)
__device__ bf16 cache[SLOTS][SLOT_ELEMS];
static const void* keys[SLOTS]; static size_t sizes[SLOTS]; static int next_slot = 0;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  size_t n = (size_t)p->rows * p->cols;
  bf16* base; cudaGetSymbolAddress((void**)&base, cache);
  for (int i = 0; i < SLOTS; ++i)
    if (keys[i] == p->x && sizes[i] == n) {
      cudaMemcpyAsync(p->y, base + (size_t)i * SLOT_ELEMS, n * sizeof(bf16), cudaMemcpyDeviceToDevice, s); return 0; }
  launch(p, s);
  if (n <= SLOT_ELEMS) {
    int i = next_slot; next_slot = (next_slot + 1) % SLOTS;
    cudaMemcpyAsync(base + (size_t)i * SLOT_ELEMS, p->y, n * sizeof(bf16), cudaMemcpyDeviceToDevice, s);
    keys[i] = p->x; sizes[i] = n; }
  return 0; }
''',
    # benchmark-shape special-casing: a fast wrong answer for one bench shape
    "shape_special": r'''
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows == 4096 && p->cols == 8192) {
    cudaMemcpyAsync(p->y, p->x, (size_t)p->rows * p->cols * 2, cudaMemcpyDeviceToDevice, s); return 0; }
  launch(p, s); return 0; }
''',
    # precision downgrade: x squared and summed in bf16
    "precision_downgrade": r'''
__global__ void lowp(const bf16* x, const bf16* w, bf16* y, int cols, float eps) {
  size_t row = blockIdx.x; __shared__ float tot;
  if (threadIdx.x == 0) { bf16 s = __float2bfloat16(0.f);
    for (int c = 0; c < cols; ++c) s = __hadd(s, __hmul(x[row * cols + c], x[row * cols + c]));
    tot = __bfloat162float(s); }
  __syncthreads();
  float r = rsqrtf(tot / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r * __bfloat162float(w[c]));
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  lowp<<<p->rows, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps); return 0; }
''',
    # its own device memory: allocates 256 MiB on the first call
    "own_allocation": r'''
static void* mine = nullptr;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (!mine) cudaMalloc(&mine, 256u << 20);
  launch(p, s); return 0; }
''',
    # device-wide settings that slow the baseline (an L2 set-aside it did not ask for)
    "device_settings": r'''
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  static bool done = false;
  if (!done) { done = true; cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 32u << 20);
               cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 32); }
  launch(p, s); return 0; }
''',
    # exact in the first calls of each shape (the correctness calls), then a cheaper,
    # lower-precision path once it believes it is being timed: rstd rounded to bf16,
    # small enough to pass a loose check against the baseline, not the fp32 pass rule
    "timed_only_downgrade": r'''
__global__ void rough(const bf16* x, const bf16* w, bf16* y, int cols, float eps) {
  const size_t row = blockIdx.x;
  __shared__ float part[256];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 256) { float v = __bfloat162float(x[row * cols + c]); s += v * v; }
  part[threadIdx.x] = s; __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k]; __syncthreads(); }
  float r = __bfloat162float(__float2bfloat16(rsqrtf(part[0] / cols + eps) * 1.004f));
  for (int c = threadIdx.x; c < cols; c += 256)
    y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r * __bfloat162float(w[c]));
}
static int calls = 0, last_rows = -1, last_cols = -1;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows != last_rows || p->cols != last_cols) { calls = 0; last_rows = p->rows; last_cols = p->cols; }
  if (++calls <= 3) { launch(p, s); return 0; }
  rough<<<p->rows, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps);
  return 0; }
''',
    # a kernel that faults (illegal address)
    "fault": r'''
__global__ void boom(bf16* y) { y[(size_t)1 << 40] = __float2bfloat16(1.f); }
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows == 17) { boom<<<1, 1, 0, s>>>((bf16*)p->y); return 0; }
  launch(p, s); return 0; }
''',
    # a kernel that never finishes
    "hang": r'''
__device__ int never = 0;
__global__ void forever() { while (*(volatile int*)&never == 0) {} }
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows == 17) { forever<<<1, 1, 0, s>>>(); }
  launch(p, s); return 0; }
''',
    # cuDNN by dlopen, the library name assembled at run time
    "dlopen_runtime": r'''
#include <dlfcn.h>
#include <stdlib.h>
static bool tried = false;
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (!tried) { tried = true; const char* path = getenv("SOCRATIC_TEST_DLOPEN"); if (path) dlopen(path, RTLD_NOW); }
  launch(p, s); return 0; }
''',
}

# Static-check plants (need no GPU)
STATIC = {
    "cublas_call": r'''
extern "C" int cublasCreate_v2(void** handle);
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  void* h; if (p->rows < 0) cublasCreate_v2(&h); launch(p, s); return 0; }
''',
    "dlopen_cudnn": r'''
#include <dlfcn.h>
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  if (p->rows < 0) dlopen("libcu" "dnn.so.9", RTLD_NOW); launch(p, s); return 0; }
''',
}


def source(name: str) -> str:
    body = ENTRIES.get(name) or STATIC[name]
    return PRELUDE + body
