"""`socratic task new NAME [--like softmax|rmsnorm|flash_attn_fwd]`: a task of your own in
minutes. It writes a complete task folder (task.toml with every key commented, baseline.cu,
reference.cu, README.md) that passes `socratic eval NAME --check-only` as written; then you
edit the three files. The contract it follows: docs/TASKS.md.

`--like softmax` (the default) is a small row-softmax template written here; `--like` a
bundled task copies that task under the new name.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from string import Template

from socratic.errors import InputError
from socratic.taskfile import NAME_RE, TASK_FILE

TEMPLATE = "softmax"


@dataclass(frozen=True)
class NewTask:
    folder: Path
    name: str
    like: str


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("task", help="make a task of your own (`socratic task new NAME`)",
                       description="Tasks: the kernel to optimize, its baseline, fp32 reference and "
                       "scenarios (docs/TASKS.md).")
    verbs = p.add_subparsers(dest="task_verb", metavar="VERB")
    new = verbs.add_parser("new", help="write a new task folder that passes --check-only at once",
                           description="Write NAME/ (task.toml, baseline.cu, reference.cu, README.md); "
                           "then `socratic eval NAME --check-only`.")
    new.add_argument("name", metavar="NAME", help="the task's folder (its last part names the task)")
    new.add_argument("--like", "--from", dest="like", default=TEMPLATE, metavar="TASK",
                     help=f"start from the {TEMPLATE} template (default) or a bundled task, e.g. rmsnorm")
    new.set_defaults(handler=run_new)
    p.set_defaults(handler=lambda args: _no_verb(p))


def _no_verb(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def run_new(args: argparse.Namespace) -> int:
    if not args.name.strip():   # Path("") is ".": the message named the current folder
        raise InputError(f"task name {args.name!r}: empty (give the new task's folder, e.g. "
                         "`socratic task new my-softmax`)")
    made = new_task(Path(args.name), args.like)
    print(f"wrote {made.folder}/ ({TASK_FILE}, baseline.cu, reference.cu, README.md) like {made.like}")
    where = shlex.quote(str(made.folder))   # pasted into a shell as printed
    print(f"next: socratic eval {where} --check-only    # builds it: no GPU needed")
    print(f"      socratic eval {where}                 # on a GPU: the baseline against itself")
    return 0


def c_name(name: str) -> str:
    """A C identifier from a task name (`my-softmax.v2` → `my_softmax_v2`)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return ident if not ident[0].isdigit() else f"t_{ident}"


def new_task(folder: Path, like: str = TEMPLATE) -> NewTask:
    """Write the task folder; InputError (one line) for a bad name, an unknown --like or a
    folder that already holds files."""
    name = folder.name
    if ".." in folder.parts:   # `a b/../x` would make `a b/` on the way to `x`
        raise InputError(f"{folder}: a task folder without '..' in its path (give the folder itself)")
    if not name or not NAME_RE.match(name):
        raise InputError(f"{folder}: a task name is letters, digits and _ . - (it names session folders)")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"{folder}: already exists and is not an empty folder (pick another name)")
    if like == TEMPLATE:
        files = _template_files(name)
    else:
        files = _copied_files(like, name)
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return NewTask(folder=folder, name=name, like=like)


def _copied_files(like: str, name: str) -> dict[str, str]:
    from socratic.resources import bundled_dir, bundled_tasks

    if like not in bundled_tasks():
        raise InputError(f"--like {like!r}: no such template or bundled task "
                         f"(choose {', '.join([TEMPLATE, *bundled_tasks()])})")
    src = bundled_dir("socratic.kernels") / like
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(src.iterdir())
             if p.is_file() and p.suffix in (".toml", ".cu", ".py", ".md")}
    # the name is the task's only identity; entry names and sources stay as they were
    files[TASK_FILE] = re.sub(r'(?m)^name = "[^"]*"', f'name = "{name}"', files[TASK_FILE], count=1)
    files.setdefault("README.md", _readme(name, f"a copy of the bundled task `{like}`"))
    if "compare.py" in files:  # comparisons import torch and FA3: keep them, say so
        files["README.md"] += ("\n`compare.py` times the comparison implementations named in "
                               "`[comparisons]`; delete both if your kernel has none.\n")
    return files


def _template_files(name: str) -> dict[str, str]:
    ident = c_name(name)
    values = {"name": name, "entry": f"{ident}_fwd", "ref": f"{ident}_fwd_ref"}
    return {TASK_FILE: Template(TASK_TOML).substitute(values),
            "baseline.cu": Template(BASELINE_CU).substitute(values),
            "reference.cu": Template(REFERENCE_CU).substitute(values),
            "README.md": _readme(name, "row softmax (the `socratic task new` template)")}


def _readme(name: str, what: str) -> str:
    return f"""# {name}

A socratic task: {what}. Edit these files, then check and time it:

- `task.toml`: the entry point, the C parameter struct, buffers, scenarios, goal (every
  key is commented; the whole contract is docs/TASKS.md in socratic's repository).
- `baseline.cu`: the kernel to beat (the campaign's starting candidate).
- `reference.cu`: the fp32 reference every scenario is checked against.

```sh
socratic eval {name} --check-only     # builds baseline, reference and candidate: no GPU needed
socratic eval {name} --list           # its scenario sets and ids
socratic eval {name}                  # on a GPU: the baseline timed against itself (~1.00x)
socratic run {name}                   # an agent campaign (or: socratic attach {name} --agent claude)
```
"""


# The template's three files. $name, $entry and $ref are filled in; everything else is
# literal (TOML and CUDA braces included).
TASK_TOML = '''# $name: row softmax, y[r, :] = softmax(x[r, :]), bf16 in and out, fp32 math.
# Written by `socratic task new`; the contract (every key, every value allowed) is
# docs/TASKS.md. Check it after each edit: `socratic eval $name --check-only`.
name = "$name"                # letters, digits, _ . - : it names session folders
description = "bf16 row softmax over the last dimension"
entry = "$entry"              # extern "C" int $entry(const SoftmaxParams*, cudaStream_t): 0 = ok
baseline = "baseline.cu"      # the kernel to beat, and a campaign's first candidate
default_set = "bench"         # the set `socratic eval` and a campaign's goal use
seeds = 3                     # input sets per scenario (fresh random inputs each)
id = "r{rows:k}-c{cols:k}"    # scenario ids: Python format fields over scenario values; :k writes 8192 as 8k

[build]
# {src} and {out}: the candidate and the library (quoted paths); {arch} (sm_80, sm_90a, ...)
# and {compute} (compute_80, compute_90a, ...): the GPU's, or `socratic eval --arch`
command = "nvcc -O3 -std=c++17 -gencode=arch={compute},code={arch} -shared -Xcompiler -fPIC -Xptxas -v {src} -o {out} -lcuda"
archs = ["sm_80+"]            # the GPUs it runs on: "sm_80+" (A100 and newer) or exact ones, ["sm_90a"]
arch_specific = false         # true: sm_90a / sm_100a builds on Hopper / Blackwell (wgmma, TMA multicast, ...)

[reference]                   # the fp32 reference, built with the same command
source = "reference.cu"
entry = "$ref"                # extern "C" int $ref(const SoftmaxParams*, const int* units, int n_units, cudaStream_t)
units = "rows"                # how many independent units the output splits into (one row each)
unit_flops = "5*cols"         # fp32 work per unit: above max_flops, a random subset of units is checked
max_flops = 4e11

[params]                      # the C struct, field by field, in order (natural C alignment)
# type: ptr (a buffer's device address), i32, u32, i64, u64, f32; value: an expression
fields = [
  { name = "x", type = "ptr", buffer = "x" },
  { name = "y", type = "ptr", buffer = "y" },
  { name = "rows", type = "i32", value = "rows" },
  { name = "cols", type = "i32", value = "cols" },
]

[[buffers]]                   # role: input | output | workspace; dtype: bf16 f16 f32 i32 u8
name = "x"
role = "input"
dtype = "bf16"
shape = ["rows", "cols"]      # expressions over the scenario's values
init = "normal"               # normal (mean, std) | uniform (same mean and std) | zeros
mean = 0.0
std = 2.0

[[buffers]]
name = "y"
role = "output"               # poisoned before each call: every element must be written
dtype = "bf16"
shape = ["rows", "cols"]
per_unit = "cols"             # elements of y per reference unit (a row)
floor = 1e-3                  # pass: max error vs fp32 <= max(2 x the baseline's, floor)

[metrics]                     # per scenario: TFLOP/s, TB/s and the time bound come from these
flops = "5*rows*cols"
bytes = "2*2*rows*cols"       # read x, write y (bf16)

[goal]                        # what a campaign must reach in every scenario of default_set
min_speedup = 1.5             # keep it out of the unchanged baseline's reach (it scores ~1.00x)
against = "baseline"          # or a comparison named in [comparisons]

[[distributions]]             # every correctness check covers each one
name = "normal"
note = "x ~ N(0, 2)"

[[distributions]]
name = "large_logits"
note = "x times 16: a softmax without its max subtraction overflows"
inputs = { x = { scale = 16.0 } }

[hidden]                      # per evaluation, scenarios drawn from this space (shown afterwards)
count = 2
max_flops = 4e10
[hidden.fields]
rows = { min = 1, max = 16384, scale = "log" }
cols = { min = 16, max = 8192, scale = "log" }

[sets.smoke]                  # a few quick shapes
scenarios = [
  { rows = 1, cols = 1000 },
  { rows = 64, cols = 4096 },
]

[sets.bench]                  # the shapes the goal is judged on
scenarios = [
  { rows = 16, cols = 4096 },
  { rows = 1024, cols = 1024 },
  { rows = 4096, cols = 4096 },
  { rows = 16384, cols = 2048 },
]

[sets.full]                   # edge cases: a grid is the cross product of its lists
grid = [
  { rows = [1, 3, 1000], cols = [1, 31, 1000, 8192] },
]
'''

BASELINE_CU = r'''// $name: the baseline (the kernel to beat). Row softmax, bf16 in and out, fp32 math:
//   y[r, c] = exp(x[r, c] - max_c x[r, :]) / sum_c exp(x[r, c] - max_c x[r, :])
//
// The ABI (task.toml [params] declares the same struct, field by field):
//   extern "C" int $entry(const SoftmaxParams* p, cudaStream_t stream);
// It only enqueues work on `stream` (no synchronisation, no cudaMalloc) and returns 0;
// any other value fails the scenario ("candidate returned error code N").
#include <cuda_bf16.h>
#include <cuda_runtime.h>

struct SoftmaxParams {
  const void* x;   // [rows, cols] bf16
  void* y;         // [rows, cols] bf16
  int rows, cols;
};

namespace {

constexpr int kThreads = 256;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float part[kThreads];
  part[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      part[threadIdx.x] = is_max ? fmaxf(part[threadIdx.x], part[threadIdx.x + s])
                                 : part[threadIdx.x] + part[threadIdx.x + s];
    __syncthreads();
  }
  float out = part[0];
  __syncthreads();
  return out;
}

__global__ void softmax_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int cols) {
  const __nv_bfloat16* xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, __bfloat162float(xr[c]));
  m = block_reduce(m, true);
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += kThreads) sum += __expf(__bfloat162float(xr[c]) - m);
  const float inv = 1.f / block_reduce(sum, false);
  for (int c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = __float2bfloat16(__expf(__bfloat162float(xr[c]) - m) * inv);
}

}  // namespace

extern "C" int $entry(const SoftmaxParams* p, cudaStream_t stream) {
  if (p == nullptr || p->rows < 1 || p->cols < 1) return 1;
  softmax_kernel<<<p->rows, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(p->x),
                                                   static_cast<__nv_bfloat16*>(p->y), p->cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
'''

REFERENCE_CU = r'''// $name: the fp32 reference. The same SoftmaxParams, except that every output pointer
// points at an fp32 buffer of the same shape. It computes only the listed units (rows):
//   extern "C" int $ref(const SoftmaxParams* p, const int* units, int n_units, cudaStream_t s);
// `units` is a sorted device array of n_units row indices; other rows stay untouched (the
// evaluator poisons them and counts the elements written: n_units * per_unit exactly).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

struct SoftmaxParams {
  const void* x;
  void* y;   // fp32 here
  int rows, cols;
};

namespace {

__global__ void softmax_ref_kernel(const __nv_bfloat16* __restrict__ x, float* __restrict__ y,
                                   const int* __restrict__ units, int cols) {
  // one thread per row: slow and plainly right
  const size_t row = units[blockIdx.x];
  if (threadIdx.x != 0) return;
  const __nv_bfloat16* xr = x + row * cols;
  float* yr = y + row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, __bfloat162float(xr[c]));
  double sum = 0.0;
  for (int c = 0; c < cols; ++c) sum += exp((double)__bfloat162float(xr[c]) - m);
  for (int c = 0; c < cols; ++c) yr[c] = (float)(exp((double)__bfloat162float(xr[c]) - m) / sum);
}

}  // namespace

extern "C" int $ref(const SoftmaxParams* p, const int* units, int n_units, cudaStream_t stream) {
  if (p == nullptr || p->rows < 1 || p->cols < 1 || n_units < 1 || units == nullptr) return 1;
  softmax_ref_kernel<<<n_units, 32, 0, stream>>>(static_cast<const __nv_bfloat16*>(p->x),
                                                 static_cast<float*>(p->y), units, p->cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
'''
