// fp32 reference for the rmsnorm task. Same RmsNormParams, but y points at an fp32
// buffer [rows, cols]. Computes only the listed rows (units), in plain fp32 math.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

struct RmsNormParams {
  const void* x;
  const void* w;
  void* y;   // fp32 here
  int rows, cols;
  float eps;
};

namespace {

constexpr int kThreads = 256;

__global__ void rmsnorm_ref_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                   float* __restrict__ y, const int* __restrict__ units, int cols, float eps) {
  const size_t row = units[blockIdx.x];
  const __nv_bfloat16* xr = x + row * cols;
  float* yr = y + row * cols;
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += kThreads) {
    float v = __bfloat162float(xr[c]);
    sum = fmaf(v, v, sum);
  }
  __shared__ float partial[kThreads];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float inv = 1.0f / sqrtf(partial[0] / (float)cols + eps);
  for (int c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = __bfloat162float(xr[c]) * inv * __bfloat162float(w[c]);
}

}  // namespace

extern "C" int rmsnorm_fwd_ref(const RmsNormParams* p, const int* units, int n_units, cudaStream_t stream) {
  if (p == nullptr || p->rows < 1 || p->cols < 1 || n_units < 1 || units == nullptr) return 1;
  rmsnorm_ref_kernel<<<n_units, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(p->x),
                                                      static_cast<const __nv_bfloat16*>(p->w),
                                                      static_cast<float*>(p->y), units, p->cols, p->eps);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
