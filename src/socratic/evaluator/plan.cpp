// Launch plans: what one call of an entry point launched, captured in one process and
// replayed in another (evaluator/plan.py says why). Host code only, driver API only;
// built once per toolchain by evaluator/plan.py, never by a candidate.
//
// Capture side (the candidate's sandboxed launcher, and the judge for the baseline):
//   plan_init, plan_mirror, plan_capture -> bytes in the format below.
// Replay side (the judge): plan_load_image, plan_build (typed nodes the judge validated),
//   plan_chain (K copies in sequence, instantiated, each timed on its own), plan_launch.
//
// Format (little-endian): "SPLN" u32 version, u32 n_nodes, u32 n_edges, nodes, edges.
//   node: u32 kind; kind 0 kernel: u32 name_len, name, u32 grid[3], block[3], smem,
//         cluster[3], i32 cluster_policy, cooperative, priority, carveout, u64 access_window,
//         u32 n_params, then per parameter u32 size and its bytes;
//         kind 1 memset: u64 dst, pitch, u32 value, element_size, u64 width, height;
//         kind 2 memcpy: u64 src, dst, width_bytes, height, depth, u32 src_type, dst_type;
//         kind 3 empty; kind 100 + CUgraphNodeType: a node that cannot be replayed.
//   edge: u32 from, u32 to, u8 from_port, u8 to_port, u8 type, u8 pad.
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

namespace {

CUcontext g_ctx = nullptr;
CUstream g_stream = nullptr;
CUmemGenericAllocationHandle g_dummy = 0;   // one granule, mapped over every mirrored range
size_t g_granule = 0;
std::vector<std::pair<CUdeviceptr, size_t>> g_mirrors;

int fail(char* err, size_t errlen, const char* what, CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  snprintf(err, errlen, "%s: %s", what, name ? name : "unknown CUDA error");
  return r == CUDA_SUCCESS ? -1 : (int)r;
}

#define TRY(call, what)                                  \
  do {                                                   \
    CUresult r_ = (call);                                \
    if (r_ != CUDA_SUCCESS) return fail(err, errlen, what, r_); \
  } while (0)

struct Writer {
  std::string out;
  void u32(uint32_t v) { out.append((const char*)&v, 4); }
  void i32(int32_t v) { out.append((const char*)&v, 4); }
  void u64(uint64_t v) { out.append((const char*)&v, 8); }
  void u8(uint8_t v) { out.push_back((char)v); }
  void bytes(const void* p, size_t n) { out.append((const char*)p, n); }
};

int attr_i(CUgraphNode n, CUlaunchAttributeID id, CUlaunchAttributeValue* v) {
  memset(v, 0, sizeof(*v));
  return cuGraphKernelNodeGetAttribute(n, id, v) == CUDA_SUCCESS;
}

int write_kernel(Writer& w, CUgraphNode node, char* err, size_t errlen) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof(p));
  TRY(cuGraphKernelNodeGetParams(node, &p), "reading a captured kernel");
  CUfunction f = p.func;
  if (!f && p.kern) TRY(cuKernelGetFunction(&f, p.kern), "resolving a captured kernel");
  if (!f) { snprintf(err, errlen, "a captured kernel has no function"); return -1; }
  const char* name = nullptr;
  TRY(cuFuncGetName(&name, f), "naming a captured kernel");
  if (p.extra) { snprintf(err, errlen, "kernel %s was launched with 'extra' arguments", name); return -1; }
  w.u32(0);
  w.u32((uint32_t)strlen(name));
  w.bytes(name, strlen(name));
  w.u32(p.gridDimX); w.u32(p.gridDimY); w.u32(p.gridDimZ);
  w.u32(p.blockDimX); w.u32(p.blockDimY); w.u32(p.blockDimZ);
  w.u32(p.sharedMemBytes);
  CUlaunchAttributeValue v;
  unsigned cx = 0, cy = 0, cz = 0;
  if (attr_i(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v)) { cx = v.clusterDim.x; cy = v.clusterDim.y; cz = v.clusterDim.z; }
  w.u32(cx); w.u32(cy); w.u32(cz);
  w.i32(attr_i(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, &v) ? (int)v.clusterSchedulingPolicyPreference : 0);
  w.i32(attr_i(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v) ? v.cooperative : 0);
  w.i32(attr_i(node, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v) ? v.priority : 0);
  int carveout = -1;
  cuFuncGetAttribute(&carveout, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f);
  w.i32(carveout);
  w.u64(attr_i(node, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v) ? (uint64_t)v.accessPolicyWindow.num_bytes : 0);
  std::vector<std::pair<size_t, size_t>> params;
  for (size_t i = 0;; ++i) {
    size_t off = 0, size = 0;
    if (cuFuncGetParamInfo(f, i, &off, &size) != CUDA_SUCCESS) break;
    params.push_back({off, size});
  }
  if (!params.empty() && !p.kernelParams) { snprintf(err, errlen, "kernel %s has no captured arguments", name); return -1; }
  w.u32((uint32_t)params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    w.u32((uint32_t)params[i].second);
    w.bytes(p.kernelParams[i], params[i].second);
  }
  return 0;
}

int write_graph(Writer& w, CUgraph g, char* err, size_t errlen) {
  size_t n = 0, ne = 0;
  TRY(cuGraphGetNodes(g, nullptr, &n), "listing the captured work");
  std::vector<CUgraphNode> nodes(n);
  if (n) TRY(cuGraphGetNodes(g, nodes.data(), &n), "listing the captured work");
  TRY(cuGraphGetEdges(g, nullptr, nullptr, nullptr, &ne), "listing the captured order");
  std::vector<CUgraphNode> from(ne), to(ne);
  std::vector<CUgraphEdgeData> data(ne);
  if (ne) TRY(cuGraphGetEdges(g, from.data(), to.data(), data.data(), &ne), "listing the captured order");
  w.bytes("SPLN", 4);
  w.u32(1);
  w.u32((uint32_t)n);
  w.u32((uint32_t)ne);
  for (size_t i = 0; i < n; ++i) {
    CUgraphNodeType t;
    TRY(cuGraphNodeGetType(nodes[i], &t), "typing a captured node");
    if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
      int rc = write_kernel(w, nodes[i], err, errlen);
      if (rc) return rc;
    } else if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
      CUDA_MEMSET_NODE_PARAMS m;
      TRY(cuGraphMemsetNodeGetParams(nodes[i], &m), "reading a captured memset");
      w.u32(1); w.u64(m.dst); w.u64(m.pitch); w.u32(m.value); w.u32(m.elementSize); w.u64(m.width); w.u64(m.height);
    } else if (t == CU_GRAPH_NODE_TYPE_MEMCPY) {
      CUDA_MEMCPY3D c;
      TRY(cuGraphMemcpyNodeGetParams(nodes[i], &c), "reading a captured copy");
      uint64_t src = c.srcMemoryType == CU_MEMORYTYPE_HOST ? (uint64_t)(uintptr_t)c.srcHost : (uint64_t)c.srcDevice;
      uint64_t dst = c.dstMemoryType == CU_MEMORYTYPE_HOST ? (uint64_t)(uintptr_t)c.dstHost : (uint64_t)c.dstDevice;
      int plain = !c.srcXInBytes && !c.srcY && !c.srcZ && !c.dstXInBytes && !c.dstY && !c.dstZ && !c.srcArray && !c.dstArray;
      w.u32(2); w.u64(src); w.u64(dst); w.u64(c.WidthInBytes); w.u64(plain ? c.Height : 0); w.u64(plain ? c.Depth : 0);
      w.u32((uint32_t)c.srcMemoryType); w.u32((uint32_t)c.dstMemoryType);
    } else if (t == CU_GRAPH_NODE_TYPE_EMPTY) {
      w.u32(3);
    } else {
      w.u32(100 + (uint32_t)t);
    }
  }
  for (size_t e = 0; e < ne; ++e) {
    size_t a = 0, b = 0;
    while (a < n && nodes[a] != from[e]) ++a;
    while (b < n && nodes[b] != to[e]) ++b;
    w.u32((uint32_t)a); w.u32((uint32_t)b);
    w.u8(data[e].from_port); w.u8(data[e].to_port); w.u8(data[e].type); w.u8(0);
  }
  return 0;
}

void unmirror() {
  for (auto& m : g_mirrors) {
    for (size_t off = 0; off < m.second; off += g_granule) cuMemUnmap(m.first + off, g_granule);
    cuMemAddressFree(m.first, m.second);
  }
  g_mirrors.clear();
}

}  // namespace

extern "C" {

// The current context (the judge's, made current by cuda.core) or, in a fresh process,
// device `ordinal`'s primary context; and a non-blocking stream to capture on.
int plan_init(int ordinal, char* err, size_t errlen) {
  TRY(cuInit(0), "cuInit");
  TRY(cuCtxGetCurrent(&g_ctx), "cuCtxGetCurrent");
  if (!g_ctx) {
    CUdevice dev;
    TRY(cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    TRY(cuDevicePrimaryCtxRetain(&g_ctx, dev), "cuDevicePrimaryCtxRetain");
    TRY(cuCtxSetCurrent(g_ctx), "cuCtxSetCurrent");
  }
  TRY(cuStreamCreate(&g_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return 0;
}

// Map placeholder memory at the judge's buffer addresses (pairs of address, bytes) in
// this process, so that calls which check their pointers (cudaMemsetAsync into the
// workspace) can be captured. The placeholder is one granule mapped again and again: it
// holds none of the judge's data. Ranges that cannot be placed are skipped.
int plan_mirror(const uint64_t* ranges, int n, int* placed, char* err, size_t errlen) {
  *placed = 0;
  unmirror();
  if (!g_granule) {
    CUdevice dev;
    TRY(cuCtxGetDevice(&dev), "cuCtxGetDevice");
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    TRY(cuMemGetAllocationGranularity(&g_granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
    TRY(cuMemCreate(&g_dummy, g_granule, &prop, 0), "cuMemCreate");
  }
  CUdevice dev;
  TRY(cuCtxGetDevice(&dev), "cuCtxGetDevice");
  CUmemAccessDesc access;
  memset(&access, 0, sizeof(access));
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int i = 0; i < n; ++i) {
    CUdeviceptr lo = ranges[2 * i] / g_granule * g_granule;
    CUdeviceptr hi = (ranges[2 * i] + ranges[2 * i + 1] + g_granule - 1) / g_granule * g_granule;
    CUdeviceptr got = 0;
    if (cuMemAddressReserve(&got, hi - lo, g_granule, lo, 0) != CUDA_SUCCESS) continue;
    if (got != lo) { cuMemAddressFree(got, hi - lo); continue; }
    size_t mapped = 0;
    for (; mapped < hi - lo; mapped += g_granule)
      if (cuMemMap(lo + mapped, g_granule, 0, g_dummy, 0) != CUDA_SUCCESS) break;
    g_mirrors.push_back({lo, mapped});
    if (mapped == hi - lo && cuMemSetAccess(lo, hi - lo, &access, 1) == CUDA_SUCCESS) ++*placed;
  }
  return 0;
}

typedef int (*entry_fn)(const void*, CUstream);

// Call `entry(params, stream)` under stream capture (global mode; relaxed only to tell
// which rule a failed capture broke) and serialise what it
// launched. *entry_rc is the entry's return value; on a capture error the message names it.
int plan_capture(void* entry, const void* params, int relaxed, char** out, size_t* out_len, int* entry_rc,
                 char* err, size_t errlen) {
  *out = nullptr;
  *out_len = 0;
  TRY(cuCtxSetCurrent(g_ctx), "cuCtxSetCurrent");
  TRY(cuStreamBeginCapture(g_stream, relaxed ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_GLOBAL),
      "cuStreamBeginCapture");
  *entry_rc = ((entry_fn)entry)(params, g_stream);
  CUgraph g = nullptr;
  CUresult r = cuStreamEndCapture(g_stream, &g);
  if (r != CUDA_SUCCESS) {
    cuCtxSetCurrent(g_ctx);
    return fail(err, errlen, "stream capture", r);
  }
  Writer w;
  int rc = write_graph(w, g, err, errlen);
  cuGraphDestroy(g);
  if (rc) return rc;
  *out = (char*)malloc(w.out.size());
  memcpy(*out, w.out.data(), w.out.size());
  *out_len = w.out.size();
  return 0;
}

void plan_free(char* p) { free(p); }

// Free device memory (all processes), or 0 when it cannot be read.
unsigned long long plan_free_memory() {
  size_t free_b = 0, total = 0;
  return cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS ? free_b : 0;
}

// --- replay (the judge) ---------------------------------------------------------------

struct PlanKernel {
  const char* name;
  unsigned grid[3], block[3], smem, cluster[3];
  int cluster_policy, cooperative, priority, carveout;
  unsigned n_params;
  const unsigned* param_sizes;
  const void* const* param_data;
};

struct PlanNode {
  int kind;   // 0 kernel, 1 memset, 2 memcpy, 3 empty
  PlanKernel k;
  unsigned long long dst, pitch, width, height, src;
  unsigned value, element_size;
};

struct PlanEdge {
  unsigned from, to;
  unsigned char from_port, to_port, type;
};

int plan_load_image(const void* image, CUmodule* mod, char* err, size_t errlen) {
  TRY(cuModuleLoadData(mod, image), "loading the candidate's device code");
  return 0;
}

void plan_unload(CUmodule mod) { cuModuleUnload(mod); }

// One graph from validated nodes: each kernel looked up by name in `mods`, its argument
// sizes checked against the judge's own reading of the function.
int plan_build(const PlanNode* nodes, unsigned n, const PlanEdge* edges, unsigned ne,
               const CUmodule* mods, int nmods, CUgraph* out, char* err, size_t errlen) {
  *out = nullptr;
  // memsets and copies run in the context the graph is built (and launched) in: the
  // candidate's for its plans, not the judge's, so that none of its work runs in the judge's
  // context nor pays a switch into it inside its timed window
  CUcontext ctx = nullptr;
  if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) ctx = g_ctx;
  CUgraph g;
  TRY(cuGraphCreate(&g, 0), "cuGraphCreate");
  std::vector<CUgraphNode> made(n);
  for (unsigned i = 0; i < n; ++i) {
    const PlanNode& node = nodes[i];
    CUresult r = CUDA_SUCCESS;
    if (node.kind == 0) {
      const PlanKernel& k = node.k;
      CUfunction f = nullptr;
      for (int m = 0; m < nmods && !f; ++m)
        if (cuModuleGetFunction(&f, mods[m], k.name) != CUDA_SUCCESS) f = nullptr;
      if (!f) {
        cuGraphDestroy(g);
        snprintf(err, errlen, "launched kernel %.200s, which is not in the candidate's built device code", k.name);
        return -1;
      }
      unsigned count = 0;
      for (;; ++count) {
        size_t off, size;
        if (cuFuncGetParamInfo(f, count, &off, &size) != CUDA_SUCCESS) break;
        if (count < k.n_params && size != k.param_sizes[count]) {
          cuGraphDestroy(g);
          snprintf(err, errlen, "kernel %.200s: argument %u has %zu bytes, the plan gave %u", k.name, count, size,
                   k.param_sizes[count]);
          return -1;
        }
      }
      if (count != k.n_params) {
        cuGraphDestroy(g);
        snprintf(err, errlen, "kernel %.200s takes %u arguments, the plan gave %u", k.name, count, k.n_params);
        return -1;
      }
      cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)k.smem);
      if (k.carveout >= 0) cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, k.carveout);
      if ((unsigned long long)k.cluster[0] * k.cluster[1] * k.cluster[2] > 8)
        cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
      CUDA_KERNEL_NODE_PARAMS p;
      memset(&p, 0, sizeof(p));
      p.func = f;
      p.gridDimX = k.grid[0]; p.gridDimY = k.grid[1]; p.gridDimZ = k.grid[2];
      p.blockDimX = k.block[0]; p.blockDimY = k.block[1]; p.blockDimZ = k.block[2];
      p.sharedMemBytes = k.smem;
      p.kernelParams = (void**)k.param_data;
      r = cuGraphAddKernelNode(&made[i], g, nullptr, 0, &p);
      CUlaunchAttributeValue v;
      if (r == CUDA_SUCCESS && k.cluster[0]) {
        memset(&v, 0, sizeof(v));
        v.clusterDim.x = k.cluster[0]; v.clusterDim.y = k.cluster[1]; v.clusterDim.z = k.cluster[2];
        r = cuGraphKernelNodeSetAttribute(made[i], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v);
      }
      if (r == CUDA_SUCCESS && k.cluster_policy) {
        memset(&v, 0, sizeof(v));
        v.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)k.cluster_policy;
        r = cuGraphKernelNodeSetAttribute(made[i], CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, &v);
      }
      if (r == CUDA_SUCCESS && k.cooperative) {
        memset(&v, 0, sizeof(v));
        v.cooperative = k.cooperative;
        r = cuGraphKernelNodeSetAttribute(made[i], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v);
      }
      if (r == CUDA_SUCCESS && k.priority) {
        memset(&v, 0, sizeof(v));
        v.priority = k.priority;
        r = cuGraphKernelNodeSetAttribute(made[i], CU_LAUNCH_ATTRIBUTE_PRIORITY, &v);
      }
    } else if (node.kind == 1) {
      CUDA_MEMSET_NODE_PARAMS m;
      memset(&m, 0, sizeof(m));
      m.dst = node.dst; m.pitch = node.pitch; m.value = node.value; m.elementSize = node.element_size;
      m.width = node.width; m.height = node.height;
      r = cuGraphAddMemsetNode(&made[i], g, nullptr, 0, &m, ctx);
    } else if (node.kind == 2) {
      CUDA_MEMCPY3D c;
      memset(&c, 0, sizeof(c));
      c.srcMemoryType = CU_MEMORYTYPE_DEVICE; c.srcDevice = node.src;
      c.dstMemoryType = CU_MEMORYTYPE_DEVICE; c.dstDevice = node.dst;
      c.WidthInBytes = node.width; c.Height = 1; c.Depth = 1;
      r = cuGraphAddMemcpyNode(&made[i], g, nullptr, 0, &c, ctx);
    } else {
      r = cuGraphAddEmptyNode(&made[i], g, nullptr, 0);
    }
    if (r != CUDA_SUCCESS) {
      cuGraphDestroy(g);
      return fail(err, errlen, "rebuilding the captured work", r);
    }
  }
  for (unsigned e = 0; e < ne; ++e) {
    CUgraphEdgeData d;
    memset(&d, 0, sizeof(d));
    d.from_port = edges[e].from_port; d.to_port = edges[e].to_port; d.type = edges[e].type;
    CUresult r = cuGraphAddDependencies(g, &made[edges[e].from], &made[edges[e].to], &d, 1);
    if (r != CUDA_SUCCESS) {
      cuGraphDestroy(g);
      return fail(err, errlen, "rebuilding the captured order", r);
    }
  }
  *out = g;
  return 0;
}

void plan_destroy_graph(CUgraph g) { cuGraphDestroy(g); }

// `n` graphs as child graphs in sequence, instantiated and uploaded: one launch runs them
// back to back with no host work in between. With marks (n + 1 of them) a mark stands before
// the first and after each: the time of every copy on its own, so that no copy can pass its
// work to another unseen. A mark is an event record node (`events`, of the current context).
// With `flush_bytes` (and 2n
// marks: each copy's start and end) a memset of `flush` stands between the copies, outside
// their marks: every copy starts from a cold L2, as one call does.
int plan_chain(const CUgraph* graphs, unsigned n, const CUevent* events, CUdeviceptr flush, size_t flush_bytes,
               CUgraphExec* exec, char* err, size_t errlen) {
  *exec = nullptr;
  CUcontext ctx = nullptr;
  TRY(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  CUgraph g;
  TRY(cuGraphCreate(&g, 0), "cuGraphCreate");
  CUgraphNode prev = nullptr;
  CUresult r = CUDA_SUCCESS;
  auto mark = [&](unsigned slot) {   // after `prev`; it becomes `prev`
    CUgraphNode node;
    r = cuGraphAddEventRecordNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, events[slot]);
    if (r == CUDA_SUCCESS) prev = node;
  };
  const bool marks = events != nullptr;
  for (unsigned i = 0; i < n && r == CUDA_SUCCESS; ++i) {
    CUgraphNode node;
    if (flush_bytes && i > 0) {
      CUDA_MEMSET_NODE_PARAMS m = {};
      m.dst = flush; m.pitch = 0; m.value = 0x9E3779B9u ^ i; m.elementSize = 4;
      m.width = flush_bytes / 4; m.height = 1;
      r = cuGraphAddMemsetNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &m, ctx);
      if (r != CUDA_SUCCESS) break;
      prev = node;
    }
    if (marks && (flush_bytes || i == 0)) mark(flush_bytes ? 2 * i : 0);   // this copy's start
    if (r != CUDA_SUCCESS) break;
    r = cuGraphAddChildGraphNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, graphs[i]);
    if (r != CUDA_SUCCESS) break;
    prev = node;
    if (marks) mark(flush_bytes ? 2 * i + 1 : i + 1);   // its end (without a flush: the next copy's start too)
  }
  if (r != CUDA_SUCCESS) { cuGraphDestroy(g); return fail(err, errlen, "chaining replays", r); }
  r = cuGraphInstantiate(exec, g, 0);
  cuGraphDestroy(g);
  if (r != CUDA_SUCCESS) return fail(err, errlen, "instantiating the replay", r);
  TRY(cuGraphUpload(*exec, g_stream), "uploading the replay");
  TRY(cuStreamSynchronize(g_stream), "uploading the replay");
  return 0;
}

int plan_launch(CUgraphExec exec, CUstream stream) { return (int)cuGraphLaunch(exec, stream); }

void plan_destroy_exec(CUgraphExec exec) { cuGraphExecDestroy(exec); }

}  // extern "C"
