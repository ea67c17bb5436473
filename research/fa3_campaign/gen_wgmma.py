# emits the wgmma wrappers for m64nNk16 bf16->f32 (N = 64, 128, 256), SS and RS forms
out = []
for n in (64, 80, 128, 176, 192, 256):
    r = n // 2
    dl = ", ".join(f"%{i}" for i in range(r))
    ops = ", ".join(f'"+f"(d[{i}])' for i in range(r))
    out.append(f"""template <> __device__ __forceinline__ void wgmma_ss<{n}>(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {{
  asm volatile(
      "{{\\n .reg .pred p;\\n setp.ne.b32 p, %{r+2}, 0;\\n"
      " wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{dl}}}, %{r}, %{r+1}, p, 1, 1, 0, 0;\\n}}\\n"
      : {ops}
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}}
template <> __device__ __forceinline__ void wgmma_rs<{n}>(float* d, const uint32_t* a, uint64_t desc_b) {{
  asm volatile(
      "{{\\n .reg .pred p;\\n setp.ne.b32 p, %{r+5}, 0;\\n"
      " wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{dl}}}, {{%{r}, %{r+1}, %{r+2}, %{r+3}}}, %{r+4}, p, 1, 1, 1;\\n}}\\n"
      : {ops}
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}}""")
print("\n".join(out))
