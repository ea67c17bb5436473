// Probe: can a kernel of one CUDA context reach memory allocated in another context of the
// same process (same device, UVA)? And what do cross-context copies and waits cost?
#include <cuda.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <chrono>

__global__ void poke(uint32_t* p, uint32_t v, uint32_t* out) { if (threadIdx.x == 0) { out[0] = p[0]; p[0] = v; } }
__global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) {} }

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); } } while (0)
static CUresult R(CUresult r, const char* what) { const char* s; cuGetErrorName(r, &s); printf("%-48s %s\n", what, s); return r; }

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);   // a hang must still show how far it got
  cuInit(0);
  CUdevice dev; cuDeviceGet(&dev, 0);
  CUcontext A, B;
  CK(cuDevicePrimaryCtxRetain(&A, dev));
  CK(cuCtxSetCurrent(A));
  // the runtime's kernels live in the primary context (A); B gets the same image by cuModuleLoad
  CUdeviceptr a, a_out; CK(cuMemAlloc(&a, 4096)); CK(cuMemAlloc(&a_out, 4096));
  CK(cuMemsetD32(a, 0x1234, 1024));
  CUcontext Bc; CUctxCreateParams prm = {}; 
  R(cuCtxCreate(&B, &prm, 0, dev), "cuCtxCreate B");
  CK(cuCtxSetCurrent(B));
  CUmodule mod; R(cuModuleLoad(&mod, "probe_kernels.cubin"), "cuModuleLoad in B");
  CUfunction f_poke, f_spin; CK(cuModuleGetFunction(&f_poke, mod, "_Z4pokePjjS_")); CK(cuModuleGetFunction(&f_spin, mod, "_Z4spinx"));
  CUdeviceptr b, b_out; CK(cuMemAlloc(&b, 4096)); CK(cuMemAlloc(&b_out, 4096)); CK(cuMemsetD32(b, 0x5678, 1024));
  CUstream sB; CK(cuStreamCreate(&sB, CU_STREAM_NON_BLOCKING));
  // sanity: B's kernel on B's memory
  { uint32_t v = 7; void* args[] = {&b, &v, &b_out}; CK(cuLaunchKernel(f_poke, 1,1,1, 32,1,1, 0, sB, args, nullptr));
    R(cuStreamSynchronize(sB), "B kernel on B memory: sync");
    uint32_t h = 0; CK(cuMemcpyDtoH(&h, b_out, 4)); printf("  read %x (want 5678)\n", h); }
  // cross-context copies, made by the driver (not by kernels)
  R(cuMemcpyPeer(b, B, a, A, 4096), "cuMemcpyPeer A->B");
  { uint32_t h = 0; CK(cuMemcpyDtoH(&h, b, 4)); printf("  B now %x (want 1234)\n", h); }
  R(cuMemcpyDtoD(b, a, 4096), "cuMemcpyDtoD A->B with B current (UVA)");
  R(cuMemcpyPeerAsync(a_out, A, b, B, 16, sB), "cuMemcpyPeerAsync B->A on B's stream");
  R(cuStreamSynchronize(sB), "  sync");
  // cross-context event wait
  CUevent eA; CK(cuCtxSetCurrent(A)); CK(cuEventCreate(&eA, CU_EVENT_DISABLE_TIMING));
  CUstream sA; CK(cuStreamCreate(&sA, CU_STREAM_NON_BLOCKING)); CK(cuEventRecord(eA, sA));
  CK(cuCtxSetCurrent(B)); R(cuStreamWaitEvent(sB, eA, 0), "cuStreamWaitEvent(B stream, A event)");
  // context switch cost: alternate short spins between contexts, host-synced
  CUmodule modA; CK(cuCtxSetCurrent(A)); CK(cuModuleLoad(&modA, "probe_kernels.cubin"));
  CUfunction fA; CK(cuModuleGetFunction(&fA, modA, "_Z4spinx"));
  long long cyc = 2000; void* sargs[] = {&cyc};
  for (int mode = 0; mode < 2; ++mode) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; ++i) {
      bool useB = mode == 1 && (i & 1);
      CK(cuCtxSetCurrent(useB ? B : A));
      CK(cuLaunchKernel(useB ? f_spin : fA, 1,1,1, 32,1,1, 0, useB ? sB : sA, sargs, nullptr));
      CK(cuStreamSynchronize(useB ? sB : sA));
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 2000;
    printf("%s: %.1f us per launch+sync\n", mode ? "alternating A/B" : "A only", us);
  }
  // the attack: B's kernel writes A's memory
  CK(cuCtxSetCurrent(B));
  { uint32_t v = 0xdead; void* args[] = {&a, &v, &b_out}; R(cuLaunchKernel(f_poke, 1,1,1, 32,1,1, 0, sB, args, nullptr), "B kernel poking A's address: launch");
    CUresult r = R(cuStreamSynchronize(sB), "  sync (an illegal address here = isolated)");
    (void)r; }
  CK(cuCtxSetCurrent(A));
  { uint32_t h = 0; R(cuMemcpyDtoH(&h, a, 4), "A reads its own memory after"); printf("  A's word %x (1234 = untouched, dead = reached)\n", h);
    R(cuCtxSynchronize(), "A's context still usable");
    CUdeviceptr t; R(cuMemAlloc(&t, 1<<20), "A allocates after B's fault"); }
  CK(cuCtxSetCurrent(B));
  R(cuCtxSynchronize(), "B's context after its fault");
  R(cuCtxDestroy(B), "destroy B");
  CK(cuCtxSetCurrent(A));
  { uint32_t v = 9; void* args[] = {&a, &v, &a_out}; R(cuLaunchKernel(fA, 1,1,1, 32,1,1, 0, sA, args, nullptr), "A launches after B destroyed");
    R(cuStreamSynchronize(sA), "  sync"); }
  // and the other way round: a fresh B reading A's memory (a read, not a write)
  CUcontext B2; R(cuCtxCreate(&B2, &prm, 0, dev), "cuCtxCreate B2");
  CUmodule m2; CK(cuModuleLoad(&m2, "probe_kernels.cubin")); CUfunction fp2; CK(cuModuleGetFunction(&fp2, m2, "_Z4pokePjjS_"));
  CUdeviceptr c, c_out; CK(cuMemAlloc(&c, 4096)); CK(cuMemAlloc(&c_out, 4096));
  { uint32_t v = 1; void* args[] = {&c, &v, &c_out};  // read c, but first a separate read of A's a via out pointer:
    CUdeviceptr src = a; void* args2[] = {&c, &v, &src};  // writes p[0]... use poke with out=A's address: a write into A
    R(cuLaunchKernel(fp2, 1,1,1, 32,1,1, 0, 0, args2, nullptr), "B2 kernel writing A via out pointer");
    R(cuCtxSynchronize(), "  sync"); (void)args; }
  CK(cuCtxSetCurrent(A));
  { uint32_t h = 0; R(cuMemcpyDtoH(&h, a, 4), "A reads after B2"); printf("  A's word %x\n", h); }
  printf("done\n");
  return 0;
}
